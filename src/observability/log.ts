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
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { accessLine, type AccessFields } from './access-line.js';
import { LOG_LEVELS, levelFromEnv, type LogLevel } from './log-level.js';

export type { Logger } from 'pino';

export type LogFormat = 'json' | 'pretty';

// The levels, and LOG_LEVEL read (levelFromEnv), apart from the logger: log-level.ts.
export { LOG_LEVELS, levelFromEnv, type LogLevel };

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

/** Whether pino-pretty can be loaded (the dev dependency LOG_FORMAT=pretty needs). */
export function prettyInstalled(): boolean {
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}

/**
 * pino-pretty is a development dependency: a production install (without dev dependencies)
 * cannot load it and logs JSON instead (main.ts warns when LOG_FORMAT=pretty was set).
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

/** Access lines held before a write: up to this many bytes (~120 lines)… */
const ACCESS_BATCH_BYTES = 32768;
/** …or for this many milliseconds. */
export const ACCESS_FLUSH_MS = 100;
/** How long a write that finds the descriptor full (EAGAIN: a non-blocking pipe) waits to retry. */
const BUSY_WAIT_MS = 10;
const busyWait = new Int32Array(new SharedArrayBuffer(4));

/**
 * A log file descriptor's output. The logger's own lines (start, warnings, errors, audit, …) are
 * written at once, synchronously, as pino's synchronous destination does; access lines
 * (writeAccess) are the one stream of lines per request, and a write(2) each cost more than the
 * rest of the line, so they are encoded into a buffer this output keeps (no string outlives its
 * request) and written together: when ACCESS_BATCH_BYTES are held, ACCESS_FLUSH_MS after the
 * first of them, before the next line of any other kind (so the order of lines is kept and every
 * warning or error goes out with the requests before it), and at exit (`process.exit` after a
 * SIGTERM's shutdown, a fatal stop, a failed start: the 'exit' listener below). What a process
 * killed outright (SIGKILL, out of memory, a native crash) loses is the access lines of its last
 * ACCESS_FLUSH_MS at most; never another line.
 */
export class LogOutput implements DestinationStream {
  private readonly dest: DestinationStream;
  private readonly held = Buffer.allocUnsafe(2 * ACCESS_BATCH_BYTES);
  private used = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly onTimer = (): void => {
    this.timer = null;
    this.flush();
  };

  constructor(private readonly fd: number) {
    this.dest = pino.destination({ dest: fd, sync: true });
  }

  /** pino's lines: at once, after the access lines held. */
  write(line: string): void {
    this.flush();
    this.dest.write(line);
  }

  /** An access line (newline included): held for a batched write. */
  writeAccess(line: string): void {
    // A UTF-16 unit is at most 3 bytes of UTF-8.
    if (line.length * 3 > this.held.length - this.used) {
      this.flush();
      if (line.length * 3 > this.held.length) {
        this.writeBytes(Buffer.from(line, 'utf8'));
        return;
      }
    }
    this.used += this.held.write(line, this.used, 'utf8');
    if (this.used >= ACCESS_BATCH_BYTES) this.flush();
    else if (this.timer === null) {
      this.timer = setTimeout(this.onTimer, ACCESS_FLUSH_MS);
      this.timer.unref();
    }
  }

  /** Writes the access lines held, synchronously. */
  flush(): void {
    if (this.used === 0) return;
    const bytes = this.held.subarray(0, this.used);
    this.used = 0;
    this.writeBytes(bytes);
  }

  /**
   * All of `bytes`, waiting out a full pipe; on any other error (EPIPE: nobody reads any more;
   * a full disk) these lines are dropped: the access log never stops the server.
   */
  private writeBytes(bytes: Uint8Array): void {
    let off = 0;
    while (off < bytes.length) {
      try {
        off += fs.writeSync(this.fd, bytes, off, bytes.length - off);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'EAGAIN' && code !== 'EBUSY') return;
        Atomics.wait(busyWait, 0, 0, BUSY_WAIT_MS);
      }
    }
  }
}

/** Every LogOutput made for a descriptor, flushed when the process exits. */
const outputs = new Set<LogOutput>();
process.on('exit', flushLogs);

/** Writes every access line held (before an exit, or before reading a log file). */
export function flushLogs(): void {
  for (const output of outputs) output.flush();
}

export function createLogger(opts: LoggingOptions = {}): Logger {
  const level = opts.level ?? levelFromEnv(process.env.LOG_LEVEL) ?? 'info';
  const dest = opts.destination ?? 2;
  if (typeof dest !== 'number') return pino(baseOptions(level), dest);
  if (opts.format === 'pretty') {
    const pretty = prettyStream(dest);
    if (pretty) return pino(baseOptions(level), pretty);
  }
  const output = new LogOutput(dest);
  outputs.add(output);
  return pino(baseOptions(level), output);
}

/**
 * A request's access line (./access-line.ts) to the process logger's output, when it logs at
 * info: batched on a descriptor (LogOutput), written as it is to any other stream (tests'
 * collectors; pino-pretty, which reads JSON lines).
 */
export function logAccess(fields: AccessFields): void {
  if (log.levelVal > INFO) return;
  const line = accessLine(fields);
  const stream = (log as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym]!;
  if (stream instanceof LogOutput) stream.writeAccess(line);
  else stream.write(line);
}

const INFO = 30;

/** The process's logger. Replaced by configureLogging (main, manage) or by tests. */
export let log: Logger = createLogger({ level: levelOrInfo(process.env.LOG_LEVEL) });

/**
 * LOG_LEVEL for the logger made when this module loads: a bad value is left for the entry points
 * to refuse with their own message (levelFromEnv in src/main.ts, src/manage.ts); thrown here it
 * would stop the process while it loads its modules, with nothing but a stack trace.
 */
function levelOrInfo(value: string | undefined): LogLevel {
  try {
    return levelFromEnv(value) ?? 'info';
  } catch {
    return 'info';
  }
}

/** The logger replaced: its held access lines written, its output forgotten. */
function retire(logger: Logger): void {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  if (stream instanceof LogOutput) {
    stream.flush();
    outputs.delete(stream);
  }
}

export function configureLogging(opts: LoggingOptions): Logger {
  retire(log);
  log = createLogger(opts);
  return log;
}

/** Replaces the process's logger with one given (tests). */
export function setLogger(logger: Logger): void {
  if (logger !== log) retire(log);
  log = logger;
}
