/**
 * POST /users/me/status and GET /users/{user_id}/status. Reference: views/user_status.py; the
 * rules are in src/mutations/user-status.ts, the emoji checks are the reactions' ones.
 */
import { z } from 'zod';
import { endpoint, requestDialect, type AuthedCtx } from '../http/endpoint.js';
import { JsonableError, NoSuchUserError } from '../lib/errors.js';
import { bool, ownNulRule, pathInt, reactionType, str } from '../lib/params.js';
import { userStatusOf } from '../queries/user-status.js';

/** The longest status text, in characters. */
export const MAX_STATUS_TEXT_LENGTH = 60;

/** POST /api/v1/users/me/status — changes only what is passed. */
export const updateUserStatus = endpoint({
  method: 'POST',
  path: '/api/v1/users/me/status',
  params: z.object({
    away: bool().optional(),
    status_text: str({ trim: true, max: MAX_STATUS_TEXT_LENGTH }).optional(),
    // The emoji's own checks answer a NUL with the reference's words ("Emoji '…' does not exist").
    emoji_name: ownNulRule(str()).optional(),
    emoji_code: ownNulRule(str()).optional(),
    reaction_type: reactionType().optional(),
  }),
  handle: async ({ realm, user }: AuthedCtx, p) => {
    if (p.away === undefined && p.status_text === undefined && p.emoji_name === undefined)
      throw new JsonableError('Client did not pass any new values.');
    if (
      p.emoji_name === undefined &&
      (p.emoji_code !== undefined || p.reaction_type !== undefined)
    ) {
      throw new JsonableError(
        'Client must pass emoji_name if they pass either emoji_code or reaction_type.',
      );
    }
    return realm.ask('user_status.update', {
      user_id: user.id,
      away: p.away,
      status_text: p.status_text,
      emoji_name: p.emoji_name,
      emoji_code: p.emoji_code,
      reaction_type: p.reaction_type,
    });
  },
});

/** GET /api/v1/users/{user_id}/status — `{}` when the user has set nothing. */
export const getUserStatus = endpoint({
  method: 'GET',
  path: '/api/v1/users/:user_id/status',
  params: z.object({ user_id: pathInt() }),
  handle: (ctx: AuthedCtx, p) => {
    const { server, realm } = ctx;
    const target = realm.view.user(p.user_id);
    if (!target) throw new NoSuchUserError();
    return { status: userStatusOf(server.store, realm.view, target.id, requestDialect(ctx)) };
  },
});
