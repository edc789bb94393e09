/**
 * Custom emoji: GET /realm/emoji, POST /realm/emoji/{emoji_name} (a multipart image upload),
 * DELETE /realm/emoji/{emoji_name} (deactivates), and serving the images at their
 * `source_url`. Reference: views/realm_emoji.py, lib/upload (emoji), zproject/urls.py.
 *
 * The image is checked (PNG, GIF, JPEG or WebP, by its bytes; at most 5 MiB) and moved to
 * DATA_DIR/emoji/<realm id>/<random name> (ServerContext.uploads; in a cluster also into the
 * uploads bucket, from which any node fetches it) before the realm actor records it; if the actor
 * refuses (a name taken meanwhile, a permission), the file is removed again. Images are served as
 * they were uploaded (no resizing).
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { RawBody } from '../http/respond.js';
import { GuestNotAllowedError, JsonableError, ResourceNotFoundError } from '../lib/errors.js';
import { IMAGE_CONTENT_TYPES, imageKind } from '../lib/image-type.js';
import { ownNulRule, str } from '../lib/params.js';
import { checkEmojiName, MAX_EMOJI_FILE_SIZE_MIB, normalizeEmojiName } from '../lib/realm-emoji.js';
import { Role } from '../lib/roles.js';
import { realmEmojiDict, realmEmojiRows } from '../queries/realm-emoji.js';

/** GET /api/v1/realm/emoji — every custom emoji of the realm (deactivated ones too), by id. */
export const listRealmEmoji = endpoint({
  method: 'GET',
  path: '/api/v1/realm/emoji',
  params: z.object({}),
  handle: ({ server, realm }) => ({
    emoji: realmEmojiDict(realmEmojiRows(server.store, realm.view)),
  }),
});

/** POST /api/v1/realm/emoji/{emoji_name} — adds a custom emoji from one uploaded image. */
export const uploadRealmEmoji = endpoint({
  method: 'POST',
  path: '/api/v1/realm/emoji/:emoji_name',
  params: z.object({ emoji_name: ownNulRule(str()) }), // the name's own check or lookup
  acceptsFiles: { maxFiles: 2 },
  handle: async ({ server, realm, user, req }, p) => {
    const name = normalizeEmojiName(p.emoji_name);
    checkEmojiName(name);
    if (user.role === Role.GUEST) throw new GuestNotAllowedError();
    if (req.files.length !== 1) throw new JsonableError('You must upload exactly one file.');
    const file = req.files[0]!;
    if (file.size > MAX_EMOJI_FILE_SIZE_MIB * 1024 * 1024) {
      throw new JsonableError(
        `Uploaded file is larger than the allowed limit of ${MAX_EMOJI_FILE_SIZE_MIB} MiB`,
      );
    }
    const kind = imageKind(await fs.readFile(file.tmpPath));
    if (!kind) throw new JsonableError('Invalid image format', { code: 'BAD_IMAGE' });
    const fileName = `${crypto.randomBytes(8).toString('hex')}.${kind.ext}`;
    // In a cluster, also into the uploads bucket, so that every node serves it.
    await server.uploads.placeEmoji(file.tmpPath, realm.id, fileName);
    try {
      await realm.ask('realm_emoji.add', {
        user_id: user.id,
        name,
        file_name: fileName,
        is_animated: kind.animated,
      });
    } catch (err) {
      await server.uploads.removeEmoji(realm.id, fileName);
      throw err;
    }
    return {};
  },
});

/** DELETE /api/v1/realm/emoji/{emoji_name} — deactivates an emoji (its author or an admin). */
export const deactivateRealmEmoji = endpoint({
  method: 'DELETE',
  path: '/api/v1/realm/emoji/:emoji_name',
  params: z.object({ emoji_name: ownNulRule(str()) }), // the name's own check or lookup
  handle: async ({ realm, user }, p) => {
    await realm.ask('realm_emoji.remove', { user_id: user.id, name: p.emoji_name });
    return {};
  },
});

const FILE_NAME = /^[0-9a-f]{16}\.(png|gif|jpg|webp)$/;

/**
 * GET /user_avatars/{realm_id}/emoji/images/{file_name} — a custom emoji's image (public, like
 * the reference's emoji; names are unguessable). Anything else answers 404.
 */
export const serveRealmEmoji = endpoint({
  method: 'GET',
  path: '/user_avatars/:realm_id/emoji/images/:file_name',
  auth: 'none',
  params: z.object({ realm_id: str(), file_name: str() }),
  handle: async ({ server }, p) => {
    const m = FILE_NAME.exec(p.file_name);
    if (!m || !/^[0-9]{1,15}$/.test(p.realm_id)) throw new ResourceNotFoundError();
    const body = await server.uploads.readEmoji(Number(p.realm_id), p.file_name);
    if (!body) throw new ResourceNotFoundError();
    return new RawBody(body, IMAGE_CONTENT_TYPES[m[1]!]!, {
      'Cache-Control': 'public, max-age=31536000, immutable',
    });
  },
});
