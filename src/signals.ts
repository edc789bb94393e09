/**
 * Graceful shutdown on SIGTERM/SIGINT for a server process (`npm start`, a cluster node): the
 * server closes (exit 0), or the exit is 1 when closing failed. Unhandled rejections are logged
 * (handlers never let an error escape, so they are bugs) and the process keeps serving.
 */
import { log } from './observability/log.js';
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
  process.on('unhandledRejection', (err) => log.error({ err }, 'unhandled rejection'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
