/**
 * `check-config` (ops-commands.ts): the settings and the machine, checked as the server would
 * meet them. Runs in the admin tool's own process, loaded only for this command.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { ServerConfig } from '../config.js';
import { DATABASE_FILE, userName } from './data-dir.js';
import { ADMIN_SOCKET, askServer } from './socket-client.js';

/** A finding of check-config. */
type Finding = { level: 'error' | 'warning'; setting?: string; message: string };

function isLoopbackHost(host: string): boolean {
  const h = host.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || h.startsWith('127.');
}

/** Whether something accepts connections on host:port (the server, or another program). */
function portTaken(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(true));
    probe.listen(port, host, () => probe.close(() => resolve(false)));
  });
}

export async function checkConfig(
  config: ServerConfig,
): Promise<{ ok: boolean; [k: string]: unknown }> {
  const findings: Finding[] = [];
  const error = (message: string, setting?: string) =>
    findings.push({ level: 'error', message, ...(setting ? { setting } : {}) });
  const warning = (message: string, setting?: string) =>
    findings.push({ level: 'warning', message, ...(setting ? { setting } : {}) });

  // The runtime.
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 22) {
    warning(
      `Node ${process.versions.node} has reached its end of life: use Node 22 or 24 ` +
        '(docs/operations.md "Runtimes")',
    );
  }
  try {
    await import('../storage/sqlite.js');
  } catch (err) {
    error(`the SQLite binding does not load: ${(err as Error).message.split('\n')[0]}`);
  }
  try {
    const uws = await import('../http/uws.js');
    uws.assertNativeBinding();
  } catch (err) {
    error(`uWebSockets.js does not load: ${(err as Error).message.split('\n')[0]}`);
  }

  // The data directory.
  const dataDir = config.dataDir;
  let running = false;
  let owner: string | null = null;
  const uid0 = process.getuid?.();
  const me = uid0 === undefined ? 'this user' : userName(uid0);
  if (!fs.existsSync(dataDir)) {
    // The first start makes it, with its parents: in the nearest directory that exists.
    let parent = path.dirname(dataDir);
    while (!fs.existsSync(parent) && path.dirname(parent) !== parent) parent = path.dirname(parent);
    if (writable(parent))
      warning(`${dataDir} does not exist: the first start makes it (DATA_DIR)`, 'DATA_DIR');
    else
      error(
        `${dataDir} does not exist and ${me} cannot make it (${parent} is not writable): the ` +
          `server, run as ${me}, would not start; make it (install -d -o ${me} -m 0700 ` +
          `${dataDir}) or set DATA_DIR`,
        'DATA_DIR',
      );
  } else {
    const st = fs.statSync(dataDir);
    owner = userName(st.uid);
    const uid = process.getuid?.();
    if (!st.isDirectory()) error(`${dataDir} is not a directory`, 'DATA_DIR');
    else {
      if ((st.mode & 0o077) !== 0)
        warning(
          `${dataDir} is readable by others (mode ${(st.mode & 0o777).toString(8)}): it holds ` +
            'every API key; make it 0700',
          'DATA_DIR',
        );
      if (uid !== undefined && uid !== st.uid && !writable(dataDir))
        error(
          `${dataDir} is not writable by ${me}: the server, run as ${me}, would not start; run ` +
            `it (and the admin tool) as ${owner}, or give the directory to ${me} (chown -R ` +
            `${me} ${dataDir})`,
          'DATA_DIR',
        );
      else if (uid !== undefined && uid !== st.uid)
        warning(
          `${dataDir} belongs to ${owner}; run the server and the admin tool as ${owner}`,
          'DATA_DIR',
        );
      if (uid === st.uid) {
        try {
          fs.accessSync(dataDir, fs.constants.W_OK);
        } catch {
          error(`${dataDir} is not writable by its owner`, 'DATA_DIR');
        }
        for (const sub of ['uploads', 'tmp', 'emoji', 'exports']) {
          const p = path.join(dataDir, sub);
          if (fs.existsSync(p) && fs.statSync(p).uid !== st.uid)
            error(
              `${p} belongs to ${userName(fs.statSync(p).uid)}, not ${owner}: the server cannot ` +
                `write there (chown -R ${owner} ${p})`,
              'DATA_DIR',
            );
        }
      }
      if (!fs.existsSync(path.join(dataDir, DATABASE_FILE)))
        warning(`${dataDir} holds no database yet: the first start creates it`, 'DATA_DIR');
      if (fs.existsSync(path.join(dataDir, ADMIN_SOCKET)) && uid === st.uid) {
        running = (await askServer(dataDir, { command: 'queue-stats', args: {} })) !== null;
      }
    }
  }

  // Listening.
  if (!running && (await portTaken(config.host, config.port)) && config.port !== 0)
    error(
      `${config.host}:${config.port} is taken by another program: the server could not listen`,
      'PORT',
    );
  if (!isLoopbackHost(config.host) && config.trustedProxies.length === 0)
    warning(
      `HOST ${config.host} listens beyond this machine with no TLS proxy declared: put nginx in ` +
        'front (deploy/nginx) and set TRUSTED_PROXIES',
      'HOST',
    );

  // What clients are told.
  if (config.externalHostFromPort)
    warning(
      `EXTERNAL_HOST is not set: links name ${config.externalHost}, which only this machine ` +
        'reaches; set it to the name clients use',
      'EXTERNAL_HOST',
    );
  else if (isLoopbackHost(config.externalHost) && !isLoopbackHost(config.host))
    warning(`EXTERNAL_HOST ${config.externalHost} names this machine only`, 'EXTERNAL_HOST');
  if (config.externalScheme === 'http' && !isLoopbackHost(config.externalHost))
    warning(
      'EXTERNAL_SCHEME is http for a public name: passwords and API keys would cross the ' +
        'network in clear; serve https through a proxy and set EXTERNAL_SCHEME=https',
      'EXTERNAL_SCHEME',
    );
  if (config.rateLimits === null)
    warning('RATE_LIMITING is off: nothing slows password guessing', 'RATE_LIMITING');

  return {
    ok: !findings.some((f) => f.level === 'error'),
    node: process.versions.node,
    data_dir: dataDir,
    data_dir_owner: owner,
    server_running: running,
    listen: `${config.host}:${config.port}`,
    url: `${config.externalScheme}://${config.externalHost}`,
    trusted_proxies: config.trustedProxies,
    findings,
  };
}

/** Whether this process may make files in `dir`. */
function writable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
