/**
 * The user's own API key (the web app's Settings → Account; reference: views/users.py
 * regenerate_api_key, and views/auth.py json_fetch_api_key for reading it, which is
 * POST /json/fetch_api_key in session.ts):
 *
 *   POST /users/me/api_key/regenerate   a new API key, answered as `api_key`; the old one stops
 *                                       working at once, and the user's other browser sessions end
 *                                       (the one that asked stays logged in). People only: a bot's
 *                                       key is renewed by its owner (POST /bots/{id}/api_key/regenerate).
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { HumanUsersOnlyError } from '../lib/errors.js';

export const regenerateOwnApiKey = endpoint({
  method: 'POST',
  path: '/api/v1/users/me/api_key/regenerate',
  params: z.object({}),
  handle: async (ctx) => {
    const { realm, user } = ctx;
    if (user.is_bot) throw new HumanUsersOnlyError();
    const session = ctx.req.browser?.session;
    return realm.ask('user.api_key.regenerate', {
      user_id: user.id,
      ...(session ? { keep_session: session.tokenHash } : {}),
    });
  },
});
