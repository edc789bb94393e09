/**
 * The real server as a child process (`node dist/src/main.js`, as `npm start` runs it) on a data
 * directory the test owns: PORT=0, the address read from the line main.ts prints once it listens
 * (`Confab listening on http://HOST:PORT (data: DIR)`), rate limits off (the test's own load would
 * be throttled), and a shutdown grace of TEST_SHUTDOWN_GRACE_MS instead of the 1.5 s default: each
 * SIGTERM/SIGINT stop of a child would wait it, and the stop still takes the path a real one does
 * (new requests answered 503, then the port closed). A test of the grace itself sets its own
 * SHUTDOWN_GRACE_MS, or `SHUTDOWN_GRACE_MS: undefined` for the server's default. For crash-safety
 * tests: kill it with any signal, start it again on the same data.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DIST_SRC, plainNode } from './plain-node.js';

export type ChildServer = {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote so far (stdout and stderr). */
  output: () => string;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once the output matches `re` (rejects if the process exits first). */
  waitFor: (re: RegExp) => Promise<RegExpExecArray>;
  kill: (signal: NodeJS.Signals) => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

export type ChildRun = Omit<ChildServer, 'url'>;

/** The shutdown grace of child servers (ms) unless the test sets SHUTDOWN_GRACE_MS. */
export const TEST_SHUTDOWN_GRACE_MS = 100;

/** The environment of a child: variables set to `undefined` are unset. */
export type ChildEnv = Record<string, string | undefined>;

/**
 * Starts main.js (or another entry, `script`, a path under dist/); resolves once it listens
 * (rejects with its output if it exits first).
 */
export async function startChild(
  dataDir: string,
  env: ChildEnv = {},
  script = path.join(DIST_SRC, 'main.js'),
  args: readonly string[] = [],
): Promise<ChildServer> {
  const run = spawnChild(dataDir, env, script, args);
  try {
    const m = await run.waitFor(/listening on (http:\/\/\S+)/);
    return { ...run, url: m[1]! };
  } catch (err) {
    run.child.kill('SIGKILL');
    throw err;
  }
}

/** Starts main.js without waiting for anything (for starts that must fail). */
export function spawnChild(
  dataDir: string,
  env: ChildEnv = {},
  script = path.join(DIST_SRC, 'main.js'),
  args: readonly string[] = [],
): ChildRun {
  const node = plainNode([script, ...args], {
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    RATE_LIMITING: 'off',
    SHUTDOWN_GRACE_MS: String(TEST_SHUTDOWN_GRACE_MS),
    ...env,
  });
  const child = spawn(node.file, node.args, {
    env: node.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (c: Buffer) => {
    out += c.toString();
    for (const l of listeners) l();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      done = true;
      for (const l of listeners) l();
      resolve({ code, signal });
    }),
  );
  const waitFor = (re: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = re.exec(out);
        if (m) {
          listeners.delete(check);
          resolve(m);
        } else if (done) {
          listeners.delete(check);
          reject(new Error(`server exited before printing ${String(re)}:\n${out}`));
        }
      };
      listeners.add(check);
      check();
    });
  return {
    child,
    output: () => out,
    exited,
    waitFor,
    kill: (signal) => {
      child.kill(signal);
      return exited;
    },
  };
}

/** The first owner's credentials, as the first start wrote them (DATA_DIR/first-owner.txt). */
export type FirstOwner = {
  email: string;
  password: string;
  apiKey: string;
  realmUrl: string;
  realmName: string;
};

export function firstOwner(dataDir: string): FirstOwner {
  const text = fs.readFileSync(path.join(dataDir, 'first-owner.txt'), 'utf8');
  const values = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)=(.*)$/.exec(line);
    if (m) values.set(m[1]!, m[2]!);
  }
  const get = (k: string) => {
    const v = values.get(k);
    if (v === undefined) throw new Error(`first-owner.txt has no ${k}:\n${text}`);
    return v;
  };
  return {
    email: get('email'),
    password: get('password'),
    apiKey: get('api_key'),
    realmUrl: get('realm_url'),
    realmName: get('realm_name'),
  };
}
