/**
 * Server configuration: defaults for an embedded single-node deployment, overridden by the
 * environment (PORT, HOST, DATA_DIR, EXTERNAL_HOST, MAX_FILE_UPLOAD_SIZE, ...) or, in tests and
 * benches, by options passed to createServer().
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import util from 'node:util';
import { z } from 'zod';
import { DEFAULT_QUEUE_LIMITS } from './delivery/limits.js';
import type { RateRule } from './lib/rate-limit.js';
import type { ImageProxyOptions } from './media/image-proxy.js';
import type { WireNamesMode } from './lib/wire-names.js';
import { SettingsError } from './lib/settings-error.js';
import { ProxyTrust } from './http/client-address.js';
import type { Durability } from './storage/db.js';

/**
 * The default commit spacing (ms; actors/realm.machine.ts). At the messages bench's half rate
 * (~450 sends a second to 50 recipients) a commit every 5 ms holds two or three sends instead of
 * one, halving what the WAL is written, for at most 5 ms more before a send is answered.
 */
export const DEFAULT_COMMIT_SPACING_MS = 5;

/**
 * The default time limit of a realm export's run (EXPORT_TIME_LIMIT, one hour; ms): far more than
 * an export of a large realm takes, and a bound on one that hangs (src/admin/export-jobs.ts).
 */
export const DEFAULT_EXPORT_TIME_LIMIT_MS = 60 * 60 * 1000;

/**
 * The default shutdown grace (SHUTDOWN_GRACE_MS; ms): how long a standalone server stopping on
 * SIGTERM/SIGINT keeps listening, answering new requests 503 (src/http/drain.ts), before it
 * closes its listening socket. Long enough for the connections in the kernel's backlog to be
 * taken and answered; a load balancer whose health check is slower needs more.
 */
export const DEFAULT_SHUTDOWN_GRACE_MS = 1500;

/**
 * The longest SHUTDOWN_GRACE_MS, a minute: with the 30 s the rest of the shutdown may take after
 * it (src/signals.ts SHUTDOWN_LIMIT_MS), within the 90 s systemd allows (deploy/confab.service).
 */
export const MAX_SHUTDOWN_GRACE_MS = 60_000;

export type ServerConfig = {
  host: string;
  port: number;
  dataDir: string;
  /** Host (and port) clients use to reach the server; subdomains of it select realms. */
  externalHost: string;
  /**
   * EXTERNAL_HOST was not set: it is `localhost:<port>`, the port the server listens on (with
   * PORT=0, the one the system picked, set once listening).
   */
  externalHostFromPort?: boolean;
  /** Scheme of the URLs clients are given (`https` behind a TLS-terminating proxy). */
  externalScheme: 'http' | 'https';
  /**
   * WEB_DIR: the web app's build (index.html, static/), served at `/` and `/static/`
   * (src/http/static-files.ts); `npm run build` writes it to dist/web, the default.
   */
  webDir: string;
  /**
   * SESSION_COOKIE_AGE: how long a browser login session lasts, in seconds (the reference's
   * default, two weeks); src/http/sessions.ts.
   */
  sessionAgeSeconds: number;
  /** Largest request body accepted outside file uploads, in bytes (413 beyond). */
  maxRequestBytes: number;
  /** MAX_FILE_UPLOAD_SIZE, in bytes. */
  maxFileUploadBytes: number;
  /** How long a temporary upload URL (GET /user_uploads/{realm_id_str}/{filename}) works. */
  uploadUrlLifetimeMs: number;
  /** scrypt cost N for new password hashes (tests lower it). */
  scryptN: number;
  /** Mounts routes that exist only to test the server itself (a handler that throws). */
  testRoutes: boolean;
  /**
   * The access log (src/http/request-log.ts), LOG_REQUESTS: `all`, a line per request (info
   * level: request id, method, route, status, time, user, realm, client); `errors`, a line only
   * for a request answered with a status >= 400 or slower than `slowRequestMs`, and a summary
   * line of every request each minute (`npm start`'s default); `off`, neither (the library's
   * default: tests and benches).
   */
  logRequests: LogRequests;
  /** LOG_SLOW_MS: with `logRequests` `errors`, a request at least this slow has its line. */
  slowRequestMs: number;
  /**
   * Bearer token that lets non-local clients read GET /metrics (METRICS_TOKEN); null: only
   * loopback clients may.
   */
  metricsToken: string | null;
  /** GET /health answers 503 when the event loop lagged more than this recently (ms). */
  healthMaxLagMs: number;
  /** Markdown shorter than this (characters) renders on the main thread; default in workers/pool.ts. */
  renderInlineThreshold?: number;
  /**
   * Event queues (issue #3). A held GET /events is answered with a heartbeat after
   * `heartbeatMs` plus a random jitter of up to `heartbeatJitterMs` (kept under the clients' 90 s
   * timeout); an idle WebSocket gets one after the same interval without a frame.
   */
  heartbeatMs: number;
  heartbeatJitterMs: number;
  /** A queue with no attached request or socket for this long is removed (BAD_EVENT_QUEUE_ID). */
  queueIdleLifetimeMs: number;
  /** How often the garbage collector sweeps for idle queues (one sweep, not a timer per queue). */
  queueSweepMs: number;
  /** Cluster deployment (docs/cluster.md): queue ids start with this node's name. */
  queueIdPrefix?: string;
  /** A WebSocket whose unsent frames exceed this many bytes is closed; its queue keeps the events. */
  wsMaxBackpressureBytes: number;
  /**
   * Bounds on what event queues hold (docs/robustness.md "Event queues"): queues per user (a
   * registration beyond is refused), unacknowledged events and bytes per queue (a queue beyond is
   * discarded; bytes only count past 5,000 events), and a budget for everything queued.
   */
  maxQueuesPerUser: number;
  queueMaxEvents: number;
  queueMaxBytes: number;
  queueMemoryBudgetBytes: number;
  /**
   * DURABILITY: 'normal' (default; a commit survives a crash of the process, the last ones may be
   * lost on power loss) or 'full' (every commit synced to disk before it is answered); see
   * docs/operations.md "Durability".
   */
  durability: Durability;
  /**
   * COMMIT_SPACING_MS: the least time between two commits of a realm's message sends, unless a batch
   * already holds FULL_BATCH (8) sends (group commit spacing, actors/realm.machine.ts; default 5,
   * 0: each batch at the end of its turn).
   */
  commitSpacingMs: number;
  /**
   * Per-address limits (src/http/address-limits.ts; docs/robustness.md "Per-address limits"):
   * connections one client address may hold at once (requests in flight, held polls, WebSockets;
   * MAX_CONNECTIONS_PER_ADDRESS) and requests without credentials it may have in flight
   * (MAX_UNAUTHENTICATED_PER_ADDRESS); 0 turns one off. Addresses in `addressLimitsExempt`
   * (ADDRESS_LIMITS_EXEMPT, addresses or CIDR ranges) are not counted.
   */
  maxConnectionsPerAddress: number;
  maxUnauthenticatedPerAddress: number;
  addressLimitsExempt: string[];
  /** How long changed presence waits in memory before its batch write (ms). */
  presenceFlushMs: number;
  /**
   * Realms with more active users than this get no `presence` event when someone comes online
   * (clients learn it from their next presence poll), as the reference's
   * USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS: those events cost O(users²).
   */
  presenceEventUserLimit: number;
  /**
   * SMTP_URL: the SMTP server outgoing mail is handed to (`smtp://user:password@host:port`, or
   * `smtps://…` for TLS from the first byte); null (the default): the server sends no mail
   * (docs/mail.md says what then does not happen).
   */
  smtpUrl: string | null;
  /** MAIL_FROM: the sender of outgoing mail; null: `noreply@` the external host's name. */
  mailFrom: string | null;
  /** The outbox's bounds, retry schedule and SMTP time limits (docs/mail.md "The outbox"). */
  mail: MailLimits;
  /**
   * The server's "now", in milliseconds since the epoch (Date.now by default): the time realm
   * mutations see (`ctx.now`) and the time scheduled messages fall due by. Tests pass a clock they
   * move forward, then run the due deliveries (`context.scheduler.deliverDue()`), instead of
   * waiting.
   */
  clock: () => number;
  /**
   * Work done in bounded batches (marking everything read, deleting a topic) stops starting new
   * batches after this long and answers `complete: false`; the client repeats the request.
   */
  batchTimeBudgetMs: number;
  /**
   * Rate limits (429 RATE_LIMIT_HIT; docs/robustness.md "Rate limits"); `null` turns them all off (the test
   * suite and the benches, which would otherwise be throttled by their own load).
   */
  rateLimits: RateLimitRules | null;
  /** The rate limiters' clock, in milliseconds (monotonic); tests move it by hand. */
  rateLimitClock?: () => number;
  /**
   * Reverse proxies (addresses or CIDR ranges) whose X-Forwarded-For names the client; empty:
   * the peer address is the client's, whatever the request's headers say.
   */
  trustedProxies: readonly string[];
  /**
   * Let the image proxy fetch from private, loopback and link-local addresses (off: a user could
   * otherwise make the server fetch from its own network): all, or only the listed addresses
   * (tests reach a local host so). Environment: IMAGE_PROXY_ALLOW_PRIVATE=1.
   */
  imageProxyAllowPrivate: boolean | readonly string[];
  /**
   * Let outgoing webhooks (src/bots/outgoing-webhooks.ts) call private, loopback and link-local
   * addresses: all, or only the listed ones (tests). OUTGOING_WEBHOOK_ALLOW_PRIVATE=1.
   */
  outgoingWebhookAllowPrivate: boolean | readonly string[];
  /** Tests: the outgoing webhooks' time and size limits (OUTGOING_WEBHOOK_LIMITS otherwise). */
  outgoingWebhookLimits?: { timeoutMs?: number; maxBytes?: number };
  /** Limits of the image proxy (src/media/image-proxy.ts DEFAULT_IMAGE_PROXY), for tests. */
  imageProxyLimits?: Partial<Omit<ImageProxyOptions, 'allowPrivate'>>;
  /** The image proxy's signing key; read from DATA_DIR/image_proxy_key by createServer. */
  imageProxyKey?: string;
  /**
   * Which spelling of the wire names clients get where only one can be sent (docs/api.md "Wire
   * names"): `auto` chooses by the client's User-Agent; `spec` or `reference` forces one.
   */
  wireNames: WireNamesMode;
  /**
   * Tests only (a cluster node reads CONFAB_TEST_EXPORT_DELAY_MS): an export through the API
   * waits this long once marked started, so a test can stop its node while it is under way.
   */
  exportStartDelayMs?: number;
  /**
   * EXPORT_TIME_LIMIT (seconds; here ms): a realm export's run (from its start to its archive
   * kept) that has not finished by then is failed as one that threw (src/admin/export-jobs.ts).
   */
  exportTimeLimitMs: number;
  /**
   * SHUTDOWN_GRACE_MS: how long a server stopping on SIGTERM/SIGINT keeps listening, answering
   * new requests 503, before it closes its listening socket (src/signals.ts, src/http/drain.ts);
   * 0: it stops listening at once. A cluster node uses it only when set (src/cluster/main.ts).
   */
  shutdownGraceMs: number;
};

/**
 * Each domain's rules, `[window seconds, requests]` (the reference's RATE_LIMITING_RULES and its
 * defaults); a request passes when every rule of its domain allows it. An empty list: no limit.
 */
export type RateLimitRules = {
  /** Every API request by an authenticated user (except the event-queue ones). */
  api_by_user: readonly RateRule[];
  /**
   * GET/DELETE /events and WebSocket upgrades by an authenticated user: a budget of their own, as
   * the reference's event server keeps its own buckets, so polling never eats the API budget.
   */
  events_by_user: readonly RateRule[];
  /** Every request without credentials (spectators, logging in, server settings), by address. */
  api_by_ip: readonly RateRule[];
  /** POST /fetch_api_key attempts for one username (cleared by a successful login). */
  authenticate_by_username: readonly RateRule[];
  /** Failed HTTP Basic (API key) authentications, by address. */
  failed_authentication_by_ip: readonly RateRule[];
  /**
   * Password reset mails asked for one address (POST /accounts/password/reset/); over the limit
   * no mail is sent, and the page says the same as ever.
   */
  password_reset_by_email: readonly RateRule[];
};

export const DEFAULT_RATE_LIMITS: RateLimitRules = {
  api_by_user: [[60, 200]],
  events_by_user: [[60, 200]],
  api_by_ip: [[60, 100]],
  authenticate_by_username: [[1800, 5]],
  failed_authentication_by_ip: [[60, 30]],
  password_reset_by_email: [
    [3600, 2],
    [86400, 5],
  ],
};

/** See ServerConfig.mail. */
export type MailLimits = {
  /** Mail waiting in the outbox at most; a mail beyond is dropped with a log line. */
  maxOutbox: number;
  /** Attempts at one mail before it is dropped (with a log line). */
  maxAttempts: number;
  /** The wait after the first failed attempt, doubled after each further one, up to the cap. */
  retryBaseSeconds: number;
  retryMaxSeconds: number;
  /** Mails handed to the SMTP server at once. */
  concurrency: number;
  /** Time limits of one delivery: connecting and each later wait on the SMTP server (ms). */
  connectTimeoutMs: number;
  socketTimeoutMs: number;
};

export const DEFAULT_MAIL_LIMITS: MailLimits = {
  maxOutbox: 10_000,
  maxAttempts: 12,
  retryBaseSeconds: 30,
  retryMaxSeconds: 3600,
  concurrency: 2,
  connectTimeoutMs: 15_000,
  socketTimeoutMs: 60_000,
};

export const DEFAULT_MAX_FILE_UPLOAD_MIB = 25;

/** What the access log writes (ServerConfig.logRequests). */
export type LogRequests = 'all' | 'errors' | 'off';

export function defaultConfig(): ServerConfig {
  return {
    host: '127.0.0.1',
    port: 9991,
    dataDir: path.resolve('data'),
    externalHost: 'localhost:9991',
    externalScheme: 'http',
    webDir: fileURLToPath(new URL('../web', import.meta.url)),
    sessionAgeSeconds: 14 * 24 * 60 * 60,
    maxRequestBytes: 4 * 1024 * 1024,
    maxFileUploadBytes: DEFAULT_MAX_FILE_UPLOAD_MIB * 1024 * 1024,
    uploadUrlLifetimeMs: 60_000,
    scryptN: 1 << 15,
    testRoutes: false,
    logRequests: 'off',
    slowRequestMs: 1000,
    metricsToken: null,
    healthMaxLagMs: 1000,
    heartbeatMs: 45_000,
    heartbeatJitterMs: 10_000,
    queueIdleLifetimeMs: 10 * 60_000,
    queueSweepMs: 60_000,
    wsMaxBackpressureBytes: 1024 * 1024,
    ...DEFAULT_QUEUE_LIMITS,
    durability: 'normal',
    commitSpacingMs: DEFAULT_COMMIT_SPACING_MS,
    rateLimits: DEFAULT_RATE_LIMITS,
    trustedProxies: [],
    maxConnectionsPerAddress: 2000,
    maxUnauthenticatedPerAddress: 100,
    addressLimitsExempt: ['127.0.0.1', '::1'],
    clock: Date.now,
    presenceFlushMs: 5000,
    presenceEventUserLimit: 100,
    batchTimeBudgetMs: 50_000,
    imageProxyAllowPrivate: false,
    outgoingWebhookAllowPrivate: false,
    wireNames: 'auto',
    smtpUrl: null,
    mailFrom: null,
    mail: DEFAULT_MAIL_LIMITS,
    exportTimeLimitMs: DEFAULT_EXPORT_TIME_LIMIT_MS,
    shutdownGraceMs: DEFAULT_SHUTDOWN_GRACE_MS,
  };
}

/**
 * The least MAX_REQUEST_BYTES: below 1 MiB ordinary requests would be refused (a message at its
 * longest, 10,000 emoji, is some 120 KB form-encoded; a realm's settings more).
 */
const MIN_REQUEST_BYTES = 1024 * 1024;
const MAX_REQUEST_BYTES_RULE =
  'MAX_REQUEST_BYTES is a number of bytes, at least 1048576 (1 MiB; the default is 4194304)';

const SHUTDOWN_GRACE_RULE =
  `SHUTDOWN_GRACE_MS is a whole number of milliseconds, 0 to ${MAX_SHUTDOWN_GRACE_MS} ` +
  `(the default is ${DEFAULT_SHUTDOWN_GRACE_MS}; 0: stop listening at once)`;

const EnvSchema = z.object({
  PORT: z
    .string()
    .regex(/^\d{1,5}$/, 'PORT must be a port number (0 to 65535)')
    .transform(Number)
    .refine((n) => n <= 65535, 'PORT must be a port number (0 to 65535)')
    .optional(),
  HOST: z.string().min(1).optional(),
  DATA_DIR: z.string().min(1).optional(),
  EXTERNAL_HOST: z
    .string()
    .regex(
      /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)(:\d{1,5})?$/,
      'EXTERNAL_HOST is the host name clients reach the server by, with a port if not the ' +
        "scheme's (chat.example.com, localhost:9991): no scheme (that is EXTERNAL_SCHEME), " +
        'path or spaces',
    )
    .optional(),
  EXTERNAL_SCHEME: z.enum(['http', 'https']).optional(),
  WEB_DIR: z.string().min(1).optional(),
  SESSION_COOKIE_AGE: z
    .string()
    .regex(/^[1-9]\d{1,8}$/, 'SESSION_COOKIE_AGE is a number of seconds (10 or more)')
    .transform(Number)
    .optional(),
  MAX_FILE_UPLOAD_SIZE: z
    .string()
    .regex(/^\d+$/, 'MAX_FILE_UPLOAD_SIZE is in MiB')
    .transform(Number)
    .optional(),
  MAX_REQUEST_BYTES: z
    .string()
    .regex(/^\d{1,10}$/, MAX_REQUEST_BYTES_RULE)
    .transform(Number)
    .refine((n) => n >= MIN_REQUEST_BYTES, MAX_REQUEST_BYTES_RULE)
    .optional(),
  LOG_REQUESTS: z.enum(['all', 'errors', 'off', '0', '1', 'true', 'false']).optional(),
  LOG_SLOW_MS: z
    .string()
    .regex(/^\d+$/, 'LOG_SLOW_MS is in milliseconds')
    .transform(Number)
    .optional(),
  METRICS_TOKEN: z.string().min(16, 'METRICS_TOKEN must be at least 16 characters').optional(),
  RATE_LIMITING: z.enum(['0', '1', 'true', 'false', 'on', 'off']).optional(),
  RATE_LIMITING_RULES: z.string().optional(),
  TRUSTED_PROXIES: z.string().optional(),
  IMAGE_PROXY_ALLOW_PRIVATE: z.enum(['0', '1', 'true', 'false']).optional(),
  OUTGOING_WEBHOOK_ALLOW_PRIVATE: z.enum(['0', '1', 'true', 'false']).optional(),
  MAX_QUEUES_PER_USER: z
    .string()
    .regex(/^[1-9]\d{0,5}$/, 'MAX_QUEUES_PER_USER is a positive number')
    .transform(Number)
    .optional(),
  DURABILITY: z.enum(['normal', 'full']).optional(),
  COMMIT_SPACING_MS: z
    .string()
    .regex(/^(\d|[1-9]\d|100)$/, 'COMMIT_SPACING_MS is a number of milliseconds, 0 to 100')
    .transform(Number)
    .optional(),
  MAX_CONNECTIONS_PER_ADDRESS: z
    .string()
    .regex(/^\d{1,7}$/, 'MAX_CONNECTIONS_PER_ADDRESS is a number (0: no limit)')
    .transform(Number)
    .optional(),
  MAX_UNAUTHENTICATED_PER_ADDRESS: z
    .string()
    .regex(/^\d{1,7}$/, 'MAX_UNAUTHENTICATED_PER_ADDRESS is a number (0: no limit)')
    .transform(Number)
    .optional(),
  ADDRESS_LIMITS_EXEMPT: z.string().optional(),
  QUEUE_MEMORY_BUDGET_MB: z
    .string()
    .regex(/^[1-9]\d{0,6}$/, 'QUEUE_MEMORY_BUDGET_MB is a positive number of MiB')
    .transform(Number)
    .optional(),
  WIRE_NAMES: z.enum(['auto', 'spec', 'reference']).optional(),
  EXPORT_TIME_LIMIT: z
    .string()
    .regex(/^[1-9]\d{0,6}$/, 'EXPORT_TIME_LIMIT is a positive number of seconds')
    .transform(Number)
    .optional(),
  SHUTDOWN_GRACE_MS: z
    .string()
    .regex(/^\d{1,5}$/, SHUTDOWN_GRACE_RULE)
    .transform(Number)
    .refine((n) => n <= MAX_SHUTDOWN_GRACE_MS, SHUTDOWN_GRACE_RULE)
    .optional(),
  SMTP_URL: z
    .string()
    .refine(isSmtpUrl, 'SMTP_URL is smtp://[user:password@]host[:port] or smtps://…')
    .optional(),
  MAIL_FROM: z
    .string()
    .regex(/^([^<>]*<)?[^\s@<>]+@[^\s@<>]+>?$/, 'MAIL_FROM is an address, or Name <address>')
    .optional(),
});

/** Whether SMTP_URL names an SMTP server nodemailer can reach: smtp: or smtps: with a host. */
export function isSmtpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'smtp:' || url.protocol === 'smtps:') && url.hostname !== '';
  } catch {
    return false;
  }
}

const RuleList = z.array(
  z.tuple([z.number().positive(), z.number().int().positive()]),
  'each domain is a list of [seconds, requests] pairs',
);
const RulesOverride = z
  .object({
    api_by_user: RuleList,
    events_by_user: RuleList,
    api_by_ip: RuleList,
    authenticate_by_username: RuleList,
    failed_authentication_by_ip: RuleList,
    password_reset_by_email: RuleList,
  })
  .partial()
  .strict();

/** RATE_LIMITING (default on) and RATE_LIMITING_RULES (JSON, merged over the defaults). */
function rateLimitsFromEnv(enabled: string | undefined, rules: string | undefined) {
  if (enabled === '0' || enabled === 'false' || enabled === 'off') return null;
  if (rules === undefined || rules.trim() === '') return DEFAULT_RATE_LIMITS;
  let value: unknown;
  try {
    value = JSON.parse(rules);
  } catch {
    throw new SettingsError('bad environment: RATE_LIMITING_RULES is not valid JSON');
  }
  const parsed = RulesOverride.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new SettingsError(
      `bad environment: RATE_LIMITING_RULES: ${issue.path.join('.')}: ${issue.message}`,
    );
  }
  return { ...DEFAULT_RATE_LIMITS, ...parsed.data };
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new SettingsError(`bad environment: ${issue.path.join('.')}: ${issue.message}`);
  }
  const e = parsed.data;
  const base = defaultConfig();
  const port = e.PORT ?? base.port;
  return {
    ...base,
    port,
    host: e.HOST ?? base.host,
    dataDir: dataDirFromEnv(e.DATA_DIR ?? base.dataDir),
    externalHost: e.EXTERNAL_HOST ?? `localhost:${port}`,
    externalHostFromPort: e.EXTERNAL_HOST === undefined,
    externalScheme: e.EXTERNAL_SCHEME ?? base.externalScheme,
    webDir: e.WEB_DIR !== undefined ? path.resolve(e.WEB_DIR) : base.webDir,
    sessionAgeSeconds: e.SESSION_COOKIE_AGE ?? base.sessionAgeSeconds,
    maxFileUploadBytes: (e.MAX_FILE_UPLOAD_SIZE ?? DEFAULT_MAX_FILE_UPLOAD_MIB) * 1024 * 1024,
    maxRequestBytes: e.MAX_REQUEST_BYTES ?? base.maxRequestBytes,
    logRequests: logRequestsFromEnv(e.LOG_REQUESTS),
    slowRequestMs: e.LOG_SLOW_MS ?? base.slowRequestMs,
    metricsToken: e.METRICS_TOKEN ?? null,
    rateLimits: rateLimitsFromEnv(e.RATE_LIMITING, e.RATE_LIMITING_RULES),
    imageProxyAllowPrivate:
      e.IMAGE_PROXY_ALLOW_PRIVATE === '1' || e.IMAGE_PROXY_ALLOW_PRIVATE === 'true',
    outgoingWebhookAllowPrivate:
      e.OUTGOING_WEBHOOK_ALLOW_PRIVATE === '1' || e.OUTGOING_WEBHOOK_ALLOW_PRIVATE === 'true',
    durability: e.DURABILITY ?? base.durability,
    commitSpacingMs: e.COMMIT_SPACING_MS ?? base.commitSpacingMs,
    maxQueuesPerUser: e.MAX_QUEUES_PER_USER ?? base.maxQueuesPerUser,
    queueMemoryBudgetBytes:
      e.QUEUE_MEMORY_BUDGET_MB !== undefined
        ? e.QUEUE_MEMORY_BUDGET_MB * 1024 * 1024
        : base.queueMemoryBudgetBytes,
    trustedProxies: addressList('TRUSTED_PROXIES', e.TRUSTED_PROXIES) ?? [],
    wireNames: e.WIRE_NAMES ?? base.wireNames,
    exportTimeLimitMs:
      e.EXPORT_TIME_LIMIT !== undefined ? e.EXPORT_TIME_LIMIT * 1000 : base.exportTimeLimitMs,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS ?? base.shutdownGraceMs,
    smtpUrl: e.SMTP_URL ?? null,
    mailFrom: e.MAIL_FROM ?? null,
    maxConnectionsPerAddress: e.MAX_CONNECTIONS_PER_ADDRESS ?? base.maxConnectionsPerAddress,
    maxUnauthenticatedPerAddress:
      e.MAX_UNAUTHENTICATED_PER_ADDRESS ?? base.maxUnauthenticatedPerAddress,
    addressLimitsExempt:
      addressList('ADDRESS_LIMITS_EXEMPT', e.ADDRESS_LIMITS_EXEMPT) ?? base.addressLimitsExempt,
  };
}

/**
 * The kernel's file systems mounted at these places hold no data of the server's, and Node's
 * recursive mkdir under /proc never returns (Node 20: a start with DATA_DIR there hung, busy):
 * a data directory under them is refused before anything is made.
 */
export const KERNEL_FS_ROOTS = ['/proc', '/sys', '/dev'];

/** The root of KERNEL_FS_ROOTS that `p` (absolute) is in, or null. */
function kernelFsRoot(p: string): string | null {
  return KERNEL_FS_ROOTS.find((root) => p === root || p.startsWith(root + '/')) ?? null;
}

/**
 * `p` with symbolic links resolved as far as it exists (the rest, to be made, appended): a link
 * elsewhere to /proc counts as /proc.
 */
function resolvedAsFarAsItExists(p: string): string {
  const rest: string[] = [];
  for (let at = p; ; at = path.dirname(at)) {
    try {
      return path.join(fs.realpathSync(at), ...rest);
    } catch {
      if (path.dirname(at) === at) return p;
      rest.unshift(path.basename(at));
    }
  }
}

/** DATA_DIR made absolute; refused under the kernel's file systems (KERNEL_FS_ROOTS). */
function dataDirFromEnv(value: string): string {
  const dir = path.resolve(value);
  const real = resolvedAsFarAsItExists(dir);
  const root = kernelFsRoot(dir) ?? kernelFsRoot(real);
  if (root !== null)
    throw new SettingsError(
      `bad environment: DATA_DIR: ${dir} is under ${root}${real !== dir ? ` (it is ${real})` : ''}, ` +
        "a file system of the kernel's, not a disk: set DATA_DIR to a directory on a disk",
    );
  return dir;
}

/**
 * A comma-separated list of addresses and CIDR ranges (TRUSTED_PROXIES, ADDRESS_LIMITS_EXEMPT),
 * each checked here, with the setting named, as the server reads them (ProxyTrust): a typo would
 * otherwise stop the start only once the data directory was made, naming no setting.
 */
function addressList(name: string, value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  try {
    new ProxyTrust(entries);
  } catch (err) {
    throw new SettingsError(
      `bad environment: ${name}: ${(err as Error).message} (comma-separated addresses or CIDR ranges, e.g. 127.0.0.1,10.0.0.0/8)`,
    );
  }
  return entries;
}

/**
 * Settings of earlier versions that no longer exist and are ignored when set (the start says
 * so): the HTTP guard's (docs/robustness.md "Odd but legal HTTP").
 */
export const REMOVED_SETTINGS = ['HTTP_GUARD', 'HTTP_MAX_CONNECTIONS', 'HTTP_GUARD_POLLS'];

/** The removed settings set in `env`. */
export function removedSettingsIn(env: NodeJS.ProcessEnv): string[] {
  return REMOVED_SETTINGS.filter((name) => env[name] !== undefined);
}

// The server's "now" in UNIX seconds (ServerConfig.clock), for the modules that import it from here.
export { nowSeconds } from './lib/now.js';

/**
 * The environment with an env file's settings on top (`--env-file FILE`; the format systemd's
 * EnvironmentFile= and docker's --env-file read: KEY=value lines, # comments). The file wins over
 * the inherited environment, so the admin tool given the server's file sees the server's settings.
 */
export function envWithFile(
  file: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  if (file === undefined) return env;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new SettingsError(`cannot read the env file ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return { ...env, ...util.parseEnv(text) };
}

/** LOG_REQUESTS: `errors` when unset; `1`/`true` (its older spellings) are `all`, `0`/`false` `off`. */
function logRequestsFromEnv(value: string | undefined): LogRequests {
  if (value === undefined) return 'errors';
  if (value === '1' || value === 'true') return 'all';
  if (value === '0' || value === 'false') return 'off';
  return value as LogRequests;
}
