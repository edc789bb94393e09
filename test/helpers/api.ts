/**
 * A small HTTP client for tests, on node:http (fetch forbids setting Host, which selects realms).
 * Parameters are encoded as real clients do: query string for GET, a form body (urlencoded or
 * multipart) otherwise; non-string values are JSON-encoded inside the field.
 */
import http from 'node:http';
import https from 'node:https';
import type { Test } from 'tap';
import type { Fixture, FixtureUser } from './fixtures.js';

export type Params = Record<string, unknown>;
export type Encoding = 'form' | 'multipart' | 'query' | 'json';

export type ApiResponse = {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  text: string;
};

export type Who = string | FixtureUser | { email: string; api_key: string } | null;

export function encodeValue(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export function formEncode(params: Params): string {
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) sp.append(k, encodeValue(v));
  return sp.toString();
}

export function multipartEncode(params: Params, boundary: string): Buffer {
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${encodeValue(v)}\r\n`,
      ),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(parts);
}

export function basicAuth(email: string, apiKey: string): string {
  return 'Basic ' + Buffer.from(`${email}:${apiKey}`).toString('base64');
}

export type RawRequest = {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
};

/**
 * Connection options for every request of a client: TLS trust (`ca`, `checkServerIdentity`) for
 * an https:// base URL, the local address to connect from (`localAddress`).
 */
export type Transport = Pick<https.RequestOptions, 'ca' | 'checkServerIdentity' | 'localAddress'>;

/** http.request or https.request, as the URL says. */
export function requestFor(url: URL): typeof http.request {
  return url.protocol === 'https:' ? https.request : http.request;
}

export function rawRequest(
  baseUrl: string,
  req: RawRequest,
  transport: Transport = {},
): Promise<ApiResponse> {
  const url = new URL(req.path, baseUrl);
  return new Promise((resolve, reject) => {
    const r = requestFor(url)(
      url,
      {
        method: req.method,
        headers: { connection: 'close', ...req.headers },
        agent: false,
        ...transport,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: Record<string, unknown> = {};
          try {
            body = JSON.parse(text) as Record<string, unknown>;
          } catch {
            // not JSON; tests look at `text`
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
        });
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
}

/** A POST with `Accept-Encoding: gzip, deflate` (as Python's requests sends), read as bytes. */
export function gzipPost(
  base: string,
  user: { email: string; api_key: string },
  path: string,
  form: Record<string, string>,
): Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }> {
  const body = new URLSearchParams(form).toString();
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}/api/v1/${path}`,
      {
        method: 'POST',
        headers: {
          authorization: 'Basic ' + Buffer.from(`${user.email}:${user.api_key}`).toString('base64'),
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
          'accept-encoding': 'gzip, deflate',
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly fx: Fixture,
    /** Sent with every request (e.g. a `host` selecting another realm). */
    readonly defaultHeaders: Record<string, string> = {},
    readonly transport: Transport = {},
  ) {}

  private authHeader(who: Who): Record<string, string> {
    if (who === null) return {};
    const u = typeof who === 'string' ? this.fx.users[who] : who;
    if (!u) throw new Error(`no fixture user ${JSON.stringify(who)}`);
    return { authorization: basicAuth(u.email, u.api_key) };
  }

  request(
    method: string,
    who: Who,
    path: string,
    params: Params = {},
    opts: { encoding?: Encoding; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse> {
    const encoding = opts.encoding ?? (method === 'GET' ? 'query' : 'form');
    const headers: Record<string, string> = {
      ...this.defaultHeaders,
      ...this.authHeader(who),
      ...opts.headers,
    };
    let fullPath = path.startsWith('/') ? path : `/api/v1/${path}`;
    let body: Buffer | string | undefined;
    if (encoding === 'query') {
      const qs = formEncode(params);
      if (qs) fullPath += (fullPath.includes('?') ? '&' : '?') + qs;
    } else if (encoding === 'form') {
      body = formEncode(params);
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (encoding === 'multipart') {
      const boundary = '----confabtest' + Math.random().toString(16).slice(2);
      body = multipartEncode(params, boundary);
      headers['content-type'] = `multipart/form-data; boundary=${boundary}`;
    } else {
      body = JSON.stringify(params);
      headers['content-type'] = 'application/json';
    }
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    return rawRequest(
      this.baseUrl,
      { method, path: fullPath, headers, ...(body !== undefined ? { body } : {}) },
      this.transport,
    );
  }

  get(
    who: Who,
    path: string,
    params?: Params,
    opts?: { encoding?: Encoding; headers?: Record<string, string> },
  ) {
    return this.request('GET', who, path, params, opts);
  }
  post(
    who: Who,
    path: string,
    params?: Params,
    opts?: { encoding?: Encoding; headers?: Record<string, string> },
  ) {
    return this.request('POST', who, path, params, opts);
  }
  patch(
    who: Who,
    path: string,
    params?: Params,
    opts?: { encoding?: Encoding; headers?: Record<string, string> },
  ) {
    return this.request('PATCH', who, path, params, opts);
  }
  delete(
    who: Who,
    path: string,
    params?: Params,
    opts?: { encoding?: Encoding; headers?: Record<string, string> },
  ) {
    return this.request('DELETE', who, path, params, opts);
  }
}

export function assertSuccess(
  t: Test,
  res: ApiResponse,
  message = 'request succeeds',
): Record<string, unknown> {
  t.equal(res.status, 200, `${message}: HTTP 200`, { body: res.text.slice(0, 1000) });
  t.equal(res.body.result, 'success', `${message}: result success`);
  t.equal(res.body.msg, '', `${message}: empty msg`);
  return res.body;
}

export function assertError(
  t: Test,
  res: ApiResponse,
  msg: string | RegExp,
  opts: { status?: number; code?: string } = {},
): void {
  const status = opts.status ?? 400;
  t.equal(res.status, status, `HTTP ${status}`, { body: res.text.slice(0, 1000) });
  t.equal(res.body.result, 'error', 'result error');
  if (typeof msg === 'string') t.equal(res.body.msg, msg, 'error message');
  else t.match(res.body.msg, msg, 'error message');
  t.equal(res.body.code, opts.code ?? 'BAD_REQUEST', 'error code');
}
