/**
 * `npm run bench -- edit`: editing and moving messages (PATCH /messages/{id}).
 *
 * 1. content: PATCH content of one's own channel messages (a channel of BENCH_SUBSCRIBERS, 50,
 *    subscribers), BENCH_CONNECTIONS (4) requests in flight: edits/s and latency. The raw
 *    ceiling: a bare better-sqlite3 loop doing what one content edit stores (the row's content,
 *    rendering and history, every recipient's flags row rewritten, the search entry replaced),
 *    one edit per transaction.
 * 2. move: moving a whole topic of BENCH_TOPIC_SIZE (1000) messages to another topic and back
 *    (`propagate_mode=change_all`, no notices), one request at a time: moves/s, messages moved/s,
 *    latency. The raw ceiling: the same rows updated and re-indexed in one transaction.
 *
 * Both run against the same database settings and schema as the server, in this process (the
 * HTTP client shares the two cores; compare ratios, not absolute numbers, across machines).
 * Options (env): BENCH_SECONDS (5), BENCH_SUBSCRIBERS, BENCH_CONNECTIONS, BENCH_TOPIC_SIZE.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inertRendering } from '../src/lib/message-content.js';
import { htmlToText } from '../src/lib/search.js';
import { openDatabase } from '../src/storage/db.js';
import { createChannel, serverWithUsers, type BenchUser as User } from './lib/seed.js';
import { fmt, machine, summarize } from './lib/stats.js';

const env = (name: string, dflt: number) => Number(process.env[name] ?? dflt);

// ---- raw ceilings ----------------------------------------------------------------------------

function rawCeilings(
  seconds: number,
  subscribers: number,
  topicSize: number,
): { edits: number; moves: number } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-bench-edit-raw-'));
  const db = openDatabase(dir);
  try {
    db.pragma('foreign_keys = OFF');
    db.prepare(`INSERT INTO realms (string_id, name, date_created) VALUES ('', 'raw', 0)`).run();
    const insUser = db.prepare(
      `INSERT INTO users (realm_id, email, delivery_email, full_name, api_key, date_joined)
       VALUES (1, ?, ?, 'u', ?, 0)`,
    );
    const users: number[] = [];
    for (let i = 0; i < subscribers; i++)
      users.push(Number(insUser.run(`u${i}@raw`, `u${i}@raw`, `key${i}`).lastInsertRowid));
    const insMsg = db.prepare(
      `INSERT INTO messages (realm_id, sender_id, stream_id, topic, content, rendered_content,
         date_sent) VALUES (1, ?, 1, ?, ?, ?, 0)`,
    );
    const insUm = db.prepare(
      'INSERT INTO user_messages (user_id, message_id, flags) VALUES (?, ?, 0)',
    );
    const insFts = db.prepare('INSERT INTO messages_fts (rowid, topic, body) VALUES (?, ?, ?)');
    const delFts = db.prepare('DELETE FROM messages_fts WHERE rowid = ?');
    const ids: number[] = [];
    db.transaction(() => {
      for (let i = 0; i < topicSize; i++) {
        const id = Number(insMsg.run(users[0], 'A', `m${i}`, `<p>m${i}</p>`).lastInsertRowid);
        for (const u of users) insUm.run(u, id);
        insFts.run(id, 'A', `m${i}`);
        ids.push(id);
      }
    })();
    const upd = db.prepare(
      `UPDATE messages SET content = ?, rendered_content = ?, last_edit_time = 0,
         edit_history = CASE WHEN edit_history IS NULL THEN '[' || ? || ']'
           ELSE '[' || ? || ',' || substr(edit_history, 2) END WHERE id = ?`,
    );
    const umFlags = db.prepare('SELECT user_id, flags FROM user_messages WHERE message_id = ?');
    const setFlags = db.prepare(
      'UPDATE user_messages SET flags = ? WHERE user_id = ? AND message_id = ?',
    );
    let k = 0;
    const edit = db.transaction(() => {
      const id = ids[k++ % ids.length]!;
      const content = `edit ${k}`;
      const entry = JSON.stringify({ user_id: 1, timestamp: 0, prev_content: 'x' });
      upd.run(content, `<p>${content}</p>`, entry, entry, id);
      for (const r of umFlags.all(id) as { user_id: number; flags: number }[])
        setFlags.run(r.flags ^ 8, r.user_id, id);
      delFts.run(id);
      insFts.run(id, 'A', content);
    });
    const move = db.prepare(
      `UPDATE messages SET topic = ?, last_moved_time = 0,
         edit_history = CASE WHEN edit_history IS NULL THEN '[' || ? || ']'
           ELSE '[' || ? || ',' || substr(edit_history, 2) END
       WHERE id IN (SELECT value FROM json_each(?))`,
    );
    const rows = db.prepare(
      `SELECT id, rendered_content FROM messages WHERE stream_id = 1 AND topic = ? COLLATE NOCASE
       ORDER BY id`,
    );
    let topic = 'A';
    const moveAll = db.transaction(() => {
      const next = topic === 'A' ? 'B' : 'A';
      const list = rows.all(topic) as { id: number; rendered_content: string }[];
      const entry = JSON.stringify({ user_id: 1, timestamp: 0, prev_topic: topic, topic: next });
      move.run(next, entry, entry, JSON.stringify(list.map((r) => r.id)));
      for (const r of list) {
        delFts.run(r.id);
        insFts.run(r.id, next, htmlToText(r.rendered_content));
      }
      topic = next;
    });
    const rate = (fn: () => void) => {
      const warm = performance.now() + 500;
      while (performance.now() < warm) fn();
      let n = 0;
      const t0 = performance.now();
      while (performance.now() - t0 < seconds * 1000) {
        fn();
        n++;
      }
      return n / ((performance.now() - t0) / 1000);
    };
    return { edits: rate(() => edit()), moves: rate(() => moveAll()) };
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---- the server ------------------------------------------------------------------------------

async function patch(url: string, who: User, id: number, params: Record<string, string>) {
  const t0 = performance.now();
  const res = await fetch(`${url}/api/v1/messages/${id}`, {
    method: 'PATCH',
    headers: {
      authorization: 'Basic ' + Buffer.from(`${who.email}:${who.api_key}`).toString('base64'),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams(params).toString(),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`PATCH ${id}: ${res.status} ${text}`);
  return performance.now() - t0;
}

export async function editBench(): Promise<void> {
  const seconds = env('BENCH_SECONDS', 5);
  const subscribers = env('BENCH_SUBSCRIBERS', 50);
  const connections = env('BENCH_CONNECTIONS', 4);
  const topicSize = env('BENCH_TOPIC_SIZE', 1000);

  const raw = rawCeilings(seconds, subscribers, topicSize);

  const bench = await serverWithUsers(subscribers, 'edit');
  const { server, users } = bench;
  try {
    const rt = server.context.realms.get(bench.realmId)!;
    const channel = await createChannel(
      server,
      bench.realmId,
      users[0]!.id,
      'bench',
      users.map((u) => u.id),
    );
    const sender = users[0]!;
    const ids: number[] = [];
    for (let i = 0; i < topicSize; i++) {
      const r = await rt.ask('message.send', {
        sender_id: sender.id,
        to: { kind: 'channel', channel, topic: 'A' },
        content: `message ${i}`,
        rendered: inertRendering(`<p>message ${i}</p>`),
        search_text: `message ${i}`,
        client: 'ConfabBench',
        read_by_sender: true,
      });
      ids.push(r.id);
    }
    const url = server.url;

    // 1. content edits, `connections` in flight.
    const editLat: number[] = [];
    let k = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (performance.now() - t0 < seconds * 1000) {
          const id = ids[k++ % ids.length]!;
          editLat.push(await patch(url, sender, id, { content: `edited ${k} **bold**` }));
        }
      }),
    );
    const editRate = editLat.length / ((performance.now() - t0) / 1000);

    // 2. whole-topic moves, one at a time.
    const moveLat: number[] = [];
    let topic = 'A';
    const t1 = performance.now();
    while (performance.now() - t1 < seconds * 1000) {
      const next = topic === 'A' ? 'B' : 'A';
      moveLat.push(
        await patch(url, sender, ids[0]!, {
          topic: next,
          propagate_mode: 'change_all',
          send_notification_to_old_thread: 'false',
          send_notification_to_new_thread: 'false',
        }),
      );
      topic = next;
    }
    const moveRate = moveLat.length / ((performance.now() - t1) / 1000);

    const e = summarize(editLat);
    const m = summarize(moveLat);
    console.log(`edit bench — ${machine()}, ${subscribers} subscribers, topic of ${topicSize}`);
    console.log(
      `content edits: ${fmt(editRate, 0)}/s (raw ceiling ${fmt(raw.edits, 0)}/s, ratio ${fmt(editRate / raw.edits)}); ` +
        `latency p50 ${fmt(e.p50)} ms, p99 ${fmt(e.p99)} ms (${connections} in flight)`,
    );
    console.log(
      `topic moves of ${topicSize}: ${fmt(moveRate, 1)}/s = ${fmt(moveRate * topicSize, 0)} messages/s ` +
        `(raw ceiling ${fmt(raw.moves, 1)}/s, ratio ${fmt(moveRate / raw.moves)}); ` +
        `latency p50 ${fmt(m.p50)} ms, p99 ${fmt(m.p99)} ms`,
    );
    console.log(
      JSON.stringify({
        name: 'edit',
        content_edits_per_s: editRate,
        content_edits_raw_per_s: raw.edits,
        moves_per_s: moveRate,
        moves_raw_per_s: raw.moves,
        topic_size: topicSize,
        edit_p50_ms: e.p50,
        edit_p99_ms: e.p99,
        move_p50_ms: m.p50,
        move_p99_ms: m.p99,
      }),
    );
  } finally {
    await bench.close();
  }
}
