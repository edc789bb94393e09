/**
 * Files clients fetch outside the JSON API:
 *
 *   GET /static/generated/emoji/emoji_api.<hash>.json — the emoji data file register's
 *       `server_emoji_data_url` names (src/lib/emoji): no authentication, cached for good (the
 *       hash in the name changes with the content).
 *   GET /avatar/{user_id_or_email}[/medium] — a redirect to the user's avatar, the fallback the
 *       mobile app uses for users whose `avatar_url` it was not sent. Reference:
 *       views/users.py avatar: an address works as well as an id (an unknown one gets the
 *       external host's identicon for it); the query string is passed on; spectators of a realm
 *       with public access may use ids only.
 */
import crypto from 'node:crypto';
import { z } from 'zod';
import { endpoint, type HandlerCtx } from '../http/endpoint.js';
import { RawBody } from '../http/respond.js';
import { UnauthorizedError } from '../lib/errors.js';
import { emojiDataFile } from '../lib/emoji/index.js';
import { str } from '../lib/params.js';
import { realmHost } from '../lib/urls.js';
import { defaultAvatarUrl, externalAvatarUrl } from '../lib/avatars.js';
import { avatarUrl, userByAddress } from '../queries/users.js';

export const emojiData = endpoint({
  method: 'GET',
  path: '/static/generated/emoji/:file_name',
  auth: 'none',
  params: z.object({ file_name: str() }),
  handle: (_ctx, p) => {
    const file = emojiDataFile();
    if (p.file_name !== `emoji_api.${file.hash}.json`) {
      return new RawBody('Not Found\n', 'text/plain; charset=utf-8', {}, 404);
    }
    return new RawBody(file.json, 'application/json', {
      'Cache-Control': 'public, max-age=31536000, immutable',
    });
  },
});

function avatarRedirect(ctx: HandlerCtx, who: string, medium: boolean): RawBody {
  const { realm, user, server, req } = ctx;
  if (!realm) throw new UnauthorizedError();
  const isId = /^[0-9]{1,15}$/.test(who);
  // Without credentials: only in realms open to spectators, and only by id.
  if (!user && (!realm.view.settings.enable_spectator_access || !isId)) {
    throw new UnauthorizedError();
  }
  const view = realm.view;
  const target = isId
    ? view.user(Number(who))
    : userByAddress(view, user?.id ?? -1, who, realmHost(server.config, view.row.string_id));
  let url = target
    ? avatarUrl(view, target, false, medium)!
    : !view.settings.external_avatars
      ? defaultAvatarUrl(1)
      : externalAvatarUrl(
          crypto.createHash('md5').update(who.trim().toLowerCase()).digest('hex'),
          1,
          medium,
        );
  if (req.query !== '') url += (url.includes('?') ? '&' : '?') + req.query;
  return new RawBody('', 'text/plain; charset=utf-8', { Location: url }, 302);
}

export const avatar = endpoint({
  method: 'GET',
  path: '/avatar/:who',
  auth: 'optional',
  sessionAuth: 'also',
  rateLimitBucket: null,
  params: z.object({ who: str({ min: 1 }) }),
  handle: (ctx, p) => avatarRedirect(ctx, p.who, false),
});

export const avatarMedium = endpoint({
  method: 'GET',
  path: '/avatar/:who/medium',
  auth: 'optional',
  sessionAuth: 'also',
  rateLimitBucket: null,
  params: z.object({ who: str({ min: 1 }) }),
  handle: (ctx, p) => avatarRedirect(ctx, p.who, true),
});
