/**
 * Structured logs (pino): one JSON object per line with `time` (ISO 8601), `level` (a name) and
 * `msg`. Everything in the server logs through `log` (the process's root logger); `npm start` and
 * `npm run manage` point it at stdout (configureLogging), a library user (tests, benches) gets it
 * on stderr at LOG_LEVEL (default info).
 *
 * What never goes into a line: passwords, API keys, authorization headers, message or draft
 * content. Request lines carry the route pattern, not the path or query string (test/api/logs.test.ts
 * checks the lot); `redact` below is a second fence for fields someone might log by mistake.
 */
import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

export type LogFormat = 'json' | 'pretty';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Field names censored at the top level of a line's object (a second fence; nothing should log them). */
const REDACT_PATHS = [
  'password',
  'api_key',
  'apiKey',
  'authorization',
  'content',
  'new_password',
  'old_password',
  'req.headers.authorization',
];

/**
 * The same names one level down (`{ user: { password } }`), censored by `censorNested` below
 * rather than by pino's wildcard paths (`*.password`): those cost ~10 µs on every line, as much as
 * the rest of a request's line together, where this walk costs a few nanoseconds on a line of
 * plain values, which every request line is.
 */
const NESTED_FIELDS: ReadonlySet<string> = new Set([
  'password',
  'api_key',
  'authorization',
  'content',
]);
const CENSOR = '[redacted]';

/** The line's object with NESTED_FIELDS censored in its object values; the object itself if none. */
export function censorNested(obj: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | null = null;
  for (const key in obj) {
    const value = obj[key];
    if (
      value === null ||
      typeof value !== 'object' ||
      value instanceof Error ||
      Array.isArray(value)
    ) {
      continue;
    }
    let copy: Record<string, unknown> | null = null;
    for (const name of NESTED_FIELDS) {
      if (Object.hasOwn(value, name)) {
        copy ??= { ...(value as Record<string, unknown>) };
        copy[name] = CENSOR;
      }
    }
    if (copy !== null) {
      out ??= { ...obj };
      out[key] = copy;
    }
  }
  return out ?? obj;
}

function baseOptions(level: LogLevel): LoggerOptions {
  return {
    level,
    base: undefined, // no pid/hostname on every line; systemd and docker add their own
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }), log: censorNested },
    redact: { paths: REDACT_PATHS, censor: CENSOR },
    serializers: { err: pino.stdSerializers.err },
  };
}

/**
 * pino-pretty is a development dependency: a production install (without dev dependencies)
 * cannot load it and logs JSON instead.
 */
function prettyStream(fd: number): DestinationStream | null {
  try {
    const require = createRequire(import.meta.url);
    const pretty = require('pino-pretty') as (o: object) => DestinationStream;
    return pretty({
      destination: fd,
      sync: true,
      colorize: fd === 1 ? process.stdout.isTTY : process.stderr.isTTY,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
    });
  } catch {
    return null;
  }
}

export type LoggingOptions = {
  level?: LogLevel;
  /** `json` (default), or `pretty` (pino-pretty, when installed). */
  format?: LogFormat;
  /** A file descriptor (1 stdout, 2 stderr) or a stream (tests collect lines). */
  destination?: number | DestinationStream;
};

export function createLogger(opts: LoggingOptions = {}): Logger {
  const level = opts.level ?? levelFromEnv(process.env.LOG_LEVEL) ?? 'info';
  const dest = opts.destination ?? 2;
  if (typeof dest !== 'number') return pino(baseOptions(level), dest);
  if (opts.format === 'pretty') {
    const pretty = prettyStream(dest);
    if (pretty) return pino(baseOptions(level), pretty);
  }
  return pino(baseOptions(level), pino.destination({ dest, sync: true }));
}

/** LOG_LEVEL's value, if it names a level; throws for anything else (a typo should not go unseen). */
export function levelFromEnv(value: string | undefined): LogLevel | undefined {
  if (value === undefined || value === '') return undefined;
  const v = value.toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(v)) {
    throw new Error(`bad environment: LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }
  return v as LogLevel;
}

/** The process's logger. Replaced by configureLogging (main, manage) or by tests. */
export let log: Logger = createLogger();

export function configureLogging(opts: LoggingOptions): Logger {
  log = createLogger(opts);
  return log;
}

/** Replaces the process's logger with one given (tests). */
export function setLogger(logger: Logger): void {
  log = logger;
}
