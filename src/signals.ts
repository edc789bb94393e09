/**
 * Graceful shutdown on SIGTERM/SIGINT for a server process (`npm start`, a cluster node): the
 * server closes (exit 0), or the exit is 1 when closing failed. The process-level last resort is
 * installed with it (./process-guard.ts): an exception that escapes every handler is logged and
 * the process keeps serving, unless it is one of the documented fatal conditions.
 */
import { log } from './observability/log.js';
import { installLastResort } from './process-guard.js';
import type { ConfabServer } from './server.js';

export function stopOnSignals(server: ConfabServer): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, `${signal}: shutting down`);
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  installLastResort();
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
