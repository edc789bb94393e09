/**
 * `npm run bench -- uploads`: file transfer through Confab, loaded from a separate process
 * (bench/lib/transfer-load.ts).
 *
 * - Uploads: POST /api/v1/user_uploads of 1 MiB files (multipart, streamed to disk, moved into
 *   place, recorded by the realm actor), against the same bytes written and renamed by a bare
 *   fs loop in this process (the disk's own ceiling for the same work).
 * - Downloads: GET /user_uploads/<path_id> of a 32 MiB file (authenticated, access checked,
 *   streamed from disk in 64 KiB reads with backpressure), against a bare uWS route sending the
 *   same bytes from memory in one `end()` (the network's ceiling, at the cost of buffering whole
 *   files). Confab's server RSS is sampled during its run: streaming keeps it flat.
 *
 * Options (env): BENCH_SECONDS (default 5 per run), BENCH_CONNECTIONS (default 4).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { closeListenSocket, createBareApp, listen } from '../src/http/uws.js';
import { doCreateRealm } from '../src/mutations/realms.js';
import { createServer } from '../src/server.js';
import { runChild } from './lib/child.js';
import { fmt, machine } from './lib/stats.js';

type TransferResult = {
  requests: number;
  seconds: number;
  rps: number;
  responseBytes: number;
  requestBytes: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
};

const MiB = 1024 * 1024;
const UPLOAD_BYTES = MiB;
const DOWNLOAD_BYTES = 32 * MiB;

export async function uploadsBench(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 4);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-bench-uploads-'));
  const load = (arg: Record<string, unknown>) =>
    runChild<TransferResult>(
      'transfer-load.js',
      { connections, durationMs: seconds * 1000, warmupMs: 1000, ...arg },
      (seconds + 60) * 1000,
    );

  const server = await createServer({
    port: 0,
    dataDir,
    scryptN: 1024,
    rateLimits: null,
    maxFileUploadBytes: DOWNLOAD_BYTES,
  });
  const owner = doCreateRealm(server.store, {
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

  // Uploads (bounded: at most 1,000 files measured).
  const uploads = await load({
    port: server.port,
    method: 'POST',
    path: '/api/v1/user_uploads',
    headers: auth,
    maxRequests: 1000,
    uploadBytes: UPLOAD_BYTES,
  });

  // The disk alone: write 1 MiB to a temporary file and rename it into a fresh directory.
  const rawDir = path.join(dataDir, 'raw');
  const chunk = Buffer.alloc(UPLOAD_BYTES, 0x5a);
  let rawCount = 0;
  const rawStart = performance.now();
  while (performance.now() - rawStart < seconds * 1000 && rawCount < 1000) {
    const tmp = path.join(dataDir, `raw-${rawCount}`);
    fs.writeFileSync(tmp, chunk);
    const dest = path.join(rawDir, crypto.randomBytes(8).toString('hex'));
    fs.mkdirSync(dest, { recursive: true });
    fs.renameSync(tmp, path.join(dest, 'bench.bin'));
    rawCount++;
  }
  const rawSeconds = (performance.now() - rawStart) / 1000;
  fs.rmSync(rawDir, { recursive: true, force: true });

  // Downloads of one large file.
  const big = Buffer.alloc(DOWNLOAD_BYTES);
  crypto.randomFillSync(big);
  const form = new FormData();
  form.append('file', new Blob([big]), 'big.bin');
  const up = await fetch(`${server.url}/api/v1/user_uploads`, {
    method: 'POST',
    headers: auth,
    body: form,
  });
  const upBody = (await up.json()) as { url?: string };
  if (up.status !== 200 || !upBody.url) throw new Error(`upload failed: ${JSON.stringify(upBody)}`);
  const filePath = encodeURI(upBody.url);
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  }, 50);
  const confab = await load({
    port: server.port,
    method: 'GET',
    path: filePath,
    headers: auth,
    maxRequests: 2000,
  });
  clearInterval(sampler);
  await server.close();

  const app = createBareApp();
  app.get('/*', (res) => {
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('Content-Type', 'application/octet-stream').end(big);
    });
  });
  const bare = await listen(app, '127.0.0.1', 0);
  const baseline = await load({
    port: bare.port,
    method: 'GET',
    path: filePath,
    headers: auth,
    maxRequests: 2000,
  });
  closeListenSocket(bare.socket);
  fs.rmSync(dataDir, { recursive: true, force: true });

  const mbps = (bytes: number, s: number) => bytes / MiB / s;
  const upMBps = mbps(uploads.requestBytes, uploads.seconds);
  const rawMBps = mbps(rawCount * UPLOAD_BYTES, rawSeconds);
  const downMBps = mbps(confab.responseBytes, confab.seconds);
  const bareMBps = mbps(baseline.responseBytes, baseline.seconds);
  console.log(
    `uploads bench: ${connections} connections, ${seconds} s per run, ${machine()}, ${os.cpus().length} cores`,
  );
  console.log(
    `upload 1 MiB    Confab ${fmt(uploads.rps, 1)} files/s = ${fmt(upMBps, 1)} MiB/s` +
      `   p50 ${fmt(uploads.p50, 1)} ms   p99 ${fmt(uploads.p99, 1)} ms   errors ${uploads.errors}`,
  );
  console.log(
    `                disk alone (write + rename) ${fmt(rawMBps, 1)} MiB/s; Confab at ${fmt((upMBps / rawMBps) * 100, 1)}%`,
  );
  console.log(
    `download 32 MiB Confab ${fmt(downMBps, 1)} MiB/s   p50 ${fmt(confab.p50, 1)} ms   p99 ${fmt(confab.p99, 1)} ms   errors ${confab.errors}`,
  );
  console.log(
    `                bare uWS from memory ${fmt(bareMBps, 1)} MiB/s; Confab at ${fmt((downMBps / bareMBps) * 100, 1)}%`,
  );
  console.log(
    `server RSS during downloads: ${fmt(rssBefore / MiB, 0)} MiB before, ${fmt(rssPeak / MiB, 0)} MiB peak`,
  );
  console.log(
    JSON.stringify({
      bench: 'uploads',
      date: new Date().toISOString(),
      connections,
      seconds,
      uploads,
      rawMBps,
      downloads: confab,
      bare: baseline,
      rssBefore,
      rssPeak,
    }),
  );
}
