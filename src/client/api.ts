/**
 * Confab's typed API client: every call the web app makes, usable from Node 20 and the browser
 * (no DOM, no Node module: `fetch` is injected or global). Two ways to authenticate:
 *
 * - `basic`: e-mail and API key (bots, scripts, tests), on `/api/v1/...`;
 * - `session`: the browser's session cookie, on the `/json/...` mirror of the API, each unsafe
 *   request carrying the session's CSRF token (`X-CSRF-Token`); the page never holds an API key.
 *
 * Parameters travel as the API expects (docs/api.md): the query string for GET, a urlencoded
 * form body otherwise, arrays and objects JSON-encoded inside a field. An error answer becomes an
 * `ApiError` with the server's `code` and `msg`; a failure to get an answer at all, a
 * `NetworkError` (the caller retries those, never ApiErrors other than 429 and 5xx).
 */
import type {
  Message,
  MessagesResponse,
  NarrowTerm,
  PresenceAnswer,
  RegisterResponse,
  User,
} from './types.js';

/** What the client needs of a `Response`. */
export type ResponseLike = {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
};

export type RequestInitLike = {
  method: string;
  headers: Record<string, string>;
  body?: string | FormData;
  signal?: AbortSignal;
  credentials?: 'same-origin' | 'include' | 'omit';
  keepalive?: boolean;
};

export type FetchLike = (url: string, init: RequestInitLike) => Promise<ResponseLike>;

/**
 * An upload with progress (the browser passes one built on XMLHttpRequest, which reports upload
 * progress where fetch does not). Without one, uploads go through `fetch`.
 */
export type UploadTransport = (req: {
  url: string;
  headers: Record<string, string>;
  body: FormData;
  onProgress?: (loaded: number, total: number) => void;
  signal?: AbortSignal;
}) => Promise<{ status: number; text: string; retryAfter: string | null }>;

export type Auth =
  { kind: 'basic'; email: string; apiKey: string } | { kind: 'session'; csrfToken: string };

export type ClientOptions = {
  /** The realm's URL, e.g. `http://127.0.0.1:9991` (no trailing slash needed). */
  baseUrl: string;
  auth: Auth;
  fetch?: FetchLike;
  upload?: UploadTransport;
  /** Sent as User-Agent where the runtime allows it (not in browsers). */
  userAgent?: string;
};

export type Params = Record<string, unknown>;

export type ApiErrorBody = { result: 'error'; msg: string; code: string; [key: string]: unknown };

/** The server answered with an error. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly body: Record<string, unknown>;
  /** Seconds to wait, from `Retry-After` or the body's `retry-after` (429 answers). */
  readonly retryAfter: number | null;
  constructor(status: number, body: Record<string, unknown>, retryAfter: number | null) {
    const msg = typeof body.msg === 'string' && body.msg !== '' ? body.msg : `HTTP ${status}`;
    super(msg);
    this.name = 'ApiError';
    this.status = status;
    this.code = typeof body.code === 'string' ? body.code : 'BAD_REQUEST';
    this.body = body;
    this.retryAfter = retryAfter;
  }
  /** Worth trying again later: the server was busy, restarting or failed. */
  get transient(): boolean {
    return this.status === 429 || this.status >= 500;
  }
}

/** No answer: the connection failed, was cut, or the request was aborted. */
export class NetworkError extends Error {
  readonly aborted: boolean;
  constructor(message: string, aborted = false) {
    super(message);
    this.name = 'NetworkError';
    this.aborted = aborted;
  }
}

export type LoginResult = { user_id: number; email: string; csrf_token: string };

export type SendMessage =
  | { type: 'stream'; to: number; topic: string; content: string }
  | { type: 'direct'; to: number[]; content: string };

export type SendOptions = {
  queue_id?: string;
  local_id?: string;
  read_by_sender?: boolean;
  signal?: AbortSignal;
};

export type GetMessages = {
  anchor: number | 'newest' | 'oldest' | 'first_unread';
  num_before: number;
  num_after: number;
  narrow: NarrowTerm[];
  include_anchor?: boolean;
};

export type EmojiData = { code_to_names: Record<string, string[]> };

/** `encodeURIComponent`-free base64 of UTF-8 text, in Node and in browsers. */
export function base64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

function encodeValue(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export function encodeParams(params: Params): string {
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) sp.append(k, encodeValue(v));
  return sp.toString();
}

function retryAfterOf(header: string | null, body: Record<string, unknown>): number | null {
  const fromBody = body['retry-after'];
  if (typeof fromBody === 'number') return fromBody;
  if (header !== null && /^[0-9.]+$/.test(header)) return Number(header);
  return null;
}

function parseBody(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export class ConfabClient {
  readonly baseUrl: string;
  readonly auth: Auth;
  private readonly fetchFn: FetchLike;
  private readonly uploadFn: UploadTransport | undefined;
  private readonly userAgent: string | undefined;

  constructor(opts: ClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.auth = opts.auth;
    const f: FetchLike | undefined = opts.fetch ?? globalThis.fetch;
    if (!f) throw new Error('ConfabClient: no fetch (pass one in the options)');
    // Called as a plain function: a browser's fetch refuses to run with the client as `this`.
    this.fetchFn = (url, init) => f(url, init);
    this.uploadFn = opts.upload;
    this.userAgent = opts.userAgent;
  }

  /** `/api/v1` for API-key clients, `/json` for the browser's session. */
  get prefix(): string {
    return this.auth.kind === 'session' ? '/json' : '/api/v1';
  }

  /** The absolute URL of an API path (`/messages` → `…/api/v1/messages`). */
  url(path: string): string {
    return this.baseUrl + this.prefix + path;
  }

  /** Headers that authenticate a request of this method. */
  authHeaders(method: string): Record<string, string> {
    const h: Record<string, string> = {};
    if (this.auth.kind === 'basic') {
      h.Authorization = 'Basic ' + base64(`${this.auth.email}:${this.auth.apiKey}`);
    } else if (UNSAFE.has(method)) {
      h['X-CSRF-Token'] = this.auth.csrfToken;
    }
    if (this.userAgent !== undefined) h['User-Agent'] = this.userAgent;
    return h;
  }

  /** One API call; resolves with the success body, rejects with ApiError or NetworkError. */
  async request<T = Record<string, unknown>>(
    method: string,
    path: string,
    params: Params = {},
    opts: { signal?: AbortSignal; keepalive?: boolean } = {},
  ): Promise<T> {
    const encoded = encodeParams(params);
    let url = this.url(path);
    const headers = this.authHeaders(method);
    let body: string | undefined;
    if (method === 'GET' || method === 'HEAD') {
      if (encoded !== '') url += (url.includes('?') ? '&' : '?') + encoded;
    } else if (encoded !== '') {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = encoded;
    }
    return this.send<T>(url, {
      method,
      headers,
      body,
      signal: opts.signal,
      keepalive: opts.keepalive,
      credentials: 'same-origin',
    });
  }

  private async send<T>(url: string, init: RequestInitLike): Promise<T> {
    let res: ResponseLike;
    let text: string;
    try {
      res = await this.fetchFn(url, init);
      text = await res.text();
    } catch (e) {
      const aborted = init.signal?.aborted === true;
      throw new NetworkError(e instanceof Error ? e.message : String(e), aborted);
    }
    return this.answer<T>(res.status, text, res.headers.get('Retry-After'));
  }

  private answer<T>(status: number, text: string, retryAfter: string | null): T {
    const body = parseBody(text);
    if (status >= 200 && status < 300 && body.result !== 'error') return body as T;
    throw new ApiError(status, body, retryAfterOf(retryAfter, body));
  }

  // ---- Sessions (browser) ----------------------------------------------------------------

  /** A client before any session: the login form's and the page's first question. */
  private static anonymous(baseUrl: string, fetchFn: FetchLike | undefined): ConfabClient {
    return new ConfabClient({ baseUrl, auth: { kind: 'session', csrfToken: '' }, fetch: fetchFn });
  }

  /** `POST /json/login`: e-mail and password; the server sets the session cookie. */
  static login(
    baseUrl: string,
    email: string,
    password: string,
    fetchFn?: FetchLike,
  ): Promise<LoginResult> {
    return ConfabClient.anonymous(baseUrl, fetchFn).request<LoginResult>('POST', '/login', {
      username: email,
      password,
    });
  }

  /** `GET /json/session`: the live session's user and CSRF token (ApiError 401 without one). */
  static session(baseUrl: string, fetchFn?: FetchLike): Promise<LoginResult> {
    return ConfabClient.anonymous(baseUrl, fetchFn).request<LoginResult>('GET', '/session');
  }

  /**
   * `GET /json/session?optional=true`: the live session's user and CSRF token, or null without
   * one (answered 200, so that a browser logs no error for a page that is not logged in yet).
   */
  static async sessionIfAny(baseUrl: string, fetchFn?: FetchLike): Promise<LoginResult | null> {
    const r = await ConfabClient.anonymous(baseUrl, fetchFn).request<
      LoginResult | { user_id: null }
    >('GET', '/session', { optional: true });
    return r.user_id === null ? null : r;
  }

  /** `GET /server_settings` (no authentication). */
  static async serverSettings(
    baseUrl: string,
    fetchFn: FetchLike = (url, init) => globalThis.fetch(url, init),
  ): Promise<Record<string, unknown>> {
    const res = await fetchFn(baseUrl.replace(/\/+$/, '') + '/api/v1/server_settings', {
      method: 'GET',
      headers: {},
    });
    const body = parseBody(await res.text());
    if (res.status !== 200) throw new ApiError(res.status, body, null);
    return body;
  }

  logout(): Promise<unknown> {
    return this.request('POST', '/logout');
  }

  // ---- Events ------------------------------------------------------------------------------

  register(params: Params): Promise<RegisterResponse> {
    return this.request<RegisterResponse>('POST', '/register', params);
  }

  getEvents(
    queueId: string,
    lastEventId: number,
    opts: { dontBlock?: boolean; signal?: AbortSignal } = {},
  ): Promise<{ events: unknown[]; queue_id?: string }> {
    return this.request(
      'GET',
      '/events',
      {
        queue_id: queueId,
        last_event_id: lastEventId,
        dont_block: opts.dontBlock ? true : undefined,
      },
      { signal: opts.signal },
    );
  }

  deleteQueue(queueId: string, opts: { keepalive?: boolean } = {}): Promise<unknown> {
    return this.request('DELETE', '/events', { queue_id: queueId }, opts);
  }

  /** The event WebSocket's URL for a queue (ws: or wss: as the base URL's scheme). */
  socketUrl(queueId: string, lastEventId: number): string {
    const u = new URL(this.url('/events/socket'));
    u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
    u.searchParams.set('queue_id', queueId);
    u.searchParams.set('last_event_id', String(lastEventId));
    return u.toString();
  }

  // ---- Messages ----------------------------------------------------------------------------

  getMessages(q: GetMessages, opts: { signal?: AbortSignal } = {}): Promise<MessagesResponse> {
    return this.request<MessagesResponse>(
      'GET',
      '/messages',
      {
        anchor: String(q.anchor),
        num_before: q.num_before,
        num_after: q.num_after,
        narrow: q.narrow,
        include_anchor: q.include_anchor,
        apply_markdown: true,
        client_gravatar: true,
      },
      opts,
    );
  }

  getMessage(id: number): Promise<{ message: Message; raw_content?: string }> {
    return this.request('GET', `/messages/${id}`, { apply_markdown: false });
  }

  sendMessage(m: SendMessage, opts: SendOptions = {}): Promise<{ id: number }> {
    return this.request(
      'POST',
      '/messages',
      {
        type: m.type,
        to: m.type === 'stream' ? m.to : m.to,
        topic: m.type === 'stream' ? m.topic : undefined,
        content: m.content,
        queue_id: opts.queue_id,
        local_id: opts.local_id,
        read_by_sender: opts.read_by_sender,
      },
      { signal: opts.signal },
    );
  }

  render(content: string): Promise<{ rendered: string }> {
    return this.request('POST', '/messages/render', { content });
  }

  editMessage(
    id: number,
    change: {
      content?: string;
      topic?: string;
      propagate_mode?: string;
      stream_id?: number;
      /** Whether the notification bot tells the topic moved, where it went and where it was. */
      send_notification_to_new_thread?: boolean;
      send_notification_to_old_thread?: boolean;
    },
  ): Promise<unknown> {
    return this.request('PATCH', `/messages/${id}`, change);
  }

  /**
   * One round of deleting a topic's messages (POST /streams/{id}/delete_topic, organization or
   * channel administrators): `complete` false when the server's time for one request ran out
   * with messages left, to be asked again.
   */
  deleteTopic(streamId: number, topic: string): Promise<{ complete: boolean }> {
    return this.request('POST', `/streams/${streamId}/delete_topic`, { topic_name: topic });
  }

  deleteMessage(id: number): Promise<unknown> {
    return this.request('DELETE', `/messages/${id}`);
  }

  updateFlags(
    messages: number[],
    op: 'add' | 'remove',
    flag: string,
  ): Promise<{ messages: number[] }> {
    return this.request('POST', '/messages/flags', { messages, op, flag });
  }

  /**
   * Flags a range of a narrow (POST /messages/flags/narrow): "Mark as unread from here" removes
   * `read` from a message and those after it.
   */
  updateFlagsForNarrow(q: {
    anchor: number;
    include_anchor: boolean;
    num_before: number;
    num_after: number;
    narrow: NarrowTerm[];
    op: 'add' | 'remove';
    flag: string;
  }): Promise<{
    processed_count: number;
    updated_count: number;
    first_processed_id: number | null;
    last_processed_id: number | null;
    found_oldest: boolean;
    found_newest: boolean;
  }> {
    return this.request('POST', '/messages/flags/narrow', { ...q, anchor: String(q.anchor) });
  }

  /** A message's versions, oldest first (GET /messages/{id}/history). */
  messageHistory(id: number): Promise<{ message_history: Record<string, unknown>[] }> {
    return this.request('GET', `/messages/${id}/history`);
  }

  /** Who has read a message (GET /messages/{id}/read_receipts). */
  readReceipts(id: number): Promise<{ user_ids: number[] }> {
    return this.request('GET', `/messages/${id}/read_receipts`);
  }

  /**
   * The user's own API key. A browser session gives it for the password (POST
   * /json/fetch_api_key; no password where the realm has no password logins); an API-key client
   * has it already.
   */
  ownApiKey(password: string): Promise<{ api_key: string; email: string }> {
    if (this.auth.kind !== 'session') return Promise.reject(new Error('ownApiKey: sessions only'));
    return this.request('POST', '/fetch_api_key', { password });
  }

  /** A new API key for the user (the old one stops working; other browser sessions end). */
  regenerateApiKey(): Promise<{ api_key: string }> {
    return this.request('POST', '/users/me/api_key/regenerate');
  }

  /** Marks all the user's messages read (`complete: false`: repeat to finish). */
  markAllRead(): Promise<{ complete?: boolean }> {
    return this.request('POST', '/mark_all_as_read');
  }

  markStreamRead(streamId: number): Promise<unknown> {
    return this.request('POST', '/mark_stream_as_read', { stream_id: streamId });
  }

  markTopicRead(streamId: number, topic: string): Promise<unknown> {
    return this.request('POST', '/mark_topic_as_read', { stream_id: streamId, topic_name: topic });
  }

  // ---- Reactions ---------------------------------------------------------------------------

  /** An event of a widget message: `content` is the event's JSON text (POST /submessage). */
  addSubmessage(messageId: number, content: string): Promise<unknown> {
    return this.request('POST', '/submessage', {
      message_id: messageId,
      msg_type: 'widget',
      content,
    });
  }

  addReaction(
    id: number,
    r: { emoji_name: string; emoji_code?: string; reaction_type?: string },
  ): Promise<unknown> {
    return this.request('POST', `/messages/${id}/reactions`, r);
  }

  removeReaction(
    id: number,
    r: { emoji_name: string; emoji_code?: string; reaction_type?: string },
  ): Promise<unknown> {
    return this.request('DELETE', `/messages/${id}/reactions`, r);
  }

  // ---- Typing, presence ------------------------------------------------------------------

  typing(
    op: 'start' | 'stop',
    to: { type: 'direct'; to: number[] } | { type: 'stream'; stream_id: number; topic: string },
  ): Promise<unknown> {
    return this.request('POST', '/typing', { op, ...to });
  }

  /**
   * Reports the user's presence; unless `pingOnly`, the answer holds the presences changed since
   * `lastUpdateId` (modern format; -1: everyone's).
   */
  presence(
    status: 'active' | 'idle',
    opts: { pingOnly?: boolean; newUserInput?: boolean; lastUpdateId?: number } = {},
  ): Promise<PresenceAnswer> {
    return this.request('POST', '/users/me/presence', {
      status,
      ping_only: opts.pingOnly ?? false,
      new_user_input: opts.newUserInput ?? false,
      last_update_id: opts.lastUpdateId,
    });
  }

  /**
   * Sets the user's status (`POST /users/me/status`): only what is passed changes; an empty
   * text or emoji name clears it.
   */
  setStatus(change: {
    status_text?: string;
    emoji_name?: string;
    emoji_code?: string;
    reaction_type?: string;
  }): Promise<unknown> {
    return this.request('POST', '/users/me/status', change);
  }

  // ---- Channels, topics, users -----------------------------------------------------------

  topics(streamId: number): Promise<{ topics: { name: string; max_id: number }[] }> {
    return this.request('GET', `/users/me/${streamId}/topics`, { allow_empty_topic_name: true });
  }

  subscribe(names: string[]): Promise<unknown> {
    return this.request('POST', '/users/me/subscriptions', {
      subscriptions: names.map((name) => ({ name })),
    });
  }

  unsubscribe(names: string[], principals?: number[]): Promise<unknown> {
    return this.request('DELETE', '/users/me/subscriptions', {
      subscriptions: names,
      principals,
    });
  }

  /**
   * `POST /users/me/subscriptions` with the creation's settings: a new channel (or existing ones
   * joined), with its description, privacy and the people subscribed (`principals`, user ids;
   * none: the user alone).
   */
  createChannel(p: {
    name: string;
    description?: string;
    invite_only?: boolean;
    history_public_to_subscribers?: boolean;
    principals?: number[];
  }): Promise<{
    subscribed: Record<string, string[]>;
    already_subscribed: Record<string, string[]>;
  }> {
    return this.request('POST', '/users/me/subscriptions', {
      subscriptions: [{ name: p.name, description: p.description ?? '' }],
      invite_only: p.invite_only,
      history_public_to_subscribers: p.history_public_to_subscribers,
      principals: p.principals,
    });
  }

  /** `POST /users/me/subscriptions` for others: `principals` join the channel named `name`. */
  addSubscribers(name: string, principals: number[]): Promise<unknown> {
    return this.request('POST', '/users/me/subscriptions', {
      subscriptions: [{ name }],
      principals,
    });
  }

  /** `GET /streams/{id}/members`: the channel's subscribers' ids. */
  channelMembers(streamId: number): Promise<{ subscribers: number[] }> {
    return this.request('GET', `/streams/${streamId}/members`);
  }

  /** `PATCH /streams/{id}`: its description, name (`new_name`), privacy. */
  updateChannel(
    streamId: number,
    p: {
      description?: string;
      new_name?: string;
      is_private?: boolean;
      history_public_to_subscribers?: boolean;
    },
  ): Promise<unknown> {
    return this.request('PATCH', `/streams/${streamId}`, p);
  }

  updateSubscription(streamId: number, property: string, value: unknown): Promise<unknown> {
    return this.request('POST', '/users/me/subscriptions/properties', {
      subscription_data: [{ stream_id: streamId, property, value }],
    });
  }

  users(): Promise<{ members: User[] }> {
    // With each person's custom profile field values (their profile card shows them).
    return this.request('GET', '/users', {
      client_gravatar: true,
      include_custom_profile_fields: true,
    });
  }

  updateSettings(settings: Params): Promise<unknown> {
    return this.request('PATCH', '/settings', settings);
  }

  // ---- Invitations ----------------------------------------------------------------------

  createInviteLink(p: {
    invite_expires_in_minutes?: number | null;
    invite_as?: number;
    stream_ids?: number[];
    include_realm_default_subscriptions?: boolean;
  }): Promise<{ invite_link: string }> {
    return this.request('POST', '/invites/multiuse', p);
  }

  sendInvites(p: {
    invitee_emails: string;
    stream_ids: number[];
    invite_as?: number;
    invite_expires_in_minutes?: number | null;
    include_realm_default_subscriptions?: boolean;
  }): Promise<unknown> {
    return this.request('POST', '/invites', p);
  }

  // ---- Uploads ----------------------------------------------------------------------------

  /**
   * `POST /user_uploads` with one file; resolves with its URL. `onProgress` is called only with
   * an upload transport that reports progress (the browser's).
   */
  upload(
    file: Blob,
    name: string,
    opts: { onProgress?: (loaded: number, total: number) => void; signal?: AbortSignal } = {},
  ): Promise<{ url: string; filename?: string }> {
    const form = new FormData();
    form.append('file', file, name);
    return this.postForm('/user_uploads', form, opts);
  }

  /** `POST /realm/emoji/{name}`: a custom emoji from one image (the server checks name and size). */
  uploadEmoji(emojiName: string, file: Blob, fileName: string): Promise<unknown> {
    const form = new FormData();
    form.append('file', file, fileName);
    return this.postForm(`/realm/emoji/${encodeURIComponent(emojiName)}`, form);
  }

  /** `POST /realm/icon`: the organization's icon from one image (administrators). */
  uploadRealmIcon(file: Blob, fileName: string): Promise<{ icon_url: string }> {
    const form = new FormData();
    form.append('file', file, fileName);
    return this.postForm('/realm/icon', form);
  }

  /** A multipart POST, through the upload transport when there is one (it reports progress). */
  private async postForm<T>(
    path: string,
    form: FormData,
    opts: { onProgress?: (loaded: number, total: number) => void; signal?: AbortSignal } = {},
  ): Promise<T> {
    const url = this.url(path);
    const headers = this.authHeaders('POST');
    if (this.uploadFn) {
      let r: { status: number; text: string; retryAfter: string | null };
      try {
        r = await this.uploadFn({ url, headers, body: form, ...opts });
      } catch (e) {
        throw new NetworkError(e instanceof Error ? e.message : String(e), opts.signal?.aborted);
      }
      return this.answer(r.status, r.text, r.retryAfter);
    }
    return this.send(url, {
      method: 'POST',
      headers,
      body: form,
      signal: opts.signal,
      credentials: 'same-origin',
    });
  }

  /** The server's emoji data file (`server_emoji_data_url` from register). */
  async emojiData(url: string): Promise<EmojiData> {
    const res = await this.fetchFn(url, { method: 'GET', headers: {} });
    const body = parseBody(await res.text());
    if (res.status !== 200) throw new ApiError(res.status, body, null);
    return body as EmojiData;
  }
}
