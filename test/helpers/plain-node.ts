/**
 * How tests start Node.js processes of the project (servers, the admin tool, cluster nodes):
 * without the test runner's module hooks. tap runs each test file with @tapjs/processinfo's
 * import in NODE_OPTIONS and hooks every spawn so that children get it too; the suite runs
 * without coverage and these processes need none of it, but under it each one took about 1 s
 * longer to start (the admin tool's --help: 1.6 s instead of 0.6 s). So the child is started
 * through `env`, which sets NODE_OPTIONS to this process's without tap's entries just before
 * it runs node (the pid is node's: env replaces itself).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The compiled sources (dist/src), where main.js and manage.js are. */
export const DIST_SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

const ENV = '/usr/bin/env';

const tapHook = (a: string) => a.includes('@tapjs/');

/** This process's node flags without tap's, and NODE_OPTIONS=... without tap's entries. */
function plainFlags(): { execArgv: string[]; nodeOptions: string } {
  const nodeOptions = (process.env.NODE_OPTIONS ?? '')
    .split(/\s+/)
    .filter((a) => a !== '' && !tapHook(a.replace(/^"|"$/g, '')))
    .join(' ');
  return { execArgv: process.execArgv.filter((a) => !tapHook(a)), nodeOptions };
}

/**
 * What to spawn for `node ...args` without tap's hooks, with `extraEnv` on this environment (a
 * variable `undefined` there is unset).
 */
export function plainNode(
  args: readonly string[],
  extraEnv: Record<string, string | undefined> = {},
): { file: string; args: string[]; env: NodeJS.ProcessEnv } {
  const { execArgv, nodeOptions } = plainFlags();
  const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv };
  for (const [name, value] of Object.entries(extraEnv)) if (value === undefined) delete env[name];
  return {
    file: ENV,
    args: [`NODE_OPTIONS=${nodeOptions}`, process.execPath, ...execArgv, ...args],
    env,
  };
}

/** The options for child_process.fork() of a module without tap's hooks. */
export function plainFork(): { execPath: string; execArgv: string[] } {
  const { execArgv, nodeOptions } = plainFlags();
  return {
    execPath: ENV,
    execArgv: [`NODE_OPTIONS=${nodeOptions}`, process.execPath, ...execArgv],
  };
}
