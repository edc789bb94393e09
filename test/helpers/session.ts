/**
 * A browser's session against the real server, without a browser: POST /json/login, then
 * requests that carry the session cookie, the CSRF token and the page's own Origin, as the web
 * app's fetches do (src/http/sessions.ts). For tests of the server's side of the browser app.
 */
import { formEncode, rawRequest, type ApiResponse, type Params } from './api.js';

export type LoginAnswer = { response: ApiResponse; session: BrowserSession | null };

/** The `confab_session` value a Set-Cookie header sets ('' when it clears it, null: none). */
export function sessionCookieValue(res: ApiResponse): string | null {
  const raw = res.headers['set-cookie'];
  const lines = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  for (const line of lines) {
    const m = /^confab_session=([^;]*)/.exec(line);
    if (m) return m[1]!;
  }
  return null;
}

export class BrowserSession {
  constructor(
    readonly baseUrl: string,
    /** The session cookie's value. */
    public token: string,
    readonly csrfToken: string,
    readonly userId: number,
    /** Sent with every request (e.g. a `host` selecting another realm). */
    readonly headers: Record<string, string> = {},
  ) {}

  /** Logs in as a browser would (the page's own origin); the session, if it succeeded. */
  static async login(
    baseUrl: string,
    email: string,
    password: string,
    headers: Record<string, string> = {},
  ): Promise<LoginAnswer> {
    const body = formEncode({ username: email, password });
    const response = await rawRequest(baseUrl, {
      method: 'POST',
      path: '/json/login',
      headers: {
        origin: new URL(baseUrl).origin,
        'sec-fetch-site': 'same-origin',
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': String(Buffer.byteLength(body)),
        ...headers,
      },
      body,
    });
    const token = sessionCookieValue(response);
    if (response.status !== 200 || !token) return { response, session: null };
    const b = response.body as { csrf_token: string; user_id: number };
    return {
      response,
      session: new BrowserSession(baseUrl, token, b.csrf_token, b.user_id, headers),
    };
  }

  /** Like login, for a test that expects it to succeed. */
  static async must(
    baseUrl: string,
    user: { email: string; password: string },
    headers: Record<string, string> = {},
  ): Promise<BrowserSession> {
    const { response, session } = await BrowserSession.login(
      baseUrl,
      user.email,
      user.password,
      headers,
    );
    if (!session) throw new Error(`login failed: ${response.status} ${response.text}`);
    return session;
  }

  /**
   * A request as the page makes it: `path` under /json/ unless it starts with '/'; GET parameters
   * in the query string, others as a form body; `opts.headers` over the browser's own.
   */
  request(
    method: string,
    path: string,
    params: Params = {},
    opts: { headers?: Record<string, string>; csrf?: boolean } = {},
  ): Promise<ApiResponse> {
    let fullPath = path.startsWith('/') ? path : `/json/${path}`;
    const headers: Record<string, string> = {
      cookie: `confab_session=${this.token}`,
      origin: new URL(this.baseUrl).origin,
      'sec-fetch-site': 'same-origin',
      ...this.headers,
    };
    if (method !== 'GET' && opts.csrf !== false) headers['x-csrf-token'] = this.csrfToken;
    let body: string | undefined;
    if (method === 'GET') {
      const qs = formEncode(params);
      if (qs) fullPath += (fullPath.includes('?') ? '&' : '?') + qs;
    } else {
      body = formEncode(params);
      headers['content-type'] = 'application/x-www-form-urlencoded';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    Object.assign(headers, opts.headers);
    return rawRequest(this.baseUrl, {
      method,
      path: fullPath,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
  }

  get(path: string, params?: Params, opts?: { headers?: Record<string, string> }) {
    return this.request('GET', path, params, opts);
  }
  post(path: string, params?: Params, opts?: { headers?: Record<string, string>; csrf?: boolean }) {
    return this.request('POST', path, params, opts);
  }
  patch(
    path: string,
    params?: Params,
    opts?: { headers?: Record<string, string>; csrf?: boolean },
  ) {
    return this.request('PATCH', path, params, opts);
  }
  delete(
    path: string,
    params?: Params,
    opts?: { headers?: Record<string, string>; csrf?: boolean },
  ) {
    return this.request('DELETE', path, params, opts);
  }
}
