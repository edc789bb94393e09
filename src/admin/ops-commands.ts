/**
 * The admin tool's commands for the operator's own view: the audit log (`audit-log`), and a check
 * of the settings and the machine (`check-config`). Also the audit rows of the tool's actions on
 * the whole server (backups, restores, exports, imports), which are no realm command.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { nowSeconds, type ServerConfig } from '../config.js';
import { AUDIT_TYPES, auditExtra, type AuditOrigin, type OTHER_AUDIT_TYPES } from '../lib/audit.js';
import { auditRow, recordAudit } from '../mutations/audit.js';
import type { AuditRow } from '../storage/audit.js';
import { isClusterCopy } from '../storage/replication.js';
import { Store } from '../storage/store.js';
import type { AdminCommand, AdminRuntime } from './commands.js';
import { DATABASE_FILE, userName } from './data-dir.js';
import { realmArg, REALM_OPT, userArg } from './command-args.js';
import { UsageError } from './errors.js';
import { ADMIN_SOCKET, askServer } from './socket.js';

/**
 * An audit row for an action of the tool that is no realm command: of a realm, or (realm null) of
 * the whole server. Not on a cluster node's copy, which only the cluster's log writes (the action
 * is in the server's log there).
 */
export function recordToolAction(
  rt: AdminRuntime,
  realmId: number | null,
  eventType: (typeof OTHER_AUDIT_TYPES)[number],
  args: Record<string, unknown>,
): void {
  if (rt.realms.clustered || isClusterCopy(rt.store.db)) return;
  recordAudit(
    rt.store,
    auditRow(realmId, nowSeconds(rt.config), rt.origin, {
      event_type: eventType,
      extra: auditExtra(args),
    }),
  );
}

/** After `restore` filled the data directory: the restored database records it. */
export function recordRestore(
  dataDir: string,
  from: string,
  origin: AuditOrigin | undefined,
): void {
  const store = Store.open(dataDir, { backgroundCheckpoint: false });
  try {
    if (isClusterCopy(store.db)) return;
    recordAudit(
      store,
      auditRow(null, Math.floor(Date.now() / 1000), origin, {
        event_type: 'data_restored',
        extra: { from },
      }),
    );
  } finally {
    store.close();
  }
}

function formatRow(r: AuditRow) {
  return {
    id: r.id,
    time: new Date(r.event_time * 1000).toISOString(),
    event_type: r.event_type,
    acting_user_id: r.acting_user_id,
    modified_user_id: r.modified_user_id,
    modified_channel_id: r.modified_channel_id,
    modified_group_id: r.modified_group_id,
    via: r.via,
    ...(r.address !== null ? { address: r.address } : {}),
    ...(r.user_agent !== null ? { user_agent: r.user_agent } : {}),
    ...(r.os_user !== null ? { os_user: r.os_user } : {}),
    extra: JSON.parse(r.extra) as unknown,
  };
}

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

async function checkConfig(config: ServerConfig): Promise<{ ok: boolean; [k: string]: unknown }> {
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

export const OPS_COMMANDS: Record<string, AdminCommand> = {
  'audit-log': {
    summary: 'Read the audit log: administrative actions, newest first.',
    details:
      'Every administrative action, through the API or this tool: when, what, who (acting_user_id\n' +
      'for an API user, os_user for this tool), on whom or what, from where (address, user_agent).',
    options: {
      ...REALM_OPT,
      server: { type: 'boolean' },
      limit: { type: 'string', default: '100' },
      before: { type: 'string' },
      type: { type: 'string' },
      user: { type: 'string' },
    },
    describe: {
      realm: "the realm: its subdomain ('' for the root domain) or its id",
      server: 'instead of a realm’s: the actions on the whole server (backups, restores)',
      limit: 'at most this many entries (default 100, at most 1000)',
      before: 'entries older than this id (the next page)',
      type: 'only entries of this event type (e.g. user_changed; an unknown type is refused)',
      user: 'only entries by or about this user (an e-mail address or a user id)',
    },
    readOnly: true,
    run(rt, args) {
      if ((args.server === true) === (typeof args.realm === 'string'))
        throw new UsageError('give one of --realm or --server');
      const limit = Number(args.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new UsageError('--limit is a number from 1 to 1000');
      const before = args.before === undefined ? undefined : Number(args.before);
      if (before !== undefined && !Number.isInteger(before))
        throw new UsageError('--before is an entry id');
      if (typeof args.type === 'string' && !AUDIT_TYPES.includes(args.type))
        throw new UsageError(
          `unknown --type ${JSON.stringify(args.type)}: the types are ${AUDIT_TYPES.join(', ')}`,
        );
      const realm = args.server === true ? null : realmArg(rt, args);
      const user =
        typeof args.user === 'string' && realm !== null ? userArg(rt, realm, args).id : undefined;
      if (typeof args.user === 'string' && realm === null)
        throw new UsageError('--user needs --realm');
      const rows = rt.store.audit.list({
        realmId: realm?.id ?? null,
        limit,
        ...(before !== undefined ? { before } : {}),
        ...(typeof args.type === 'string' ? { eventType: args.type } : {}),
        ...(user !== undefined ? { userId: user } : {}),
      });
      return Promise.resolve({ realm_id: realm?.id ?? null, entries: rows.map(formatRow) });
    },
  },

  'check-config': {
    summary: 'Check the settings and the machine: data directory, port, URLs, runtime.',
    details:
      'Reads the settings as the server would (--env-file FILE), and says what would stop the\n' +
      'server or serve clients badly: errors (exit status 1) and warnings. Changes nothing.',
    options: {},
    describe: {},
    readOnly: true,
    run() {
      return Promise.reject(new Error('check-config runs in the admin tool'));
    },
    runLocal: (config) => checkConfig(config),
  },
};

/** Whether this process may make files in `dir`. */
function writable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
