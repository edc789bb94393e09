/**
 * `npm run bench -- users`: creating users one by one through the realm actor (`user.create`, no
 * password, so no hashing), as an import or the fan-out bench does — each creation is one
 * mutation: the user row, its system-group memberships, the `realm_user add` and group events
 * (to every user), and the read-model refresh. Prints the time for each block of 1,000 users, so
 * a cost that grows with the realm's size shows as slower later blocks.
 *
 * Options (env): BENCH_USERS (default 5000).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { doCreateRealm } from '../src/mutations/realms.js';
import { createServer } from '../src/server.js';
import { fmt, machine } from './lib/stats.js';

export async function usersBench(): Promise<void> {
  const n = Number(process.env.BENCH_USERS ?? 5000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-bench-users-'));
  const server = await createServer({ port: 0, dataDir, scryptN: 1024, rateLimits: null });
  try {
    const owner = doCreateRealm(server.store, {
      name: 'Bench',
      string_id: '',
      owner_email: 'owner@bench.example',
      owner_full_name: 'Owner',
      owner_password_hash: null,
      owner_can_create_users: true,
      now: Math.floor(Date.now() / 1000),
    });
    server.context.realms.noteRealmCreated(owner.realm_id);
    const realm = server.context.realms.get(owner.realm_id)!;
    console.log(`users: ${n} creations through user.create (${machine()})`);
    const started = performance.now();
    let blockStart = started;
    let blockFrom = 1;
    for (let i = 0; i < n; i++) {
      await realm.ask('user.create', {
        acting_user_id: null,
        email: `user${i}@bench.example`,
        full_name: `User ${i}`,
        password_hash: null,
        role: 400,
      });
      if ((i + 1) % 1000 === 0 || i + 1 === n) {
        const t = performance.now();
        console.log(`  users ${blockFrom}–${i + 1}: ${fmt(t - blockStart, 0)} ms`);
        blockStart = t;
        blockFrom = i + 2;
      }
    }
    const total = (performance.now() - started) / 1000;
    console.log(`  total: ${fmt(total, 2)} s (${fmt((total * 1e6) / n, 0)} µs per user)`);
  } finally {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
