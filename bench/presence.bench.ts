/**
 * `npm run bench -- presence`: BENCH_USERS users (default 2000) each POST /users/me/presence once
 * per simulated minute, the minute compressed into a burst (BENCH_CONNECTIONS keep-alive
 * connections, default 64, from a separate client process). The server's presence clock is the
 * bench's, moved between bursts:
 *
 * 1. first contact: every user's first report (`ping_only`) — each is a new presence;
 * 2. a minute later: modern clients (`last_update_id` from their previous answer) — every active
 *    user's `last_active_time` moves, and each answer carries what changed since that client's
 *    last fetch;
 * 3. 30 s later (a second window of the same users): nothing stored changes.
 *
 * Prints requests/s, p50/p99, answer bytes and the `presence` events emitted for each burst (with
 * the default event limit of 100 users, and again with the limit lifted so the first-contact
 * events are counted), then the cost of writing the changed rows: one batched transaction (what
 * the server does) against one transaction per report (the alternative).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { doCreateRealm } from '../src/mutations/realms.js';
import { insertUserRow } from '../src/mutations/users.js';
import type { PresenceRow } from '../src/storage/presence.js';
import { createServer } from '../src/server.js';
import { runChild } from './lib/child.js';
import { fmt, machine } from './lib/stats.js';

type Result = {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  bytes: number;
  lastIds: number[];
};

async function scenario(nUsers: number, connections: number, eventLimit: number): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-bench-presence-'));
  const clock = { ms: Math.floor(Date.now() / 1000) * 1000 };
  let presenceEvents = 0;
  const server = await createServer({
    port: 0,
    dataDir,
    scryptN: 1024,
    rateLimits: null,
    clock: () => clock.ms,
    presenceEventUserLimit: eventLimit,
    presenceFlushMs: 3_600_000, // flushed by the bench below, to time it
    eventTap: (_realm, batch) => {
      for (const e of batch) if (e.event.type === 'presence') presenceEvents++;
    },
  });
  try {
    const { store, realms } = server.context;
    const now = Math.floor(Date.now() / 1000);
    const owner = doCreateRealm(store, {
      name: 'Bench',
      string_id: '',
      owner_email: 'owner@example.com',
      owner_full_name: 'Owner',
      owner_password_hash: null,
      owner_can_create_users: false,
      now,
    });
    realms.noteRealmCreated(owner.realm_id);
    const users: { email: string; api_key: string }[] = [];
    store.transaction(() => {
      for (let i = 0; i < nUsers; i++) {
        // The client process derives the same addresses and keys from the index.
        const u = {
          email: `user${i}@example.com`,
          api_key: `benchkey${String(i).padStart(24, '0')}`,
        };
        insertUserRow(store, owner.realm_id, {
          ...u,
          full_name: `User ${i}`,
          password_hash: null,
          role: 400,
          now,
          waitingPeriodDays: 0,
        });
        users.push(u);
      }
    });
    const rt = realms.get(owner.realm_id)!;
    console.log(
      `presence: ${nUsers} users, ${connections} connections, event limit ${eventLimit} users (${machine()})`,
    );
    let lastIds: number[] | undefined;
    const burst = async (label: string, mode: 'modern' | 'ping_only') => {
      const before = presenceEvents;
      const r = await runChild<Result>(
        'presence-client.js',
        {
          port: server.port,
          users: users.length,
          connections,
          mode,
          ...(lastIds ? { lastIds } : {}),
        },
        120_000,
      );
      lastIds = r.lastIds;
      console.log(
        `  ${label.padEnd(38)} ${fmt(r.rps, 0).padStart(6)} req/s   p50 ${fmt(r.p50, 2)} ms   p99 ${fmt(r.p99, 2)} ms   ` +
          `${fmt(r.bytes / r.requests / 1024, 1)} KiB/answer   events ${presenceEvents - before}   errors ${r.errors}`,
      );
    };
    await burst('first contact (ping_only)', 'ping_only');
    clock.ms += 60_000;
    await burst('a minute later (last_update_id)', 'modern');
    clock.ms += 30_000;
    await burst('30 s later, second window', 'modern');

    // Writing the changed rows: one batch (the server's way) ...
    const t0 = performance.now();
    const flushed = await rt.ask('presence.flush', {});
    const batchMs = performance.now() - t0;
    // ... against one transaction per report (the same rows again).
    const rows: PresenceRow[] = store.presence.byRealm(owner.realm_id);
    const t1 = performance.now();
    for (const row of rows) store.transaction(() => store.presence.upsertMany([row]));
    const eachMs = performance.now() - t1;
    console.log(
      `  write ${flushed.written} changed presences: one transaction ${fmt(batchMs, 1)} ms; ` +
        `one per report ${fmt(eachMs, 1)} ms (${fmt(rows.length / (eachMs / 1000), 0)} reports/s at most)`,
    );
  } finally {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function presenceBench(): Promise<void> {
  const nUsers = Number(process.env.BENCH_USERS ?? 2000);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
  await scenario(nUsers, connections, 100);
  await scenario(nUsers, connections, nUsers + 1);
}
