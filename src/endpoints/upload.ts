/**
 * Uploading and serving files. Reference: views/upload.py (upload_file_backend, serve_file,
 * serve_file_url_backend, serve_local_file_unauthed), lib/attachments.py
 * (validate_attachment_request).
 *
 * - POST /api/v1/user_uploads: one multipart file, streamed to DATA_DIR/tmp by the HTTP layer
 *   (refused with 413 as soon as it passes MAX_FILE_UPLOAD_SIZE), moved to
 *   DATA_DIR/uploads/<path_id>, then recorded by the realm actor.
 * - GET /user_uploads/<path_id> (outside /api/v1): the file, streamed, to those allowed to see it
 *   (HTTP Basic with the API's credentials, or the browser's session cookie when no Authorization
 *   header is sent; spectators for web-public channels). Anything that
 *   does not name a file the caller may see — unknown, another realm's, not theirs to see, a
 *   path-traversal attempt — is the same plain 404.
 * - GET /user_uploads/thumbnail/<path_id>/<format>: a thumbnail of an uploaded image
 *   (`840x560.webp`, `840x560-anim.webp`), to those who may see the upload; one not made yet is
 *   made first (reference: serve_file with thumbnail_format).
 * - GET /api/v1/user_uploads/{realm_id_str}/{filename}: a temporary URL for the file, served
 *   without credentials at /user_uploads/temporary/<token>/<file name> until it expires.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { FileBody, RawBody } from '../http/respond.js';
import { JsonableError, UnauthorizedError } from '../lib/errors.js';
import { signUploadToken, verifyUploadToken } from '../lib/upload-tokens.js';
import {
  clientFileName,
  contentDisposition,
  INLINE_MIME_TYPES,
  isWellFormedPathId,
  pathIdFileName,
  uploadContentType,
} from '../lib/uploads.js';
import {
  formatName,
  imageFacts,
  parseFormatName,
  sameFormat,
  wantedFormats,
  type StoredThumbnail,
  type ThumbnailFormat,
} from '../lib/thumbnail-formats.js';
import { probeImage } from '../media/thumbnailer.js';
import { validateAttachmentRequest } from '../queries/attachments.js';
import type { AttachmentRow } from '../storage/attachments.js';
import type { UploadFiles } from '../storage/upload-files.js';

/** What the file routes answer for anything that is not a file the caller may see. */
function fileNotFound(): RawBody {
  return new RawBody('<p>File not found.</p>', 'text/html; charset=utf-8', {}, 404);
}

/**
 * The file with the headers that keep it from acting as a page of this origin: a type the
 * browser may not second-guess, inline only for the safe types, and a policy that runs nothing.
 */
async function serveAttachment(
  uploads: UploadFiles,
  row: AttachmentRow,
): Promise<FileBody | RawBody> {
  const opened = await uploads.open(row.path_id);
  if (!opened) return fileNotFound();
  const inline = INLINE_MIME_TYPES.has(row.content_type);
  return new FileBody(opened.file, opened.size, row.content_type, {
    'Content-Disposition': contentDisposition(row.file_name, inline),
    'Cache-Control': 'private, immutable',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy':
      "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self'; object-src 'self'",
  });
}

/** POST /api/v1/user_uploads */
export const uploadFile = endpoint({
  method: 'POST',
  path: '/api/v1/user_uploads',
  params: z.object({}),
  acceptsFiles: { maxFiles: 1 },
  handle: async ({ server, req, realm, user }) => {
    const named = req.files
      .map((f) => ({ file: f, name: clientFileName(f.filename) }))
      .filter((f): f is { file: typeof f.file; name: string } => f.name !== null);
    if (named.length === 0 && req.extraFiles === 0) {
      throw new JsonableError('You must specify a file to upload');
    }
    if (named.length !== 1 || req.extraFiles > 0) {
      throw new JsonableError('You may only upload one file at a time');
    }
    const { file, name } = named[0]!;
    const pathId = server.uploads.newPathId(realm.id, name);
    await server.uploads.place(file.tmpPath, pathId);
    const contentType = uploadContentType(file.mimeType, name);
    let created;
    try {
      // Read as an image (header only, off the event loop) before it is recorded, as the
      // reference does; its thumbnails are made in the background afterwards.
      const stored = server.uploads.filePath(pathId);
      const image = stored ? await probeImage(stored, contentType) : null;
      created = await realm.ask('attachment.create', {
        owner_id: user.id,
        path_id: pathId,
        file_name: name,
        content_type: contentType,
        size: file.size,
        ...(image ? { image } : {}),
      });
    } catch (err) {
      await server.uploads.remove(pathId);
      throw err;
    }
    if (created.image_id !== null) server.thumbnailer.enqueue(created.image_id);
    const url = `/user_uploads/${pathId}`;
    return { uri: url, url, filename: name };
  },
});

/** GET /user_uploads/<path_id> */
export const serveFile = endpoint({
  method: 'GET',
  path: '/user_uploads/*path_id',
  auth: 'optional',
  sessionAuth: 'also',
  rateLimitBucket: null,
  params: z.object({ path_id: z.string() }),
  handle: async ({ server, realm, user }, p) => {
    const access =
      realm && isWellFormedPathId(p.path_id)
        ? validateAttachmentRequest(server.store, realm.view, user?.id ?? null, p.path_id)
        : null;
    if (access?.allowed) return serveAttachment(server.uploads, access.attachment);
    // Without credentials the answer is the same whether or not the file exists: log in.
    if (!user) throw new UnauthorizedError();
    return fileNotFound();
  },
});

/** GET /user_uploads/thumbnail/<path_id>/<format> */
export const serveThumbnail = endpoint({
  method: 'GET',
  path: '/user_uploads/thumbnail/*rest',
  auth: 'optional',
  sessionAuth: 'also',
  rateLimitBucket: null,
  params: z.object({ rest: z.string() }),
  handle: async ({ server, realm, user }, p) => {
    const slash = p.rest.lastIndexOf('/');
    const pathId = slash > 0 ? p.rest.slice(0, slash) : '';
    const requested = parseFormatName(p.rest.slice(slash + 1));
    const access =
      realm && requested && isWellFormedPathId(pathId)
        ? validateAttachmentRequest(server.store, realm.view, user?.id ?? null, pathId)
        : null;
    if (!access?.allowed) {
      if (!user) throw new UnauthorizedError();
      return fileNotFound();
    }
    let row = server.store.imageAttachments.byPathId(pathId);
    if (!row || !requested) return fileNotFound();
    let facts = imageFacts(row);
    const potential = wantedFormats(facts);
    let format: ThumbnailFormat = requested;
    if (!potential.some((f) => sameFormat(f, requested))) {
      // Not a current format: one made earlier, else the closest one made.
      if (facts.thumbnails.length === 0) return fileNotFound();
      if (!facts.thumbnails.some((t) => sameFormat(t, requested)))
        format = closestFormat(requested, facts.thumbnails);
    } else if (!facts.thumbnails.some((t) => sameFormat(t, requested))) {
      await server.thumbnailer.ensure(row.id);
      row = server.store.imageAttachments.byPathId(pathId);
      if (!row) return fileNotFound();
      facts = imageFacts(row);
      if (!facts.thumbnails.some((t) => sameFormat(t, requested))) return fileNotFound();
    }
    const opened = await server.uploads.open(pathId, formatName(format));
    if (!opened) return fileNotFound();
    return new FileBody(opened.file, opened.size, 'image/webp', {
      'Content-Disposition': contentDisposition(formatName(format), true),
      'Cache-Control': 'private, immutable',
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; img-src 'self'",
    });
  },
});

/** The made thumbnail nearest a requested format (same animation, then size, then bytes). */
function closestFormat(
  requested: ThumbnailFormat,
  made: readonly StoredThumbnail[],
): ThumbnailFormat {
  const grade = (f: StoredThumbnail) => [
    f.animated !== requested.animated ? 1 : 0,
    f.extension !== requested.extension ? 1 : 0,
    Math.abs(requested.max_width - f.max_width),
    f.byte_size,
  ];
  return [...made].sort((a, b) => {
    const ga = grade(a);
    const gb = grade(b);
    for (let i = 0; i < ga.length; i++) if (ga[i] !== gb[i]) return ga[i]! - gb[i]!;
    return 0;
  })[0]!;
}

/** GET /api/v1/user_uploads/{realm_id_str}/{filename}: a URL that works without credentials. */
export const getFileTemporaryUrl = endpoint({
  method: 'GET',
  path: '/api/v1/user_uploads/:realm_id_str/*filename',
  params: z.object({ realm_id_str: z.string(), filename: z.string() }),
  handle: async ({ server, realm, user }, p) => {
    const pathId = `${p.realm_id_str}/${p.filename}`;
    const access = isWellFormedPathId(pathId)
      ? validateAttachmentRequest(server.store, realm.view, user.id, pathId)
      : null;
    if (!access?.allowed || !(await server.uploads.exists(pathId))) {
      throw new JsonableError('File not found.', { code: 'NOT_FOUND', status: 404 });
    }
    const token = signUploadToken(
      server.temporaryUrlKey,
      pathId,
      server.config.clock() + server.config.uploadUrlLifetimeMs,
    );
    return {
      url: `/user_uploads/temporary/${token}/${encodeURIComponent(pathIdFileName(pathId))}`,
    };
  },
});

/** GET /user_uploads/temporary/<token>/<file name>: no credentials; the token is the permission. */
export const serveTemporaryFile = endpoint({
  method: 'GET',
  path: '/user_uploads/temporary/:token/:filename',
  auth: 'none',
  params: z.object({ token: z.string(), filename: z.string() }),
  handle: async ({ server }, p) => {
    const pathId = verifyUploadToken(server.temporaryUrlKey, p.token, server.config.clock());
    if (pathId === null) throw new JsonableError('Invalid token');
    if (pathIdFileName(pathId) !== p.filename) throw new JsonableError('Invalid filename');
    const row = server.store.attachments.byPathId(pathId);
    if (!row) return fileNotFound();
    return serveAttachment(server.uploads, row);
  },
});
