/**
 * The process-level last resort of a server process (`npm start`, a cluster node; see
 * docs/robustness.md "Unexpected exceptions"). Every path of a request catches its own exceptions
 * (src/http/router.ts, src/http/unexpected.ts); what still escapes — from a timer, a stream's
 * event, a promise nobody awaited — reaches Node's `uncaughtException` or `unhandledRejection`,
 * whose default is to end the process and with it every client's event queue. Here they are
 * logged as errors and counted, and the server goes on.
 *
 * Only the documented fatal conditions stop it: SQLite reporting the database corrupt, wherever
 * that is caught (a request's 500 included). The log then says why (`stopping: …`, level fatal) and
 * the process exits with FATAL_EXIT_CODE. (A cluster node whose log refused its COMMIT stops on
 * its own path: src/cluster/node.ts.)
 */
import { reportUnexpected, setFatalHandler } from './http/unexpected.js';
import { log } from './observability/log.js';

/** The exit code of a stop for a fatal condition (sysexits' EX_SOFTWARE). */
export const FATAL_EXIT_CODE = 70;

export function installLastResort(
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  let stopping = false;
  setFatalHandler((err, reason) => {
    if (stopping) return;
    stopping = true;
    log.fatal({ err }, `stopping: ${reason}`);
    exit(FATAL_EXIT_CODE);
  });
  process.on('uncaughtException', (err) => reportUnexpected(err, 'process'));
  process.on('unhandledRejection', (reason) => reportUnexpected(reason, 'process'));
}
