/**
 * The process's log (src/observability/log.ts) collected for a test: JSON lines as pino writes
 * them, in order. The logger is restored when the test ends.
 */
import { Writable } from 'node:stream';
import type { Test } from 'tap';
import { createLogger, setLogger, type Logger } from '../../src/observability/log.js';

export function capturingLogger(level: 'info' | 'debug' = 'info'): {
  logger: Logger;
  lines: string[];
} {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n')) if (l !== '') lines.push(l);
      cb();
    },
  });
  return { logger: createLogger({ level, destination: stream }), lines };
}

/** Collects the log while `t` runs; returns the parsed lines seen so far (a live array). */
export function captureLog(t: Test, level: 'info' | 'debug' = 'info'): Record<string, unknown>[] {
  const { logger, lines } = capturingLogger(level);
  setLogger(logger);
  t.teardown(() => setLogger(createLogger()));
  const parsed: Record<string, unknown>[] = [];
  return new Proxy(parsed, {
    get(target, prop, receiver) {
      while (target.length < lines.length)
        target.push(JSON.parse(lines[target.length]!) as Record<string, unknown>);
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
}
