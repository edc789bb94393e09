/**
 * `npm start`: the server on its embedded default (SQLite under ./data, 127.0.0.1:9991), configured
 * by PORT, HOST, DATA_DIR, EXTERNAL_HOST (see docs/operations.md). SIGTERM/SIGINT shut it down gracefully.
 */
import { ensureFirstRealm } from './bootstrap.js';
import { configFromEnv } from './config.js';
import { createServer } from './server.js';
import { stopOnSignals } from './signals.js';
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

  stopOnSignals(server);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
