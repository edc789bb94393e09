/**
 * `npm run bench -- http`: authenticated GET /api/v1/users/me on Confab against a bare
 * uWebSockets.js route that answers the same JSON bytes, one after the other, each loaded by a
 * separate load-generator process (bench/lib/loadgen.ts). Prints requests/s and p50/p99 latency for
 * both and their ratio. Target (issue #2): Confab ≥ 60% of the bare route's throughput.
 *
 * Options (env): BENCH_SECONDS (default 8), BENCH_CONNECTIONS (default 32).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, closeListenSocket, listen } from '../src/http/uws.js';
import { doCreateRealm } from '../src/mutations/realms.js';
import { createServer } from '../src/server.js';
import { runChild } from './lib/child.js';
import { fmt, machine } from './lib/stats.js';

type LoadResult = {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  errors: number;
};

export async function httpBench(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 8);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-bench-http-'));
  const load = (port: number, headers: Record<string, string>) =>
    runChild<LoadResult>(
      'loadgen.js',
      {
        port,
        path: '/api/v1/users/me',
        headers,
        connections,
        durationMs: seconds * 1000,
        warmupMs: 1500,
      },
      (seconds + 30) * 1000,
    );

  // Confab, with a realm and one user.
  const server = await createServer({ port: 0, dataDir, scryptN: 1024, rateLimits: null });
  const owner = doCreateRealm(server.context.store, {
    name: 'Bench',
    string_id: '',
    owner_email: 'bench@example.com',
    owner_full_name: 'Bench Owner',
    owner_password_hash: null,
    owner_can_create_users: false,
    now: Math.floor(Date.now() / 1000),
  });
  server.context.realms.noteRealmCreated(owner.realm_id);
  const auth = {
    Authorization: 'Basic ' + Buffer.from(`${owner.email}:${owner.api_key}`).toString('base64'),
  };
  const sample = await fetch(`${server.url}/api/v1/users/me`, { headers: auth });
  const body = await sample.text();
  if (sample.status !== 200) throw new Error(`GET /users/me answered ${sample.status}: ${body}`);
  const confab = await load(server.port, auth);
  await server.close();

  // Bare uWS: the same bytes, no parsing, no auth, no lookup.
  const app = createApp();
  app.get('/api/v1/users/me', (res) => {
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(body);
    });
  });
  const bare = await listen(app, '127.0.0.1', 0);
  const baseline = await load(bare.port, auth);
  closeListenSocket(bare.socket);
  fs.rmSync(dataDir, { recursive: true, force: true });

  const ratio = confab.rps / baseline.rps;
  const row = (name: string, r: LoadResult) =>
    `${name.padEnd(28)} ${fmt(r.rps, 0).padStart(9)} req/s   p50 ${fmt(r.p50, 3)} ms   p99 ${fmt(r.p99, 3)} ms   errors ${r.errors}`;
  console.log(
    `http bench: GET /api/v1/users/me, ${connections} connections, ${seconds} s each, ${machine()}, ${os.cpus().length} cores`,
  );
  console.log(row('bare uWebSockets.js route', baseline));
  console.log(row('Confab (auth + realm view)', confab));
  console.log(
    `ratio Confab / bare: ${fmt(ratio * 100, 1)}% of the bare route's throughput (target ≥ 60%)`,
  );
  console.log(
    JSON.stringify({
      bench: 'http',
      date: new Date().toISOString(),
      connections,
      seconds,
      bare: baseline,
      confab,
      ratio,
    }),
  );
}
