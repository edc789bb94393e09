/**
 * The real server for a test: an ephemeral port, a temporary data directory (removed by tap), a
 * low scrypt cost, the test-only routes, and a seeded realm (see fixtures.ts). Closed at teardown.
 * With CONFAB_TEST_CLUSTER=1, a three-node cluster behind nginx instead (cluster-server.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { createServer, type ConfabServer, type ServerOptions } from '../../src/server.js';
import { seedRealm, type Fixture } from './fixtures.js';
import { ApiClient } from './api.js';
import type { WireEvent } from '../../src/lib/events.js';

/** Whether startServer() makes three-node clusters (CONFAB_TEST_CLUSTER=1, cluster-server.ts). */
export const CLUSTER_MODE = process.env.CONFAB_TEST_CLUSTER === '1';

export type TappedEvent = { realmId: number; event: WireEvent; users: readonly number[] };

export type TestServer = {
  server: ConfabServer;
  /** Every committed event so far, with its audience (see ServerOptions.eventTap). */
  events: TappedEvent[];
  url: string;
  api: ApiClient;
  fx: Fixture;
  dataDir: string;
};

/** What every test server starts with (a cluster's nodes too); a test's options come on top. */
export const TEST_SERVER_OPTIONS = {
  host: '127.0.0.1',
  port: 0,
  scryptN: 1024,
  testRoutes: true,
  externalHost: 'testserver.local',
  // Tests that are not about rate limits would be throttled by their own requests.
  rateLimits: null,
} satisfies ServerOptions;

/** An event tap that records into `events`, then calls the test's own tap if it gave one. */
export function recordingTap(
  events: TappedEvent[],
  userTap: ServerOptions['eventTap'],
): NonNullable<ServerOptions['eventTap']> {
  return (realmId, batch) => {
    for (const e of batch) events.push({ realmId, event: e.event, users: e.users });
    userTap?.(realmId, batch);
  };
}

/** The tests whose fixture directory holds a server already. */
const testDirUsed = new WeakSet<Test>();

/**
 * A data directory for a test's server: the test's fixture directory for its first server, a new
 * temporary one for each further one (`t.testdir()` again would empty the first server's directory
 * under it: ENOTEMPTY, or its files gone); `temporary` when it is to be removed after the server.
 */
function freshDataDir(t: Test): { dir: string; temporary: boolean } {
  if (!testDirUsed.has(t)) {
    testDirUsed.add(t);
    const dir = t.testdir();
    // The test's own `t.testdir()` from now on would empty this directory under its server (its
    // database, its uploads), or fail with ENOTEMPTY as the server writes: refused, saying so.
    t.testdir = () => {
      throw new Error(
        `t.testdir() again would empty the data directory of this test's server (${dir}): ` +
          'make other files elsewhere (fs.mkdtempSync)',
      );
    };
    return { dir, temporary: false };
  }
  return { dir: fs.mkdtempSync(path.join(os.tmpdir(), 'confab-test-')), temporary: true };
}

export async function startServer(t: Test, opts: ServerOptions = {}): Promise<TestServer> {
  if (CLUSTER_MODE) return (await import('./cluster-server.js')).startClusterServer(t, opts);
  const fresh = opts.dataDir === undefined ? freshDataDir(t) : null;
  const dataDir = opts.dataDir ?? fresh!.dir;
  const events: TappedEvent[] = [];
  const server = await createServer({
    ...TEST_SERVER_OPTIONS,
    ...opts,
    dataDir,
    eventTap: recordingTap(events, opts.eventTap),
  });
  t.teardown(async () => {
    await server.close();
    if (fresh?.temporary) fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const fx = await seedRealm(server);
  return { server, url: server.url, api: new ApiClient(server.url, fx), fx, dataDir, events };
}

/**
 * The server again on a data directory a test server left (after `server.close()`): what comes
 * back after a restart. Closed at teardown; the fixture's users are the same.
 */
export async function restartServer(
  t: Test,
  dataDir: string,
  fx: Fixture,
): Promise<{ server: ConfabServer; api: ApiClient }> {
  const { testRoutes: _testRoutes, ...restart } = TEST_SERVER_OPTIONS;
  const server = await createServer({ ...restart, dataDir });
  t.teardown(() => server.close());
  return { server, api: new ApiClient(server.url, fx) };
}
