/**
 * The server as `npm start` runs it (configured by the environment, JSON logs on stdout, the
 * signal handlers and the process-level last resort of src/signals.ts), with the test-only routes
 * (src/endpoints/testing.ts) mounted: what a failure outside any request does to the real process.
 * Started by test/helpers/child-server.ts `startChild(dir, env, TEST_ROUTES_MAIN)`.
 */
import { configFromEnv } from '../../src/config.js';
import { configureLogging, log } from '../../src/observability/log.js';
import { createServer } from '../../src/server.js';
import { stopOnSignals } from '../../src/signals.js';

configureLogging({ destination: 1, level: 'info', format: 'json' });
const config = configFromEnv(process.env);
const server = await createServer({ ...config, testRoutes: true });
// TEST_SHUTDOWN_STEP_HANGS: a step of the shutdown (stopping the thumbnailer) never settles;
// TEST_SHUTDOWN_LIMIT_MS: how long the shutdown may take (src/signals.ts SHUTDOWN_LIMIT_MS).
if (process.env.TEST_SHUTDOWN_STEP_HANGS)
  server.context.thumbnailer.close = () => new Promise<never>(() => {});
const limitMs = Number(process.env.TEST_SHUTDOWN_LIMIT_MS) || undefined;
stopOnSignals(server, { graceMs: config.shutdownGraceMs, limitMs });
log.info(`Confab listening on ${server.url} (data: ${config.dataDir})`);
