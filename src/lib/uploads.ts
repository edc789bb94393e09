/**
 * Pure rules of uploaded files: how a client's file name becomes a storable one, what path ids
 * look like, what content type a file is served with and whether a browser may show it inline.
 * Reference: lib/upload/base.py (sanitize_name, INLINE_MIME_TYPES), lib/upload/__init__.py
 * (get_file_info), lib/upload/local.py (generate_message_upload_path), views/upload.py
 * (the Content-Disposition header).
 */

/** Python's str.isspace() set (what `\s` and strip() mean in the reference's sanitize_name). */
const PY_SPACE =
  '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
/** Anything but Python's `\w` (letters, numbers, underscore), whitespace, `.` and `-`. */
const NOT_ALLOWED = new RegExp(`[^\\p{L}\\p{N}_${PY_SPACE}.-]`, 'gu');
const EDGE_SPACE = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, 'gu');
const DASH_RUNS = new RegExp(`[-${PY_SPACE}]+`, 'gu');

/**
 * The reference's sanitize_name: safe for a Linux file system, object storage and a URL. NFKC,
 * then only Unicode letters and numbers, `_`, `.`, `-` survive; runs of dashes and whitespace
 * become one `-`; case is kept; an empty, `.` or `..` result becomes `uploaded-file`.
 */
export function sanitizeName(value: string): string {
  let v = value.normalize('NFKC').replace(NOT_ALLOWED, '').replace(EDGE_SPACE, '');
  v = v.replace(DASH_RUNS, '-');
  if (v === '' || v === '.' || v === '..') return 'uploaded-file';
  return v;
}

/** Characters Python's str.isprintable() refuses: controls, format, unassigned, separators but ' '. */
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]|(?! )\p{Zs}/gu;

/**
 * The name of an uploaded file as the reference's multipart parser (Django) hands it on: the
 * part after the last `/` or `\`, without non-printable characters; null (as if no file were
 * sent) when that leaves nothing, `.` or `..`. Then unquoted, as the reference's get_file_info.
 */
export function clientFileName(raw: string): string | null {
  const base = raw.slice(Math.max(raw.lastIndexOf('/'), raw.lastIndexOf('\\')) + 1);
  const printable = base.replace(NON_PRINTABLE, '');
  if (printable === '' || printable === '.' || printable === '..') return null;
  return unquote(printable);
}

/** Longest file name (bytes of UTF-8) common file systems store. */
export const MAX_STORED_NAME_BYTES = 255;

/**
 * A sanitized name cut to fit in one path segment of the file system (255 bytes), keeping a short
 * extension. The reference stores names of any length (on S3); a local disk cannot.
 */
export function fitStoredName(name: string): string {
  if (Buffer.byteLength(name) <= MAX_STORED_NAME_BYTES) return name;
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 && Buffer.byteLength(name.slice(dot)) <= 16 ? name.slice(dot) : '';
  const budget = MAX_STORED_NAME_BYTES - Buffer.byteLength(ext);
  let stem = '';
  let used = 0;
  for (const ch of name.slice(0, name.length - ext.length)) {
    const n = Buffer.byteLength(ch);
    if (used + n > budget) break;
    stem += ch;
    used += n;
  }
  return stem + ext;
}

/**
 * Python's urllib.parse.unquote: `%XX` runs decoded as UTF-8 (invalid bytes become U+FFFD),
 * everything else (a lone `%`, `+`) kept. The reference unquotes uploaded file names.
 */
export function unquote(s: string): string {
  if (!s.includes('%')) return s;
  return s.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    const bytes = Buffer.from(run.replace(/%/g, ''), 'hex');
    return new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(bytes);
  });
}

/** Files a browser may show in place; anything else is served as a download. */
export const INLINE_MIME_TYPES: ReadonlySet<string> = new Set([
  'application/pdf',
  'image/gif',
  'image/jpeg',
  'image/png',
  'image/webp',
  // Never add types that can run script in the server's origin (text/html, image/svg+xml,
  // application/xhtml+xml, text/xml, ...).
]);

/** Extension → content type, for files the client sent without a usable type (Python's mimetypes). */
const TYPES_BY_EXTENSION: Readonly<Record<string, string>> = {
  txt: 'text/plain',
  text: 'text/plain',
  log: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  js: 'text/javascript',
  mjs: 'text/javascript',
  json: 'application/json',
  xml: 'text/xml',
  py: 'text/x-python',
  c: 'text/x-c',
  h: 'text/x-c',
  sh: 'application/x-sh',
  pdf: 'application/pdf',
  png: 'image/png',
  apng: 'image/apng',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  jpe: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  bmp: 'image/bmp',
  ico: 'image/vnd.microsoft.icon',
  svg: 'image/svg+xml',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  heic: 'image/heic',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  aac: 'audio/aac',
  wav: 'audio/x-wav',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  opus: 'audio/opus',
  flac: 'audio/flac',
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
  mkv: 'video/x-matroska',
  avi: 'video/x-msvideo',
  zip: 'application/zip',
  gz: 'application/gzip',
  tgz: 'application/gzip',
  tar: 'application/x-tar',
  bz2: 'application/x-bzip2',
  xz: 'application/x-xz',
  '7z': 'application/x-7z-compressed',
  rar: 'application/vnd.rar',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation',
  rtf: 'application/rtf',
};

export function guessContentType(fileName: string): string | null {
  const dot = fileName.lastIndexOf('.');
  if (dot === -1) return null;
  return TYPES_BY_EXTENSION[fileName.slice(dot + 1).toLowerCase()] ?? null;
}

const MIME_SHAPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;

/**
 * The content type an upload is stored (and served) with: the client's, unless it is missing or
 * only a multipart default (`application/octet-stream`, or `text/plain`, which is also what a part
 * without a Content-Type header reports) and the name says better; then the name's; else
 * `application/octet-stream`.
 */
export function uploadContentType(declared: string, fileName: string): string {
  const d = declared.trim().toLowerCase();
  const guessed = guessContentType(fileName);
  if (d === '' || !MIME_SHAPE.test(d)) return guessed ?? 'application/octet-stream';
  if ((d === 'application/octet-stream' || d === 'text/plain') && guessed) return guessed;
  return d;
}

/**
 * `inline` or `attachment`, with the file name as RFC 6266 / RFC 8187 want it: a quoted
 * `filename` for printable ASCII, otherwise a percent-encoded `filename*` (plus an ASCII fallback).
 */
export function contentDisposition(fileName: string, inline: boolean): string {
  const kind = inline ? 'inline' : 'attachment';
  if (/^[\x20-\x7e]*$/.test(fileName)) {
    return `${kind}; filename="${fileName.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  }
  const fallback = fileName.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(fileName).replace(
    /['()*]/g,
    (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase(),
  );
  return `${kind}; filename="${fallback}"; filename*=utf-8''${encoded}`;
}

/**
 * Whether `pathId` has the shape of a stored path id (`<realm id>/<segments...>`): no empty, `.`
 * or `..` segment, no backslash, no control character. Anything else cannot name an upload and is
 * answered 404 without a look-up.
 */
export function isWellFormedPathId(pathId: string): boolean {
  if (pathId.length === 0 || pathId.length > 1024) return false;
  for (let i = 0; i < pathId.length; i++) {
    const c = pathId.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || c === 0x5c /* backslash */) return false;
  }
  const segments = pathId.split('/');
  if (segments.length < 2 || !/^[0-9]+$/.test(segments[0]!)) return false;
  return segments.every((s) => s !== '' && s !== '.' && s !== '..');
}

/** The file-name part of a path id (its last segment). */
export function pathIdFileName(pathId: string): string {
  return pathId.slice(pathId.lastIndexOf('/') + 1);
}
