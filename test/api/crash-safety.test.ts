/**
 * Crash safety (README "Robustness"): the real server as a child process (node dist/src/main.js) on
 * a temporary DATA_DIR, driven through real HTTP.
 *
 * - SIGKILL in the middle of a write load (sends with and without an uploaded file, reactions,
 *   flags, subscriptions): after a restart on the same data, every mutation answered with success
 *   before the kill is there; the database passes integrity and foreign-key checks; derived data
 *   agrees with what it derives from (per-user message rows, the search index, unread counts,
 *   attachment claims and files); the server serves normally.
 * - SIGTERM in the middle: a request already being received is finished and answered, a held poll
 *   is answered, the queues are saved; after a restart the queue is back with a `restart` event.
 * (Starting on damaged data: crash-safety-start.test.ts.)
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t, { type Test } from 'tap';
import { ApiClient, type ApiResponse, type Who } from '../helpers/api.js';
import { manage, startChild } from '../helpers/child-server.js';
import { upload } from '../helpers/uploads.js';

type User = { id: number; email: string; api_key: string };

const client = (url: string) => new ApiClient(url, { realmId: 0, users: {} });

/** A realm with an owner and two members, made with the admin commands (no server running). */
function seed(dataDir: string): User[] {
  const owner = manage(dataDir, [
    'create-realm',
    '--name',
    'Crash',
    '--owner-email',
    'owner@crash.test',
    '--owner-password',
    'a long password',
  ]);
  const users = [owner];
  for (const name of ['ann', 'bob']) {
    users.push(
      manage(dataDir, [
        'create-user',
        '--realm',
        '',
        '--email',
        `${name}@crash.test`,
        '--password',
        'another password',
        '--full-name',
        name,
      ]),
    );
  }
  return users.map((u) => ({
    id: u.user_id as number,
    email: u.email as string,
    api_key: u.api_key as string,
  }));
}

function ok(res: ApiResponse, what: string): Record<string, unknown> {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.body;
}

/** What the load saw answered with success (each must survive a crash). */
type Acknowledged = {
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
function writeLoad(url: string, users: User[], workers: number) {
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
async function checkAcknowledged(t: Test, url: string, users: User[], acked: Acknowledged) {
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
async function checkDatabase(t: Test, dataDir: string, url: string, users: User[]) {
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
async function checkServes(t: Test, url: string, user: User) {
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

async function prepare(url: string, users: User[]) {
  const api = client(url);
  ok(
    await api.post(users[0]!, 'users/me/subscriptions', {
      subscriptions: [{ name: 'load' }],
      principals: users.map((u) => u.id),
    }),
    'the load channel',
  );
}

t.test('SIGKILL in the middle of a write load loses no acknowledged write', async (t) => {
  const dataDir = t.testdir();
  const users = seed(dataDir);
  const first = await startChild(dataDir);
  t.teardown(() => void first.kill('SIGKILL'));
  await prepare(first.url, users);
  const load = writeLoad(first.url, users, 8);
  await load.reached(300);
  const { signal } = await first.kill('SIGKILL'); // requests in flight: sent, not answered
  load.stop();
  await load.done;
  t.equal(signal, 'SIGKILL', 'killed');
  t.ok(load.errors.length > 0, 'requests were in flight when the server died');
  t.ok(load.acked.messages.size > 50, `${load.acked.messages.size} messages acknowledged`);

  const second = await startChild(dataDir);
  t.teardown(() => void second.kill('SIGKILL'));
  await checkAcknowledged(t, second.url, users, load.acked);
  await checkDatabase(t, dataDir, second.url, users);
  await checkServes(t, second.url, users[1]!);
  const { code } = await second.kill('SIGTERM');
  t.equal(code, 0, 'a clean shutdown afterwards');
});

/** Sends a request's head and the first half of its body; returns a function sending the rest. */
function halfSentRequest(url: string, user: User, body: string) {
  const u = new URL(url);
  const sock = net.connect(Number(u.port), u.hostname);
  const auth = 'Basic ' + Buffer.from(`${user.email}:${user.api_key}`).toString('base64');
  const head =
    `POST /api/v1/messages HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: ${auth}\r\n` +
    `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `Connection: close\r\n\r\n`;
  const half = Math.floor(body.length / 2);
  let answer = '';
  sock.on('data', (c: Buffer) => (answer += c.toString()));
  const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
  sock.on('error', () => {});
  const connected = new Promise<void>((resolve) => sock.on('connect', () => resolve()));
  return connected.then(() => {
    sock.write(head + body.slice(0, half));
    return {
      finish: async () => {
        sock.write(body.slice(half));
        await closed;
        return answer;
      },
    };
  });
}

t.test(
  'SIGTERM in the middle of a write load: in-flight requests finish, queues are saved, restart event',
  async (t) => {
    const dataDir = t.testdir();
    const users = seed(dataDir);
    const first = await startChild(dataDir);
    t.teardown(() => void first.kill('SIGKILL'));
    await prepare(first.url, users);
    const api = client(first.url);
    const reg = ok(
      await api.post(users[1]!, 'register', { event_types: ['message', 'restart'] }),
      'register',
    );
    const queueId = reg.queue_id as string;
    const held = api.get(users[1]!, 'events', { queue_id: queueId, last_event_id: -1 });
    const load = writeLoad(first.url, users, 6);
    await load.reached(100);
    // A request whose head and half its body have arrived: in flight when the signal comes.
    const inflight = await halfSentRequest(
      first.url,
      users[2]!,
      new URLSearchParams({
        type: 'stream',
        to: 'load',
        topic: 'late',
        content: 'in flight qwert',
      }).toString(),
    );
    // Everything sent before this answer has been read by the server (one thread, in order).
    ok(await api.get(users[0]!, 'users/me'), 'barrier');
    first.child.kill('SIGTERM');
    await first.waitFor(/SIGTERM: shutting down/);
    load.stop();
    const answer = await inflight.finish();
    t.match(answer, /^HTTP\/1\.1 200 /, 'the request in flight was answered with success');
    const lateId = Number(/"id":(\d+)/.exec(answer)?.[1]);
    t.ok(lateId > 0, 'with its message id');
    const heldRes = await held;
    t.equal(heldRes.status, 200, 'the held poll was answered');
    const { code } = await first.exited;
    t.equal(code, 0, 'exit code 0');
    await load.done;
    for (const err of load.errors) {
      // Only refused connections (after the listening socket closed), never a broken answer.
      t.match(
        String(err),
        /ECONNREFUSED|ECONNRESET|socket hang up/,
        'a load request after closing',
      );
    }
    t.ok(fs.existsSync(path.join(dataDir, 'event-queues.msgpack')), 'queues saved');

    const second = await startChild(dataDir);
    t.teardown(() => void second.kill('SIGKILL'));
    const api2 = client(second.url);
    const seenBefore = (heldRes.body.events as { id: number }[]).map((e) => e.id);
    const lastSeen = seenBefore.length > 0 ? Math.max(...seenBefore) : -1;
    const after = ok(
      await api2.get(users[1]!, 'events', {
        queue_id: queueId,
        last_event_id: lastSeen,
        dont_block: true,
      }),
      'the queue after the restart',
    );
    const evs = after.events as { type: string; message?: { id: number } }[];
    t.ok(
      evs.some((e) => e.type === 'restart'),
      'the restored queue has a restart event',
    );
    const delivered = new Set(
      [...(heldRes.body.events as { message?: { id: number } }[]), ...evs]
        .map((e) => e.message?.id)
        .filter((id) => id !== undefined),
    );
    const lost = [...load.acked.messages.keys(), lateId].filter((id) => !delivered.has(id));
    t.same(lost, [], 'every acknowledged message reached the queue (before or after the restart)');
    await checkAcknowledged(t, second.url, users, load.acked);
    await checkDatabase(t, dataDir, second.url, users);
    await second.kill('SIGTERM');
  },
);
