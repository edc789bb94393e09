/**
 * `npm run bench -- users`: creating users one by one through the realm actor (`user.create`, no
 * password, so no hashing), as an import or the fan-out bench does — each creation is one
 * mutation: the user row, its system-group memberships, the `realm_user add` and group events
 * (to every user), and the read-model refresh. Prints the time for each block of 1,000 users, so
 * a cost that grows with the realm's size shows as slower later blocks.
 *
 * Each creation also sends the Welcome Bot's direct message, as POST /users and invitations do
 * (src/mutations/welcome.ts; rendered once here, as the endpoints render it before each
 * creation); the first creation also makes the realm's Welcome Bot.
 *
 * With BENCH_CHANNEL_MESSAGES=N, the realm first gets a default channel holding N messages, so that
 * each creation also joins it and copies its recent history (src/mutations/new-user-history.ts:
 * up to 1,000 user_messages rows per new user); the first creation is timed on its own.
 *
 * Options (env): BENCH_USERS (default 5000), BENCH_CHANNEL_MESSAGES (default 0).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { subscribeCommand } from '../src/lib/subscribe-command.js';
import { doCreateRealm } from '../src/mutations/realms.js';
import { prepareWelcome } from '../src/queries/welcome.js';
import { createServer } from '../src/server.js';
import { fmt, machine } from './lib/stats.js';

export async function usersBench(): Promise<void> {
  const n = Number(process.env.BENCH_USERS ?? 5000);
  const channelMessages = Number(process.env.BENCH_CHANNEL_MESSAGES ?? 0);
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
    if (channelMessages > 0) await busyDefaultChannel(server, owner, channelMessages);
    const busy = channelMessages > 0 ? `, a default channel of ${channelMessages} messages` : '';
    console.log(`users: ${n} creations through user.create${busy} (${machine()})`);
    const welcome = await prepareWelcome(server.context, realm.view);
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
        welcome,
      });
      if (i === 0) console.log(`  the first: ${fmt(performance.now() - started, 2)} ms`);
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

/**
 * A default channel of `count` messages from the owner, each received by the owner, written in
 * one transaction straight through the store (sending them would take minutes).
 */
async function busyDefaultChannel(
  server: Awaited<ReturnType<typeof createServer>>,
  owner: { realm_id: number; user_id: number },
  count: number,
): Promise<void> {
  const realm = server.context.realms.get(owner.realm_id)!;
  await realm.ask(
    'channel.subscribe',
    subscribeCommand(
      owner.user_id,
      [{ name: 'busy', description: '', rendered_description: '', color: null }],
      { is_default_stream: true },
    ),
  );
  const streamId = realm.view.channels.byName('busy')!.id;
  const store = server.store;
  const now = Math.floor(Date.now() / 1000);
  store.transaction(() => {
    for (let i = 0; i < count; i++) {
      const content = `message ${i} of a busy channel, about as long as a chat message is`;
      const id = store.messages.insert({
        realm_id: owner.realm_id,
        sender_id: owner.user_id,
        stream_id: streamId,
        dm_group_id: null,
        topic: `topic ${i % 50}`,
        content,
        rendered_content: `<p>${content}</p>`,
        date_sent: now - (count - i),
        has_attachment: 0,
        has_image: 0,
        has_link: 0,
        sending_client: 'bench',
      });
      store.messages.insertUserMessages(id, [owner.user_id], [1]);
    }
  });
  // The seeding's WAL written back before the timing starts.
  store.db.pragma('wal_checkpoint(TRUNCATE)');
}
