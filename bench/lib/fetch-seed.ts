/**
 * The messages bench's fetch part, step one, in a process of its own: a data directory holding one
 * realm of two users and `total` messages over 10 channels, written in bulk through the store by a
 * server that is closed again before the server under test starts on the same directory (as a
 * server started from its disk: its heap and its page cache hold nothing of the seeding).
 *
 * Input: one JSON argument {dataDir, total}.
 * Output: one JSON line {seedSeconds, reader: {email, api_key}, target, middle}: the reading user,
 * the channel whose newest 100 are fetched and a message id in the middle of it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { configureLogging } from '../../src/observability/log.js';
import { createChannel, serverWithUsers } from './seed.js';

const { dataDir, total } = JSON.parse(process.argv[2] ?? '{}') as {
  dataDir: string;
  total: number;
};

configureLogging({ level: 'warn' }); // not the seeding server's start and audit lines
const { server, users, realmId } = await serverWithUsers(2, 'fetch', { dataDir });
const reader = users[0]!;
const channels: number[] = [];
for (let c = 0; c < 10; c++)
  channels.push(
    await createChannel(server, realmId, reader.id, `channel ${c}`, [reader.id, users[1]!.id]),
  );
const store = server.store;
const t0 = performance.now();
const date = Math.floor(Date.now() / 1000);
const CHUNK = 20_000;
const target = channels[3]!;
const targetIds: number[] = [];
for (let start = 0; start < total; start += CHUNK) {
  store.transaction(() => {
    for (let i = start; i < Math.min(total, start + CHUNK); i++) {
      const streamId = channels[i % channels.length]!;
      const content = `message number ${i} about topic ${i % 50}`;
      const id = store.messages.insert({
        realm_id: realmId,
        sender_id: users[1]!.id,
        stream_id: streamId,
        dm_group_id: null,
        topic: `topic ${i % 50}`,
        content,
        rendered_content: `<p>${content}</p>`,
        date_sent: date,
        has_attachment: 0,
        has_image: 0,
        has_link: 0,
        sending_client: 'seed',
      });
      store.messages.insertUserMessage(reader.id, id, 1);
      store.messages.index(id, `topic ${i % 50}`, content);
      if (streamId === target) targetIds.push(id);
    }
  });
}
// The unread index takes the seeded rows before any fetch is timed (a server would, a little at
// a time, in its first seconds: src/storage/store.ts startSettlingUnread).
while (store.transaction(() => store.unread.moveWatermark(100_000)));
await server.close();
// On disk before the server under test starts: no writeback of the seeding under its fetches.
for (const name of fs.readdirSync(dataDir)) {
  const file = path.join(dataDir, name);
  if (!fs.statSync(file).isFile()) continue;
  const fd = fs.openSync(file, 'r');
  fs.fsyncSync(fd);
  fs.closeSync(fd);
}
const seedSeconds = (performance.now() - t0) / 1000;
process.stdout.write(
  JSON.stringify({
    seedSeconds,
    reader: { email: reader.email, api_key: reader.api_key },
    target,
    middle: targetIds[Math.floor(targetIds.length / 2)],
  }) + '\n',
);
process.exit(0);
