/**
 * A cluster node under supervision (docs/cluster.md "Supervision"), as `npm run cluster` runs
 * each of its nodes: `node dist/src/cluster/supervise.js` starts the node (src/cluster/main.ts,
 * with this process's environment, output and arguments) and starts it again whenever it exits,
 * after a back-off (`restartDelay`): 1 s, doubling up to 30 s while the node keeps exiting within
 * a minute of its start, 1 s again after a node that ran a minute. A node that refuses its
 * configuration (exit status 78, EX_CONFIG: its data directory or its NATS server) is not started
 * again: the supervisor exits with that status. SIGTERM or SIGINT stops the node gracefully
 * (SIGTERM; SIGKILL if it has not exited after 60 s) and then the supervisor.
 *
 * CONFAB_SUPERVISE_PID_FILE names a file holding the running node's pid (drills: `npm run
 * cluster -- kill-node N` kills the node, not its supervisor). On machines of one's own, systemd
 * does the same job (docs/cluster.md gives the unit).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_FLAGS } from '../node-flags.js';

/** A node that refused its configuration: starting it again changes nothing. */
export const EX_CONFIG = 78;

export const FIRST_RESTART_MS = 1000;
export const LONGEST_RESTART_MS = 30_000;
/** A node that ran this long before exiting is restarted after FIRST_RESTART_MS again. */
export const STEADY_RUN_MS = 60_000;

/**
 * How long to wait before starting a node again: `previous` is the wait before its last start (0
 * for the first), `ranMs` how long it ran that time.
 */
export function restartDelay(previous: number, ranMs: number): number {
  if (previous === 0 || ranMs >= STEADY_RUN_MS) return FIRST_RESTART_MS;
  return Math.min(previous * 2, LONGEST_RESTART_MS);
}

const NODE_MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'main.js');

function supervise(): void {
  const pidFile = process.env.CONFAB_SUPERVISE_PID_FILE ?? '';
  let child: ChildProcess | null = null;
  let stopping = false;
  let delay = 0;
  let restartTimer: NodeJS.Timeout | null = null;
  const say = (what: string) => console.error(`supervisor: ${what}`);

  const run = () => {
    restartTimer = null;
    const startedAt = Date.now();
    const c = spawn(process.execPath, [...SERVER_NODE_FLAGS, NODE_MAIN, ...process.argv.slice(2)], {
      stdio: 'inherit',
      env: process.env,
    });
    child = c;
    if (pidFile !== '' && c.pid !== undefined) {
      fs.writeFileSync(`${pidFile}.tmp`, String(c.pid));
      fs.renameSync(`${pidFile}.tmp`, pidFile);
    }
    c.on('exit', (code, signal) => {
      child = null;
      if (stopping) process.exit(0);
      if (code === EX_CONFIG) {
        say(`the node refused its configuration (exit status ${EX_CONFIG}); not restarting it`);
        process.exit(EX_CONFIG);
      }
      delay = restartDelay(delay, Date.now() - startedAt);
      say(
        `the node exited (${signal ?? `status ${code}`}) after ` +
          `${((Date.now() - startedAt) / 1000).toFixed(1)} s; starting it again in ${delay / 1000} s`,
      );
      restartTimer = setTimeout(run, delay);
    });
  };

  const stop = () => {
    if (stopping) return;
    stopping = true;
    if (restartTimer !== null) {
      clearTimeout(restartTimer);
      process.exit(0);
    }
    const c = child;
    if (c === null) process.exit(0);
    c.kill('SIGTERM');
    setTimeout(() => c.kill('SIGKILL'), 60_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  run();
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1])
  supervise();
