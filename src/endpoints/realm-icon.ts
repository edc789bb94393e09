/**
 * The organization's icon: POST /realm/icon (one multipart image), DELETE /realm/icon (back to
 * the default), and serving uploaded icons. Reference: views/realm_icon.py, lib/upload
 * (upload_realm_icon_image), actions/realm_icon.py.
 *
 * Administrators only. The image (PNG, GIF, JPEG or WebP by its bytes, at most 5 MiB, as the
 * reference's MAX_ICON_FILE_SIZE_MIB) is normalized as the reference does its icons and avatars:
 * turned upright by its EXIF orientation, cropped to a centred square and resized to 100×100 PNG
 * (sharp, ../media/sharp.ts; the first frame of an animation). It is stored under a fresh name
 * (ServerContext.uploads: DATA_DIR/realm-icons/<realm id>/; in a cluster also in the uploads
 * bucket, from which any node fetches it) before the realm actor records it; if the actor refuses,
 * the file is removed again, and the icon it replaces is removed once the change is committed.
 * The upload as it came is not kept (the reference's icon.original: nothing of the reference
 * serves or reads it; docs/api.md).
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { RawBody } from '../http/respond.js';
import {
  JsonableError,
  OrganizationAdministratorRequiredError,
  ResourceNotFoundError,
} from '../lib/errors.js';
import { imageKind } from '../lib/image-type.js';
import { str } from '../lib/params.js';
import { REALM_ICON_FILE_NAME } from '../lib/realm-icons.js';
import { Role } from '../lib/roles.js';
import { IMAGE_BOMB_TOTAL_PIXELS } from '../lib/thumbnail-formats.js';
import { realmIconUrl, uploadedRealmIconPath } from '../lib/urls.js';
import { loadSharp } from '../media/sharp.js';

/** The reference's MAX_ICON_FILE_SIZE_MIB. */
export const MAX_ICON_FILE_SIZE_MIB = 5;

/** The side of a stored icon, in pixels (the reference's DEFAULT_AVATAR_SIZE). */
export const REALM_ICON_SIZE = 100;

/** The image as a REALM_ICON_SIZE square PNG; a 400 when it cannot be decoded. */
async function normalizeIcon(data: Buffer): Promise<Buffer> {
  const sharp = await loadSharp();
  try {
    return await sharp(data, { limitInputPixels: IMAGE_BOMB_TOTAL_PIXELS })
      .rotate()
      .resize(REALM_ICON_SIZE, REALM_ICON_SIZE, { fit: 'cover' })
      .png()
      .toBuffer();
  } catch {
    throw new JsonableError('Could not decode image; did you upload an image file?', {
      code: 'BAD_IMAGE',
    });
  }
}

/** POST /api/v1/realm/icon — sets the organization's icon from one uploaded image. */
export const uploadRealmIcon = endpoint({
  method: 'POST',
  path: '/api/v1/realm/icon',
  params: z.object({}),
  acceptsFiles: { maxFiles: 2 },
  handle: async ({ server, realm, user, req }) => {
    if (user.role > Role.ADMINISTRATOR) throw new OrganizationAdministratorRequiredError();
    if (req.files.length !== 1) throw new JsonableError('You must upload exactly one icon.');
    const file = req.files[0]!;
    if (file.size > MAX_ICON_FILE_SIZE_MIB * 1024 * 1024) {
      throw new JsonableError(
        `Uploaded file is larger than the allowed limit of ${MAX_ICON_FILE_SIZE_MIB} MiB`,
      );
    }
    const data = await fs.readFile(file.tmpPath);
    if (!imageKind(data)) throw new JsonableError('Invalid image format', { code: 'BAD_IMAGE' });
    const png = await normalizeIcon(data);
    const fileName = `icon-${crypto.randomBytes(8).toString('hex')}.png`;
    await server.uploads.writeRealmIcon(realm.id, fileName, png);
    let replaced: string;
    try {
      ({ replaced_file: replaced } = await realm.ask('realm.icon.set', {
        acting_user_id: user.id,
        icon_file: fileName,
      }));
    } catch (err) {
      await server.uploads.removeRealmIcon(realm.id, fileName);
      throw err;
    }
    if (replaced !== '') await server.uploads.removeRealmIcon(realm.id, replaced);
    return { icon_url: uploadedRealmIconPath(realm.id, fileName) };
  },
});

/** DELETE /api/v1/realm/icon — the organization's icon back to the default. */
export const deleteRealmIcon = endpoint({
  method: 'DELETE',
  path: '/api/v1/realm/icon',
  params: z.object({}),
  handle: async ({ server, realm, user }) => {
    if (user.role > Role.ADMINISTRATOR) throw new OrganizationAdministratorRequiredError();
    const { replaced_file: replaced } = await realm.ask('realm.icon.set', {
      acting_user_id: user.id,
      icon_file: null,
    });
    if (replaced !== '') await server.uploads.removeRealmIcon(realm.id, replaced);
    const settings = { ...realm.view.settings, icon_source: 'G' as const, icon_file: '' };
    return { icon_url: realmIconUrl(realm.view.row, settings) };
  },
});

/**
 * GET /user_avatars/{realm_id}/realm/{file_name} — an uploaded realm icon (public, as the
 * reference's; a new upload has a new name, so each is cached for good). Anything else: 404.
 */
export const serveRealmIcon = endpoint({
  method: 'GET',
  path: '/user_avatars/:realm_id/realm/:file_name',
  auth: 'none',
  params: z.object({ realm_id: str(), file_name: str() }),
  handle: async ({ server }, p) => {
    if (!REALM_ICON_FILE_NAME.test(p.file_name) || !/^[0-9]{1,15}$/.test(p.realm_id)) {
      throw new ResourceNotFoundError();
    }
    const body = await server.uploads.readRealmIcon(Number(p.realm_id), p.file_name);
    if (!body) throw new ResourceNotFoundError();
    return new RawBody(body, 'image/png', {
      'Cache-Control': 'public, max-age=31536000, immutable',
      'X-Content-Type-Options': 'nosniff',
    });
  },
});
