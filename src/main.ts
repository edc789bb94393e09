/**
 * `npm start` (node dist/src/main.js [--env-file FILE] [--realm-name NAME] [--owner-email EMAIL]
 * [--owner-name NAME]): the server on its embedded default (SQLite under ./data, 127.0.0.1:9991),
 * configured by the environment and, with --env-file, by a file of KEY=value lines
 * (docs/operations.md "Configuration"). Logs are JSON lines on stdout (LOG_LEVEL, LOG_FORMAT).
 * SIGTERM/SIGINT shut it down gracefully.
 *
 * Every setting is checked before anything is created. On a data directory without realms, the
 * first realm and its owner are created once the server listens (src/bootstrap.ts): the owner's
 * one-time password and API key go to DATA_DIR/first-owner.txt (0600), never to the log. Then a
 * banner on stderr says which URL to open in a browser.
 */
import { parseArgs } from 'node:util';
import {
  ensureFirstRealm,
  firstRealmSettings,
  FIRST_OWNER_FILE,
  writeFirstOwnerFile,
  type FirstRealmCredentials,
} from './bootstrap.js';
import { warnIfStale } from './build-check.js';
import { configFromEnv, envWithFile, removedSettingsIn } from './config.js';
import { SettingsError } from './lib/settings-error.js';
import { realmUrl } from './lib/urls.js';
import { DATABASE_FILE, userName } from './admin/data-dir.js';
import {
  configureLogging,
  levelFromEnv,
  log,
  prettyInstalled,
  type LogFormat,
} from './observability/log.js';
import type { ConfabServer } from './server.js';
import { DataDirLock, DataDirLockedError, LOCK_FILE } from './storage/data-lock.js';
import { stopOnSignals } from './signals.js';
import fs from 'node:fs';
import path from 'node:path';

function logFormat(value: string | undefined, tty: boolean): LogFormat {
  if (value === undefined || value === '') return tty ? 'pretty' : 'json';
  if (value !== 'json' && value !== 'pretty')
    throw new SettingsError('bad environment: LOG_FORMAT must be json or pretty');
  return value;
}

const USAGE = `usage: npm start -- [--env-file FILE] [--realm-name NAME] [--owner-email EMAIL] [--owner-name NAME]
   or: node dist/src/main.js [the same options]

Settings come from the environment (docs/operations.md "Configuration"), or from FILE's
KEY=value lines. The --realm-name, --owner-email and --owner-name options (or FIRST_REALM_NAME,
FIRST_OWNER_EMAIL, FIRST_OWNER_NAME) name the first realm and its owner; they matter only at the
first start, on a data directory without realms.`;

/** What the console says once the server serves: where to go, and where the credentials are. */
function banner(server: ConfabServer, created: FirstRealmCredentials | null, file: string): string {
  const { config, store } = server.context;
  const realms = store.realms.all();
  const first = realms.find((r) => r.string_id === '') ?? realms[0];
  const url = first ? realmUrl(config, first.string_id) : server.url;
  const lines = [`Confab is ready: open ${url} in a browser.`];
  if (created) {
    lines.push(
      '',
      `Created the first realm, "${first?.name ?? ''}", and its owner, ${created.email}.`,
    );
    // A terminal is seen only by whoever started the server; a log is kept and read by others.
    if (process.stderr.isTTY) lines.push(`  password: ${created.password}`);
    lines.push(
      `The owner's password and API key are in ${file} (readable by this user only):`,
      'log in, change the password, then delete the file.',
    );
  } else if (fs.existsSync(file)) {
    lines.push(`The first owner's credentials are still in ${file}: delete it once kept.`);
  }
  return lines.join('\n') + '\n';
}

async function main(): Promise<void> {
  // Everything the server creates (database, uploads, saved queues) is private to its user.
  process.umask(0o077);
  const { values } = parseArgs({
    options: {
      'env-file': { type: 'string' },
      'realm-name': { type: 'string' },
      'owner-email': { type: 'string' },
      'owner-name': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  warnIfStale();
  const env = envWithFile(values['env-file']);
  // Settings first: a bad one stops the start before the data directory is touched.
  const config = configFromEnv(env);
  const firstRealm = firstRealmSettings(env, values);
  configureLogging({
    destination: 1,
    level: levelFromEnv(env.LOG_LEVEL) ?? 'info',
    format: logFormat(env.LOG_FORMAT, process.stdout.isTTY),
  });
  // Asked for, not the terminal's default: said once, then JSON lines (logs stay readable by tools).
  if (env.LOG_FORMAT === 'pretty' && !prettyInstalled())
    log.warn(
      { setting: 'LOG_FORMAT' },
      'LOG_FORMAT=pretty needs the package pino-pretty, which is not installed: logging JSON lines (install it with `npm install pino-pretty`, or set LOG_FORMAT=json)',
    );
  const removed = removedSettingsIn(env);
  if (removed.length > 0)
    log.warn(
      { settings: removed },
      `ignored: ${removed.join(', ')} no longer exist (the HTTP guard was removed; odd HTTP is answered by the uWS build or nginx: docs/robustness.md)`,
    );
  // The server's modules load uWebSockets.js as they load, its build chosen by CONFAB_UWS
  // (docs/operations.md "Runtimes"), which the env file may set too: loaded only now, so that the
  // file's value counts and a build that cannot load is said like a bad setting, before the data
  // directory is touched.
  if (env.CONFAB_UWS !== undefined) process.env.CONFAB_UWS = env.CONFAB_UWS;
  const { createServer } = await import('./server.js');
  ensureDataDir(config.dataDir);
  const lock = DataDirLock.acquire(config.dataDir, 'server');
  // Listening first: a start that cannot listen (port taken, address not ours) creates nothing.
  const server = await createServer({ ...config, lock });
  // Before the announcement: whoever waits for it may signal at once (a SIGTERM before the handler
  // is in place would kill the process instead of stopping it gracefully; seen under load in CI).
  stopOnSignals(server, { graceMs: config.shutdownGraceMs });
  const { context } = server;
  // GET /health answers 503 `starting` until the first realm and its owner exist (a container's
  // check, then `cat first-owner.txt`, raced this in CI).
  server.health.starting = true;
  const file = path.join(config.dataDir, FIRST_OWNER_FILE);
  const created = await ensureFirstRealm(server.store, context.config, firstRealm, {
    realms: context.realms,
    renderer: context.renderer,
  });
  if (created) {
    writeFirstOwnerFile(config.dataDir, context.config, firstRealm.realmName, created);
    log.info(
      {
        realmId: created.realm_id,
        userId: created.user_id,
        email: created.email,
        credentialsFile: file,
      },
      'created the first realm and its owner',
    );
  }
  server.health.starting = false;
  log.info(
    { url: server.url, dataDir: config.dataDir },
    `Confab listening on ${server.url} (data: ${config.dataDir})`,
  );
  process.stderr.write(banner(server, created, file));
}

/**
 * Makes the data directory (0700) if it is missing, and checks that this user can write it and
 * the database files in it; throws a SettingsError saying what to do otherwise (SQLite would say
 * only "unable to open database file", naming neither the directory nor the user).
 */
function ensureDataDir(dataDir: string): void {
  const uid = process.getuid?.();
  const me = uid === undefined ? 'this user' : userName(uid);
  try {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST')
      throw new SettingsError(`bad environment: DATA_DIR: ${dataDir} is not a directory`);
    if (code === 'ENOTDIR')
      throw new SettingsError(
        `bad environment: DATA_DIR: ${dataDir} cannot be a directory: a file stands in its path`,
      );
    throw new SettingsError(
      `cannot make the data directory ${dataDir} (DATA_DIR): ${reason(err)}; make it for ${me}, ` +
        `the user the server runs as (install -d -o ${me} -m 0700 ${dataDir}), or set DATA_DIR ` +
        'to a directory it can write',
      { cause: err },
    );
  }
  if (!fs.statSync(dataDir).isDirectory())
    throw new SettingsError(`bad environment: DATA_DIR: ${dataDir} is not a directory`);
  const files = [
    dataDir,
    ...[DATABASE_FILE, `${DATABASE_FILE}-wal`, `${DATABASE_FILE}-shm`, LOCK_FILE].map((f) =>
      path.join(dataDir, f),
    ),
  ];
  for (const file of files) {
    if (file !== dataDir && !fs.existsSync(file)) continue;
    try {
      fs.accessSync(
        file,
        fs.constants.R_OK | fs.constants.W_OK | (file === dataDir ? fs.constants.X_OK : 0),
      );
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EROFS')
        throw new SettingsError(
          `${file} is on a read-only file system: set DATA_DIR to a directory on a writable one`,
          { cause: err },
        );
      const owner = userName(fs.statSync(file).uid);
      throw new SettingsError(
        `${file} is not writable by ${me}, the user the server runs as (${reason(err)}; it ` +
          `belongs to ${owner}): run the server as ${owner}, or give the data directory to ` +
          `${me} (chown -R ${me} ${dataDir})`,
        { cause: err },
      );
    }
  }
}

function reason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EROFS') return 'a read-only file system';
  return (err as Error).message;
}

main().catch((err: unknown) => {
  if (err instanceof SettingsError) {
    // The setting and what is wrong with it is all there is to say: one line, no stack trace.
    process.stderr.write(`Confab cannot start: ${err.message}\n`);
    process.exit(1);
  }
  if (err instanceof DataDirLockedError) log.fatal(err.message);
  else if (err instanceof TypeError && 'code' in err) {
    // parseArgs: an unknown or malformed option.
    process.stderr.write(`${err.message}\n\n${USAGE}\n`);
    process.exit(2);
  } else log.fatal({ err }, err instanceof Error ? err.message : String(err));
  process.exit(1);
});
