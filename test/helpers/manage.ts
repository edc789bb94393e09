/**
 * The admin tool as a child process (`node dist/src/manage.js ...`, what `npm run manage` runs),
 * asynchronously so the server it talks to may be in the test's own process.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { DIST_SRC, plainNode } from './plain-node.js';

export type ManageRun = {
  status: number | null;
  stdout: string;
  stderr: string;
  /** stdout's JSON on success, the first line of stderr otherwise ({} if neither parses). */
  json: Record<string, unknown>;
};

/** `dataDir` null: no DATA_DIR in the environment (the env file or the default decides). */
export function manage(
  dataDir: string | null,
  args: string[],
  /** `uid`: run as that operating-system user (and group of the same id; root only). */
  /** `nodeFlags`: Node's own options, before the script (`--import FILE`). */
  opts: {
    stdin?: string;
    env?: Record<string, string>;
    uid?: number;
    cwd?: string;
    nodeFlags?: string[];
  } = {},
): Promise<ManageRun> {
  return new Promise((resolve, reject) => {
    const script = path.join(DIST_SRC, 'manage.js');
    const node = plainNode([...(opts.nodeFlags ?? []), script, ...args], opts.env);
    if (dataDir !== null) node.env.DATA_DIR = dataDir;
    else if (opts.env?.DATA_DIR === undefined) delete node.env.DATA_DIR;
    const child = spawn(node.file, node.args, {
      env: node.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.uid } : {}),
      ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (status) => {
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(status === 0 ? stdout : stderr.split('\n')[0]!) as Record<
          string,
          unknown
        >;
      } catch {
        // not JSON: the assertions on stdout/stderr say so
      }
      resolve({ status, stdout, stderr, json });
    });
    child.stdin.end(opts.stdin ?? '');
  });
}
