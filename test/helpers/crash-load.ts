/**
 * The crash-safety tests' load and checks (test/api/crash-safety-*.test.ts): a data directory
 * seeded without a server, a write load through real HTTP that records every write answered with
 * success, and the checks after a restart — acknowledged writes present, database integrity and
 * foreign keys, derived data consistent, the server serving.
 */
import Database from '../../src/storage/sqlite.js';
import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import { Role } from '../../src/lib/roles.js';
import { doCreateRealm } from '../../src/mutations/realms.js';
import { insertUserRow } from '../../src/mutations/users.js';
import { Store } from '../../src/storage/store.js';
import { ApiClient, type ApiResponse, type Who } from './api.js';
import { upload } from './uploads.js';

export type User = { id: number; email: string; api_key: string };

export const client = (url: string) =>
  new ApiClient(url, { realmId: 0, users: {}, notificationBotId: 0 });

/**
 * A realm with an owner and two members written straight into a new data directory (no server
 * running; no password hashing, so a test does not pay for scrypt).
 */
export function seed(dataDir: string): User[] {
  const store = Store.open(dataDir);
  try {
    const now = Math.floor(Date.now() / 1000);
    const owner = doCreateRealm(store, {
      name: 'Crash',
      string_id: '',
      owner_email: 'owner@crash.test',
      owner_full_name: 'Owner',
      owner_password_hash: null,
      owner_can_create_users: true,
      now,
    });
    const users: User[] = [{ id: owner.user_id, email: owner.email, api_key: owner.api_key }];
    for (const name of ['ann', 'bob']) {
      const email = `${name}@crash.test`;
      const api_key = `crashkey${name.padStart(24, '0')}`;
      const id = insertUserRow(store, owner.realm_id, {
        email,
        full_name: name,
        password_hash: null,
        api_key,
        role: Role.MEMBER,
        now,
        waitingPeriodDays: 0,
      });
      users.push({ id, email, api_key });
    }
    return users;
  } finally {
    store.close();
  }
}

export function ok(res: ApiResponse, what: string): Record<string, unknown> {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.body;
}

/** What the load saw answered with success (each must survive a crash). */
export type Acknowledged = {
  messages: Map<number, { sender: number; token: string; attachment: string | null }>;
  reactions: { message: number; user: number; emoji: string }[];
  starred: { message: number; user: number }[];
  read: { message: number; user: number }[];
  subscriptions: { user: number; channel: string }[];
};

const EMOJI = ['smile', 'heart', 'tada', 'octopus', 'rocket'];

/**
 * Workers sending writes until `stop()` is called or the server goes away; every success is
 * recorded. `answered` counts successes (the test kills the server after enough of them).
 */
export function writeLoad(url: string, users: User[], workers: number) {
  const api = client(url);
  const acked: Acknowledged = {
    messages: new Map(),
    reactions: [],
    starred: [],
    read: [],
    subscriptions: [],
  };
  let answered = 0;
  let stopped = false;
  let serial = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  const noteSuccess = () => {
    answered++;
    for (const w of waiters.splice(0)) {
      if (answered >= w.n) w.resolve();
      else waiters.push(w);
    }
  };
  const pickMessage = () => {
    const ids = [...acked.messages.keys()];
    return ids.length > 0 ? ids[(serial * 7919) % ids.length]! : null;
  };
  const one = async (w: number): Promise<void> => {
    const n = serial++;
    const user = users[n % users.length]!;
    const who: Who = user;
    const kind = n % 10;
    if (kind <= 3 || pickMessage() === null) {
      const token = `tok${w}x${n}`;
      let attachment: string | null = null;
      let content = `message ${token} from worker ${w}`;
      if (kind === 3) {
        const up = ok(
          await upload(api, who, [
            { filename: `f${n}.txt`, data: token, contentType: 'text/plain' },
          ]),
          'upload',
        );
        attachment = String(up.url);
        content += ` [file](${attachment})`;
      }
      const res = ok(
        await api.post(who, 'messages', {
          type: 'stream',
          to: 'load',
          topic: `t${n % 5}`,
          content,
        }),
        'send',
      );
      acked.messages.set(res.id as number, { sender: user.id, token, attachment });
    } else if (kind <= 5) {
      const message = pickMessage()!;
      const emoji = EMOJI[n % EMOJI.length]!;
      const res = await api.post(who, `messages/${message}/reactions`, { emoji_name: emoji });
      // Already reacted (a repeat pick) is a refusal, not a success: nothing to check.
      if (res.status !== 200) return;
      acked.reactions.push({ message, user: user.id, emoji });
    } else if (kind <= 7) {
      const message = pickMessage()!;
      const flag = kind === 6 ? 'starred' : 'read';
      ok(await api.post(who, 'messages/flags', { messages: [message], op: 'add', flag }), 'flags');
      (flag === 'starred' ? acked.starred : acked.read).push({ message, user: user.id });
    } else {
      const channel = `c${n}`;
      ok(
        await api.post(who, 'users/me/subscriptions', { subscriptions: [{ name: channel }] }),
        'subscribe',
      );
      acked.subscriptions.push({ user: user.id, channel });
    }
    noteSuccess();
  };
  const errors: unknown[] = [];
  const loops = Array.from({ length: workers }, async (_, w) => {
    while (!stopped) {
      try {
        await one(w);
      } catch (err) {
        errors.push(err);
        return; // the server went away (or refused something; the caller looks at `errors`)
      }
    }
  });
  return {
    acked,
    errors,
    get answered() {
      return answered;
    },
    /** Resolves once `n` writes were answered with success. */
    reached: (n: number) =>
      new Promise<void>((resolve) => {
        if (answered >= n) resolve();
        else waiters.push({ n, resolve });
      }),
    stop: () => {
      stopped = true;
    },
    done: Promise.all(loops),
  };
}

/** Every acknowledged write is visible through the API of the restarted server. */
export async function checkAcknowledged(t: Test, url: string, users: User[], acked: Acknowledged) {
  const api = client(url);
  const byId = new Map(users.map((u) => [u.id, u]));
  for (const u of users) {
    const res = ok(
      await api.get(u, 'messages', {
        anchor: 'newest',
        num_before: 5000,
        num_after: 0,
        narrow: [{ operator: 'channel', operand: 'load' }],
      }),
      'fetch',
    );
    const got = new Map(
      (
        res.messages as {
          id: number;
          sender_id: number;
          content: string;
          flags: string[];
          reactions: { emoji_name: string; user_id: number }[];
        }[]
      ).map((m) => [m.id, m]),
    );
    let missing = 0;
    for (const [id, m] of acked.messages) {
      const found = got.get(id);
      if (!found || found.sender_id !== m.sender || !found.content.includes(m.token)) missing++;
    }
    t.equal(missing, 0, `${u.email}: all ${acked.messages.size} acknowledged messages are there`);
    if (u !== users[0]) continue;
    const reactionsMissing = acked.reactions.filter(
      (r) =>
        !got
          .get(r.message)
          ?.reactions.some((x) => x.emoji_name === r.emoji && x.user_id === r.user),
    );
    t.same(reactionsMissing, [], `all ${acked.reactions.length} acknowledged reactions are there`);
  }
  for (const [list, flag] of [
    [acked.starred, 'starred'],
    [acked.read, 'read'],
  ] as const) {
    let missing = 0;
    for (const f of list) {
      const res = ok(
        await api.get(byId.get(f.user)!, 'messages', { message_ids: [f.message] }),
        'by id',
      );
      const m = (res.messages as { flags: string[] }[])[0];
      if (!m?.flags.includes(flag)) missing++;
    }
    t.equal(missing, 0, `all ${list.length} acknowledged ${flag} flags are there`);
  }
  let missingSubs = 0;
  for (const u of users) {
    const subs = ok(await api.get(u, 'users/me/subscriptions'), 'subscriptions').subscriptions as {
      name: string;
    }[];
    const names = new Set(subs.map((s) => s.name));
    for (const s of acked.subscriptions)
      if (s.user === u.id && !names.has(s.channel)) missingSubs++;
  }
  t.equal(missingSubs, 0, `all ${acked.subscriptions.length} acknowledged subscriptions are there`);
}

/** The database and its derived data, read with a connection of the test's own (read-only). */
export async function checkDatabase(t: Test, dataDir: string, url: string, users: User[]) {
  const db = new Database(path.join(dataDir, 'confab.sqlite3'), { readonly: true });
  try {
    t.same(
      db.pragma('integrity_check', { simple: false }),
      [{ integrity_check: 'ok' }],
      'integrity_check',
    );
    t.same(db.pragma('foreign_key_check'), [], 'foreign_key_check: no dangling reference');
    const q = (sql: string, ...args: unknown[]) => db.prepare(sql).all(...args);
    t.same(
      q(`SELECT m.id FROM messages m WHERE NOT EXISTS
           (SELECT 1 FROM user_messages um WHERE um.message_id = m.id AND um.user_id = m.sender_id)`),
      [],
      'every message has its sender’s row',
    );
    // The load channel's subscribers did not change during the load: every message reached all.
    const load = db.prepare(`SELECT id FROM streams WHERE name = 'load'`).get() as { id: number };
    const subscribers = (
      q(`SELECT user_id FROM subscriptions WHERE stream_id = ? AND active = 1`, load.id) as {
        user_id: number;
      }[]
    ).length;
    t.equal(subscribers, users.length, 'the load channel has every user');
    t.same(
      q(
        `SELECT m.id, count(um.user_id) AS n FROM messages m LEFT JOIN user_messages um ON um.message_id = m.id
          WHERE m.stream_id = ? GROUP BY m.id HAVING n <> ?`,
        load.id,
        subscribers,
      ),
      [],
      'every message has one row per subscriber',
    );
    const messageIds = (q(`SELECT id FROM messages ORDER BY id`) as { id: number }[]).map(
      (r) => r.id,
    );
    const indexed = (
      q(`SELECT rowid AS id FROM messages_fts ORDER BY rowid`) as { id: number }[]
    ).map((r) => r.id);
    t.same(indexed, messageIds, `the search index holds exactly the ${messageIds.length} messages`);
    // Attachments: a claim for each message that links a file, files on disk for every row.
    const attachments = q(`SELECT id, path_id FROM attachments`) as {
      id: number;
      path_id: string;
    }[];
    const badClaims: string[] = [];
    for (const a of attachments) {
      if (!fs.existsSync(path.join(dataDir, 'uploads', a.path_id)))
        badClaims.push(`no file ${a.path_id}`);
      const linking = (
        q(
          `SELECT id FROM messages WHERE instr(content, ?) > 0 ORDER BY id`,
          `/user_uploads/${a.path_id}`,
        ) as {
          id: number;
        }[]
      ).map((r) => r.id);
      const claimed = (
        q(
          `SELECT message_id AS id FROM attachment_messages WHERE attachment_id = ? ORDER BY message_id`,
          a.id,
        ) as {
          id: number;
        }[]
      ).map((r) => r.id);
      if (JSON.stringify(linking) !== JSON.stringify(claimed)) {
        badClaims.push(
          `${a.path_id}: linked by ${linking.join(',')}, claimed by ${claimed.join(',')}`,
        );
      }
    }
    t.same(badClaims, [], `attachment claims and files agree (${attachments.length} attachments)`);
    t.same(
      q(`SELECT m.id FROM messages m WHERE m.has_attachment <> EXISTS
           (SELECT 1 FROM attachment_messages am WHERE am.message_id = m.id)`),
      [],
      'has_attachment agrees with the claims',
    );
    // Unread counts in the register snapshot against the flags.
    const api = client(url);
    for (const u of users) {
      const state = ok(
        await api.post(u, 'register', { fetch_event_types: ['message', 'update_message_flags'] }),
        'register',
      );
      const unread = state.unread_msgs as {
        count: number;
        streams: { unread_message_ids: number[] }[];
      };
      const fromSnapshot = unread.streams
        .flatMap((s) => s.unread_message_ids)
        .sort((a, b) => a - b);
      const fromFlags = (
        q(
          `SELECT message_id AS id FROM user_messages WHERE user_id = ? AND (flags & 1) = 0 ORDER BY message_id`,
          u.id,
        ) as {
          id: number;
        }[]
      ).map((r) => r.id);
      t.same(fromSnapshot, fromFlags, `${u.email}: unread messages agree with the flags`);
      t.equal(unread.count, fromFlags.length, `${u.email}: unread count`);
    }
  } finally {
    db.close();
  }
}

/** The restarted server serves: a send, a search that finds it. */
export async function checkServes(t: Test, url: string, user: User) {
  const api = client(url);
  const sent = ok(
    await api.post(user, 'messages', {
      type: 'stream',
      to: 'load',
      topic: 'after',
      content: 'afterwards zyxwv',
    }),
    'send after restart',
  );
  const found = ok(
    await api.get(user, 'messages', {
      anchor: 'newest',
      num_before: 10,
      num_after: 0,
      narrow: [{ operator: 'search', operand: 'zyxwv' }],
    }),
    'search after restart',
  );
  t.same(
    (found.messages as { id: number }[]).map((m) => m.id),
    [sent.id],
    'a message sent after the restart is stored and found by search',
  );
}

export async function prepare(url: string, users: User[]) {
  const api = client(url);
  ok(
    await api.post(users[0]!, 'users/me/subscriptions', {
      subscriptions: [{ name: 'load' }],
      principals: users.map((u) => u.id),
    }),
    'the load channel',
  );
}
