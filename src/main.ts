/**
 * `npm start` (node dist/src/main.js [--env-file FILE]): the server on its embedded default
 * (SQLite under ./data, 127.0.0.1:9991), configured by the environment and, with --env-file, by a
 * file of KEY=value lines (docs/operations.md "Configuration"). Logs are JSON lines on stdout
 * (LOG_LEVEL, LOG_FORMAT). SIGTERM/SIGINT shut it down gracefully.
 *
 * The first boot on an empty data directory creates a realm, its owner, default channels and
 * welcome messages, and prints the owner's credentials once — on stderr, as plain text, never
 * into the log.
 */
import { parseArgs } from 'node:util';
import { ensureFirstRealm } from './bootstrap.js';
import { configFromEnv, envWithFile, removedSettingsIn } from './config.js';
import { configureLogging, levelFromEnv, log, type LogFormat } from './observability/log.js';
import { createServer } from './server.js';
import { DataDirLock, DataDirLockedError } from './storage/data-lock.js';
import { stopOnSignals } from './signals.js';
import { Store } from './storage/store.js';

function logFormat(value: string | undefined, tty: boolean): LogFormat {
  if (value === undefined || value === '') return tty ? 'pretty' : 'json';
  if (value !== 'json' && value !== 'pretty')
    throw new Error('bad environment: LOG_FORMAT must be json or pretty');
  return value;
}

async function main(): Promise<void> {
  // Everything the server creates (database, uploads, saved queues) is private to its user.
  process.umask(0o077);
  const { values } = parseArgs({ options: { 'env-file': { type: 'string' } } });
  const env = envWithFile(values['env-file']);
  const config = configFromEnv(env);
  configureLogging({
    destination: 1,
    level: levelFromEnv(env.LOG_LEVEL) ?? 'info',
    format: logFormat(env.LOG_FORMAT, process.stdout.isTTY),
  });
  const removed = removedSettingsIn(env);
  if (removed.length > 0)
    log.warn(
      { settings: removed },
      `ignored: ${removed.join(', ')} no longer exist (the HTTP guard was removed; odd HTTP is answered by the uWS build or nginx: docs/robustness.md)`,
    );
  const lock = DataDirLock.acquire(config.dataDir, 'server');
  try {
    // First boot happens before the server opens its own connection to the database.
    const store = Store.open(config.dataDir);
    try {
      const creds = await ensureFirstRealm(store, config);
      if (creds) {
        log.info({ realmId: creds.realm_id, userId: creds.user_id }, 'created the first realm');
        process.stderr.write(
          [
            'Created the first realm and its owner (shown once; keep them):',
            `  realm:    ${config.externalScheme}://${config.externalHost}`,
            `  email:    ${creds.email}`,
            `  password: ${creds.password}`,
            `  api key:  ${creds.api_key}`,
            '',
          ].join('\n'),
        );
      }
    } finally {
      store.close();
    }
  } catch (err) {
    lock.release();
    throw err;
  }
  const server = await createServer({ ...config, lock });
  // Before the announcement: whoever waits for it may signal at once (a SIGTERM before the handler
  // is in place would kill the process instead of stopping it gracefully; seen under load in CI).
  stopOnSignals(server);
  log.info(
    { url: server.url, dataDir: config.dataDir },
    `Confab listening on ${server.url} (data: ${config.dataDir})`,
  );
}

main().catch((err: unknown) => {
  if (err instanceof DataDirLockedError) log.fatal(err.message);
  else log.fatal({ err }, err instanceof Error ? err.message : String(err));
  process.exit(1);
});
