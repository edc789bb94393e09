/**
 * Graceful shutdown on SIGTERM/SIGINT for a server process (`npm start`, a cluster node): the
 * server closes (exit 0), or the exit is 1 when closing failed or did not end within
 * SHUTDOWN_LIMIT_MS after its grace; its last log line says which, and how long it took. The
 * process-level last resort is installed with it (./process-guard.ts): an exception that escapes
 * every handler is logged and the process keeps serving, unless it is one of the documented fatal
 * conditions.
 *
 * A second SIGTERM/SIGINT while the first one's shutdown runs (an operator's second Ctrl-C, while
 * requests in flight drain for up to 10 s) stops the process at once, as servers commonly do: the
 * log says so (level warn) and the exit status is 128 + the signal's number (130 for SIGINT, 143
 * for SIGTERM), as a shell reports a process its signal ended. A signal within a second of the
 * first is the same one delivered twice, not an operator's second: one Ctrl-C under `npm start`
 * reaches the server from the terminal and again from npm, which passes its own on to its script
 * (where /bin/sh execs the command, as bash does). Stopping at once is safe for the data: the
 * handler runs between JavaScript tasks, so no better-sqlite3 statement or transaction (they are
 * synchronous) is half done, and the database is in WAL mode, which SQLite keeps consistent
 * through any exit (committed transactions stay, an unfinished checkpoint is resumed at the next
 * open). What is lost is what the rest of the graceful shutdown would have done: answers to the
 * requests still in flight and the saved event queues (their clients register again).
 */
import os from 'node:os';
import { log } from './observability/log.js';
import { installLastResort } from './process-guard.js';
import type { ConfabServer } from './server.js';

/**
 * How long the graceful shutdown may take after its grace (SHUTDOWN_GRACE_MS, src/config.ts):
 * requests in flight (10 s at most, drained during the grace), then the closing steps (well
 * under a second here). Past it a step is stuck (a close that never settles): the process says
 * which and exits 1, rather than hang with nothing more in the log until its supervisor kills it
 * (systemd after TimeoutStopSec, 90 s in deploy/confab.service), or, its last handle closed, end
 * with status 0 as if all was done.
 */
export const SHUTDOWN_LIMIT_MS = 30_000;

/** A signal this soon after the first is taken as the same one delivered twice (see above). */
const SAME_SIGNAL_MS = 1000;

/**
 * `graceMs`: how long the stop keeps listening, answering new requests 503 and taking the
 * connections in the kernel's backlog (src/http/drain.ts): a standalone server passes its
 * SHUTDOWN_GRACE_MS setting (config.shutdownGraceMs, 1.5 s by default). A cluster node passes 0
 * unless the setting is set: the proxy in front of the nodes fails over to another node on a
 * refused connection, where a 503 would reach the client. `limitMs` counts from the grace's end.
 */
export function stopOnSignals(
  server: ConfabServer,
  { graceMs, limitMs = SHUTDOWN_LIMIT_MS }: { graceMs: number; limitMs?: number },
): void {
  const exit = (code: number) => process.exit(code);
  let stopping: string | null = null;
  let stoppingSince = 0;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping !== null) {
      if (performance.now() - stoppingSince < SAME_SIGNAL_MS) return;
      log.warn(
        { signal, first: stopping },
        `${signal} again during the shutdown: stopping at once (requests in flight are not answered, event queues not saved)`,
      );
      exit(128 + os.constants.signals[signal]);
      return;
    }
    stopping = signal;
    stoppingSince = performance.now();
    const took = () => Math.round(performance.now() - stoppingSince);
    log.info({ signal }, `${signal}: shutting down`);
    // The last line of every shutdown says how it ended: done (exit 0), failed (1; each failed
    // step was logged before it), or stuck (1).
    const limit = setTimeout(() => {
      const stage = server.closeStage;
      log.error(
        { signal, ms: took(), stage },
        `shutdown stuck: not done after ${took()} ms, at "${stage ?? '?'}": exiting without it`,
      );
      exit(1);
    }, graceMs + limitMs);
    server.close({ graceMs }).then(
      () => {
        clearTimeout(limit);
        log.info(
          { signal, ms: took() },
          `shutdown complete in ${took()} ms: the database closed, the process exits`,
        );
        exit(0);
      },
      (err: unknown) => {
        clearTimeout(limit);
        log.error({ err, ms: took() }, `shutdown failed after ${took()} ms: exit status 1`);
        exit(1);
      },
    );
  };
  installLastResort();
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
