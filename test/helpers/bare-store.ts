/**
 * A store without a server, for unit tests of the storage layer: a realm, users, and channel
 * messages sent to all of them, written through the store's own statements.
 */
import { MESSAGE_FLAG_BITS } from '../../src/lib/message-flags.js';
import { Store } from '../../src/storage/store.js';

export const READ = MESSAGE_FLAG_BITS.read;

/** A store with a realm and `n` users (ids returned), no background checkpointer or settler. */
export function storeWithUsers(
  dir: string,
  n: number,
  verbose?: (sql: unknown) => void,
): { store: Store; users: number[] } {
  const store = Store.open(dir, { backgroundCheckpoint: false, ...(verbose ? { verbose } : {}) });
  const db = store.db;
  db.prepare(`INSERT INTO realms (string_id, name, date_created) VALUES ('', 'r', 0)`).run();
  const ins = db.prepare(
    `INSERT INTO users (realm_id, email, delivery_email, full_name, api_key, date_joined)
     VALUES (1, ?, ?, 'u', ?, 0)`,
  );
  const users: number[] = [];
  for (let i = 0; i < n; i++)
    users.push(Number(ins.run(`u${i}@r`, `u${i}@r`, `key${i}`).lastInsertRowid));
  return { store, users };
}

/**
 * A channel message written straight through the store (no rendering, no events): received by
 * `recipients` with the flags `flags` gives each; indexed for search. Its id. Runs inside the
 * caller's transaction.
 */
export function insertChannelMessage(
  store: Store,
  m: {
    realmId: number;
    senderId: number;
    streamId: number;
    topic: string;
    content: string;
    dateSent: number;
    recipients: readonly number[];
    flags: (userId: number) => number;
    index?: boolean;
  },
): number {
  const id = store.messages.insert({
    realm_id: m.realmId,
    sender_id: m.senderId,
    stream_id: m.streamId,
    dm_group_id: null,
    topic: m.topic,
    content: m.content,
    rendered_content: `<p>${m.content}</p>`,
    date_sent: m.dateSent,
    has_attachment: 0,
    has_image: 0,
    has_link: 0,
    sending_client: 'test',
  });
  store.messages.insertUserMessages(id, m.recipients, m.recipients.map(m.flags));
  if (m.index ?? true) store.messages.index(id, m.topic, m.content);
  return id;
}

/**
 * A channel message from users[0] to every one of `users` (read by its sender only), indexed for
 * search unless `index` is false; its id.
 */
export function sendToAll(
  store: Store,
  users: readonly number[],
  m: { stream?: number; topic?: string; content?: string; index?: boolean } = {},
): number {
  const { stream = 1, topic = 't', content = 'x', index = true } = m;
  return store.transaction(() =>
    insertChannelMessage(store, {
      realmId: 1,
      senderId: users[0]!,
      streamId: stream,
      topic,
      content,
      dateSent: 0,
      recipients: users,
      flags: (u) => (u === users[0] ? READ : 0),
      index,
    }),
  );
}
