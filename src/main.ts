/**
 * `npm start`: the server on its embedded default (SQLite under ./data, 127.0.0.1:9991), configured
 * by PORT, HOST, DATA_DIR, EXTERNAL_HOST (see docs/operations.md). SIGTERM/SIGINT shut it down gracefully.
 */
import { ensureFirstRealm } from './bootstrap.js';
import { configFromEnv } from './config.js';
import { createServer } from './server.js';
import { Store } from './storage/store.js';

async function main(): Promise<void> {
  // Everything the server creates (database, uploads, saved queues) is private to its user.
  process.umask(0o077);
  const config = configFromEnv();
  {
    // First boot happens before the server opens its own connection to the database.
    const store = Store.open(config.dataDir);
    try {
      const creds = await ensureFirstRealm(store, config.scryptN);
      if (creds) {
        console.log('Created the first realm and its owner (shown once; keep them):');
        console.log(`  realm:    ${config.externalScheme}://${config.externalHost}`);
        console.log(`  email:    ${creds.email}`);
        console.log(`  password: ${creds.password}`);
        console.log(`  api key:  ${creds.api_key}`);
      }
    } finally {
      store.close();
    }
  }
  const server = await createServer(config);
  console.log(`Confab listening on ${server.url} (data: ${config.dataDir})`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: shutting down`);
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('shutdown failed', err);
        process.exit(1);
      },
    );
  };
  // Handlers never let an error escape, so these are bugs: log them and keep serving.
  process.on('unhandledRejection', (err) => console.error('unhandled rejection', err));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
