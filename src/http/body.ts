/**
 * Request bodies. Clients of this API send POST, PATCH and DELETE parameters as
 * application/x-www-form-urlencoded or multipart/form-data (and some send JSON objects); files come
 * only as multipart. Bodies are limited before they are buffered whole: a declared Content-Length
 * over the limit is refused at once, and a body that grows past it while streaming is cut off.
 * Multipart is parsed as it streams (busboy); file parts go straight to disk when the endpoint
 * accepts files, and are discarded otherwise.
 */
import busboy from 'busboy';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { JsonableError } from '../lib/errors.js';
import { MAX_JSON_DEPTH, parseJson } from '../lib/json.js';
import { MAX_PARAMETERS } from '../lib/limits.js';
import type { RawParams } from '../lib/params.js';
import type { UploadedFile } from './request.js';

/**
 * Form fields (application/x-www-form-urlencoded, or a query string) into `into`; the last of a
 * repeated name wins. Text without escapes (no `%`, no `+`) and only printable ASCII, as most
 * query strings and many bodies are (`queue_id=...&last_event_id=12`), is split here: for it the
 * WHATWG parser (URLSearchParams) does exactly this (strip one leading `?`, split on `&`, skip
 * empty parts, split each at its first `=`), at a few times the cost of making its list.
 * Anything else goes to URLSearchParams (test/unit/parsers-property.test.ts holds the two equal).
 */
export function parseUrlEncoded(
  text: string,
  into: RawParams = Object.create(null) as RawParams,
): RawParams {
  if (text.length === 0) return into;
  let count = 0;
  if (!PLAIN_FORM.test(text)) {
    for (const [k, v] of new URLSearchParams(text)) {
      if (++count > MAX_PARAMETERS) throw tooManyParameters();
      into[k] = v;
    }
    return into;
  }
  let start = text.charCodeAt(0) === 0x3f ? 1 : 0; // '?'
  // The next '=' at or after `start` (-1: none left), looked for again only once passed: each
  // character is read once, where looking from every part's start read the rest of the text for
  // each part without '=' (`a&a&a&...`: quadratic, a 4 MiB body held the event loop for minutes).
  let eq = -2;
  while (start <= text.length) {
    let end = text.indexOf('&', start);
    if (end === -1) end = text.length;
    if (end > start) {
      if (++count > MAX_PARAMETERS) throw tooManyParameters();
      if (eq !== -1 && eq < start) eq = text.indexOf('=', start);
      if (eq === -1 || eq > end) into[text.slice(start, end)] = '';
      else into[text.slice(start, eq)] = text.slice(eq + 1, end);
    }
    start = end + 1;
  }
  return into;
}

/** The 400 for a query string or a body of more than MAX_PARAMETERS parameters. */
export function tooManyParameters(): JsonableError {
  return new JsonableError(`Too many parameters: more than ${MAX_PARAMETERS}`);
}

/** Printable ASCII without `%` and `+`: form text that decodes to itself. */
const PLAIN_FORM = /^[!-$&-*,-~]*$/;

export type BodySink = {
  /** Feeds one chunk (already copied out of uWS's transient buffer). */
  write(chunk: Buffer): void;
  /** Called after the last chunk; resolves with the parsed fields. */
  end(): Promise<RawParams>;
  /** Whether the sink wants the producer to pause (disk slower than the network). */
  readonly congested: boolean;
  onDrain(fn: () => void): void;
  /**
   * A failure known before the body ends (a file over the size limit): the producer answers it at
   * once instead of reading the rest.
   */
  readonly failure: Error | null;
  /** Removes any partial files after a failure or an abort. */
  discard(): void;
};

export type FileSinkOptions = {
  /** Directory for partially received files. */
  tmpDir: string;
  maxFileBytes: number;
  maxFiles: number;
  files: UploadedFile[];
  /** Called for each file part beyond `maxFiles` (drained, not stored). */
  onExtraFile: () => void;
};

/** A received file part's name under the temporary directory (16 random bytes, hex). */
const PART_FILE_NAME = /^[0-9a-f]{32}$/;

/**
 * Removes the received file parts a process that ended mid-request left in `tmpDir` (called at
 * start, under the data directory's lock, before any request can be writing one). Returns how many.
 */
export function removeStrayUploadParts(tmpDir: string): number {
  let names: string[];
  try {
    names = fs.readdirSync(tmpDir);
  } catch {
    return 0; // no temporary directory yet
  }
  let removed = 0;
  for (const name of names) {
    if (!PART_FILE_NAME.test(name)) continue;
    fs.rmSync(path.join(tmpDir, name), { force: true });
    removed++;
  }
  return removed;
}

/** Picks the parser for a Content-Type. Unknown types are refused (415). */
export function createBodySink(contentType: string, fileOpts: FileSinkOptions | null): BodySink {
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  if (type === 'multipart/form-data') return multipartSink(contentType, fileOpts);
  if (type === 'application/json') return bufferedSink(parseJsonBody);
  if (type === 'application/x-www-form-urlencoded' || type === '' || type === 'text/plain') {
    return bufferedSink((buf) => parseUrlEncoded(buf.toString('utf8')));
  }
  throw new JsonableError(`Unsupported content type: ${type}`, {
    code: 'UNSUPPORTED_MEDIA_TYPE',
    status: 415,
  });
}

/** The whole body, kept as it came (no parameters from it): see Endpoint.rawBody. */
export function rawBodySink(keep: (body: Buffer) => void): BodySink {
  return bufferedSink((buf) => {
    keep(buf);
    return Object.create(null) as RawParams;
  });
}

function bufferedSink(parse: (buf: Buffer) => RawParams): BodySink {
  const chunks: Buffer[] = [];
  return {
    write: (chunk) => void chunks.push(chunk),
    end: () => {
      try {
        return Promise.resolve(parse(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    },
    congested: false,
    onDrain: () => {},
    failure: null,
    discard: () => {},
  };
}

/** A JSON object body: string values as they are, other values re-encoded as JSON fields. */
function parseJsonBody(buf: Buffer): RawParams {
  let value: unknown = null;
  try {
    // One level more than a parameter: the object around the fields.
    value = parseJson(buf.toString('utf8'), MAX_JSON_DEPTH + 1);
  } catch {
    // refused below, as a value that is not an object
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new JsonableError('Malformed JSON', { code: 'INVALID_JSON' });
  }
  const out = Object.create(null) as RawParams;
  if (Object.keys(value).length > MAX_PARAMETERS) throw tooManyParameters();
  for (const [k, v] of Object.entries(value))
    out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  return out;
}

/** The 413 for a file (or an upload's body) over the server's upload size limit. */
export function fileTooLarge(maxFileBytes: number): JsonableError {
  return new JsonableError(
    `File is larger than this server's configured maximum upload size (${Math.floor(
      maxFileBytes / (1024 * 1024),
    )} MiB).`,
    { status: 413, code: 'REQUEST_TOO_LARGE' },
  );
}

function multipartSink(contentType: string, fileOpts: FileSinkOptions | null): BodySink {
  const fields = Object.create(null) as RawParams;
  const partial = new Set<string>();
  let failure: Error | null = null;
  let drainFns: (() => void)[] = [];
  let congested = false;
  /** No longer congested: whoever paused the request reads on (and sees a failure, if any). */
  const drained = () => {
    congested = false;
    const fns = drainFns;
    drainFns = [];
    for (const fn of fns) fn();
  };
  let pendingWrites = 0;
  let finishedParsing = false;
  let settle: (() => void) | null = null;

  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers: { 'content-type': contentType },
      limits: {
        fieldSize: 16 * 1024 * 1024,
        fields: MAX_PARAMETERS,
        files: fileOpts?.maxFiles ?? 0,
        // busboy reports reaching its limit; a file of exactly maxFileBytes is allowed.
        fileSize: fileOpts ? fileOpts.maxFileBytes + 1 : 0,
      },
      defParamCharset: 'utf8',
    });
  } catch {
    throw new JsonableError('Malformed multipart body');
  }

  const maybeSettle = () => {
    if (finishedParsing && pendingWrites === 0 && settle) settle();
  };

  // A form without fields sent as no bytes at all (zulip-js's FormData with nothing appended):
  // busboy calls it an unexpected end; it is an empty form.
  let received = 0;

  bb.on('field', (name, value) => {
    fields[name] = value;
  });
  // More fields than MAX_PARAMETERS: busboy drops the rest; the request is refused.
  bb.on('fieldsLimit', () => {
    failure ??= tooManyParameters();
  });
  let discarded = false;
  const open = new Set<fs.WriteStream>();

  bb.on('file', (field, stream, info) => {
    // A body that ends inside a file part makes busboy fail the part's stream as well as itself:
    // without a listener that error would end the process. The form's own 'error' answers it.
    stream.on('error', (err: Error) => {
      failure ??= new JsonableError(`Malformed multipart body: ${err.message}`);
    });
    if (!fileOpts) {
      stream.resume(); // this endpoint takes no files: drain and forget
      return;
    }
    try {
      fs.mkdirSync(fileOpts.tmpDir, { recursive: true, mode: 0o700 });
    } catch (err) {
      // No place for received files (a full disk, a directory made unwritable): the request is
      // answered with the failure (507 for a full disk, else 500), the rest read and dropped.
      failure ??= err instanceof Error ? err : new Error(String(err));
      stream.resume();
      return;
    }
    const tmpPath = path.join(fileOpts.tmpDir, crypto.randomBytes(16).toString('hex'));
    partial.add(tmpPath);
    pendingWrites++;
    const out = fs.createWriteStream(tmpPath, { mode: 0o600 }); // kept as the upload: private
    open.add(out);
    let size = 0;
    let truncated = false;
    let written = false;
    // Once per file: when its bytes are all on disk, or when writing them failed (a full disk).
    const fileDone = () => {
      if (written) return;
      written = true;
      pendingWrites--;
      maybeSettle();
    };
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (!out.write(chunk)) {
        congested = true;
        out.once('drain', drained);
      }
    });
    stream.on('limit', () => {
      // Over the limit: known now, answered by the producer at once (the rest is never read). A
      // producer paused for the disk reads on, to see it.
      truncated = true;
      failure ??= fileTooLarge(fileOpts.maxFileBytes);
      drained();
    });
    stream.on('end', () => {
      out.end(() => {
        // A file stream that ends does not emit 'drain' any more: whoever waits for it reads on.
        if (congested) drained();
        if (!truncated && !failure) {
          fileOpts.files.push({
            field,
            filename: info.filename ?? '',
            mimeType: info.mimeType,
            tmpPath,
            size,
          });
        }
        fileDone();
      });
    });
    // The body ended inside this part: the part never ends, so its file is closed here (and
    // removed with the other partial files when the failure is answered).
    stream.on('error', () => out.end(fileDone));
    // A file discarded while its stream was still opening would be created after the removal.
    out.on('close', () => {
      open.delete(out);
      if (discarded) fs.rm(tmpPath, { force: true }, () => {});
    });
    out.on('error', (err) => {
      // A write that failed (a full disk): the rest of the body is read and dropped, and the
      // request answered with the failure (src/http/router.ts).
      failure ??= err;
      stream.resume();
      fileDone();
      drained();
    });
  });
  bb.on('filesLimit', () => fileOpts?.onExtraFile());
  bb.on('error', (err: Error) => {
    if (received > 0) failure ??= new JsonableError(`Malformed multipart body: ${err.message}`);
    finishedParsing = true;
    maybeSettle();
  });
  bb.on('close', () => {
    finishedParsing = true;
    maybeSettle();
  });

  const discard = () => {
    discarded = true;
    for (const out of open) out.destroy(); // its 'close' removes the file
    for (const p of partial) fs.rm(p, { force: true }, () => {});
  };

  return {
    write: (chunk) => {
      received += chunk.length;
      if (!failure) bb.write(chunk);
    },
    end: () =>
      new Promise<RawParams>((resolve, reject) => {
        settle = () => {
          settle = null;
          if (failure) {
            discard();
            reject(failure);
          } else {
            resolve(fields);
          }
        };
        if (failure) {
          // Known already (streams cut short may never end): answer now.
          settle();
          return;
        }
        bb.end();
        maybeSettle();
      }),
    get congested() {
      return congested;
    },
    onDrain: (fn) => void drainFns.push(fn),
    get failure() {
      return failure;
    },
    discard,
  };
}
