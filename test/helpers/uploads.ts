/**
 * Upload helpers for tests: multipart bodies with file parts, downloads as bytes, a streaming
 * uploader that stops when the server answers (to show a refusal comes before the whole file), and
 * a direct message inserted into the store (sending belongs to the message area).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import {
  basicAuth,
  encodeValue,
  requestFor,
  type ApiClient,
  type ApiResponse,
  type Params,
  type Who,
} from './api.js';

export type FilePart = {
  filename: string;
  data: Buffer | string;
  /** Multipart field name (the reference's clients use `file` or `filename`). */
  field?: string;
  /** The part's Content-Type; none when omitted. */
  contentType?: string;
};

function escapeQuoted(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

export function multipartBody(
  files: readonly FilePart[],
  fields: Params = {},
  boundary = '----confabupload' + crypto.randomBytes(8).toString('hex'),
): { body: Buffer; contentType: string } {
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${encodeValue(v)}\r\n`,
      ),
    );
  }
  for (const f of files) {
    const head =
      `--${boundary}\r\nContent-Disposition: form-data; name="${f.field ?? 'file'}"; ` +
      `filename="${escapeQuoted(f.filename)}"\r\n` +
      (f.contentType !== undefined ? `Content-Type: ${f.contentType}\r\n` : '') +
      '\r\n';
    parts.push(Buffer.from(head), Buffer.from(f.data), Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** POST /api/v1/user_uploads with these file parts (and fields). */
export function upload(
  api: ApiClient,
  who: Who,
  files: readonly FilePart[],
  fields: Params = {},
  headers: Record<string, string> = {},
): Promise<ApiResponse> {
  const { body, contentType } = multipartBody(files, fields);
  return request(api, 'POST', who, '/api/v1/user_uploads', body, {
    'content-type': contentType,
    ...headers,
  }).then(asApiResponse);
}

/** POST /realm/emoji/{name}: a custom emoji from one image. */
export function addEmoji(
  api: ApiClient,
  who: Who,
  name: string,
  image: FilePart,
): Promise<ApiResponse> {
  const { body, contentType } = multipartBody([image], {});
  return request(api, 'POST', who, `/api/v1/realm/emoji/${encodeURIComponent(name)}`, body, {
    'content-type': contentType,
  }).then(asApiResponse);
}

export type RawResponse = { status: number; headers: http.IncomingHttpHeaders; body: Buffer };

function authOf(api: ApiClient, who: Who): Record<string, string> {
  if (who === null) return {};
  const u = typeof who === 'string' ? api.fx.users[who] : who;
  if (!u) throw new Error(`no fixture user ${JSON.stringify(who)}`);
  return { authorization: basicAuth(u.email, u.api_key) };
}

/** One request whose response body is kept as bytes. `path` is sent exactly as given. */
export function request(
  api: ApiClient,
  method: string,
  who: Who,
  path: string,
  body?: Buffer,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const url = new URL(api.baseUrl);
  return new Promise((resolve, reject) => {
    const r = requestFor(url)(
      url,
      {
        method,
        path,
        agent: false,
        ...api.transport,
        headers: {
          connection: 'close',
          ...api.defaultHeaders,
          ...authOf(api, who),
          ...(body ? { 'content-length': String(body.length) } : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        );
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(body);
  });
}

/** GET of a file route (`/user_uploads/...`), the path percent-encoded as a browser would. */
export function download(
  api: ApiClient,
  who: Who,
  url: string,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  return request(api, 'GET', who, encodeURI(url), undefined, headers);
}

export function asApiResponse(r: RawResponse): ApiResponse {
  const text = r.body.toString('utf8');
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON
  }
  return { status: r.status, headers: r.headers, body, text };
}

/**
 * Uploads a file of `fileBytes` bytes, written in chunks as the socket takes them (no declared
 * Content-Length unless `declareLength`), and stops writing as soon as the server answers.
 * Resolves with the answer and how many bytes of the body had been handed to the socket by then.
 */
export function streamingUpload(
  api: ApiClient,
  who: Who,
  fileBytes: number,
  opts: { declareLength?: boolean; chunkBytes?: number } = {},
): Promise<{ response: ApiResponse; bytesWritten: number; totalBytes: number }> {
  const boundary = '----confabstream' + crypto.randomBytes(8).toString('hex');
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const totalBytes = head.length + fileBytes + tail.length;
  const chunk = Buffer.alloc(opts.chunkBytes ?? 64 * 1024, 0x61);
  return new Promise((resolve, reject) => {
    let bytesWritten = 0;
    let answered = false;
    const r = http.request(new URL(api.baseUrl), {
      method: 'POST',
      path: '/api/v1/user_uploads',
      agent: false,
      headers: {
        connection: 'close',
        ...authOf(api, who),
        'content-type': `multipart/form-data; boundary=${boundary}`,
        ...(opts.declareLength ? { 'content-length': String(totalBytes) } : {}),
      },
    });
    r.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          response: asApiResponse({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
          bytesWritten,
          totalBytes,
        }),
      );
      res.on('error', reject);
    });
    // Writing into a connection the server closed after answering fails; the answer is what counts.
    r.on('error', (err) => {
      if (!answered) reject(err);
    });
    const write = (buf: Buffer): boolean => {
      bytesWritten += buf.length;
      return r.write(buf);
    };
    let sentFile = 0;
    const pump = () => {
      while (!answered) {
        if (sentFile === 0 && bytesWritten === 0 && !write(head)) return;
        if (sentFile >= fileBytes) {
          write(tail);
          r.end();
          return;
        }
        const n = Math.min(chunk.length, fileBytes - sentFile);
        sentFile += n;
        if (!write(n === chunk.length ? chunk : chunk.subarray(0, n))) return;
      }
    };
    r.on('drain', pump);
    pump();
  });
}
