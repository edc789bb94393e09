/**
 * The channel area's hot statements use indexes (EXPLAIN QUERY PLAN): subscriptions of a channel,
 * a channel's activity, topic lists (all, and those a user received), a user's topic preferences.
 */
import t from 'tap';
import { Store } from '../../src/storage/store.js';

t.test('hot channel queries are index searches', (t) => {
  const store = Store.open(t.testdir());
  t.teardown(() => store.close());
  const plan = (sql: string, ...args: unknown[]) =>
    (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[])
      .map((r) => r.detail)
      .join(' | ');
  const cases: [string, string, unknown[]][] = [
    [
      'subscriptions of a channel',
      'SELECT * FROM subscriptions WHERE stream_id = ? ORDER BY user_id',
      [1],
    ],
    ['one subscription', 'SELECT * FROM subscriptions WHERE user_id = ? AND stream_id = ?', [1, 1]],
    ['first message of a channel', 'SELECT MIN(id) FROM messages WHERE stream_id = ?', [1]],
    [
      'newest message of a channel',
      'SELECT date_sent FROM messages WHERE stream_id = ? ORDER BY id DESC LIMIT 1',
      [1],
    ],
    [
      'topics of a channel',
      'SELECT topic, MAX(id) AS max_id FROM messages WHERE stream_id = ? GROUP BY topic',
      [1],
    ],
    [
      'topics a user received',
      `SELECT m.topic, MAX(m.id) FROM user_messages um JOIN messages m ON m.id = um.message_id
       WHERE um.user_id = ? AND m.stream_id = ? GROUP BY m.topic`,
      [1, 1],
    ],
    ['topic preferences of a user', 'SELECT * FROM user_topics WHERE user_id = ?', [1]],
  ];
  for (const [name, sql, args] of cases) {
    const p = plan(sql, ...args);
    t.match(p, /SEARCH/, `${name}: ${p}`);
    t.notMatch(
      p,
      /SCAN (subscriptions|messages|user_messages|user_topics)\b(?! USING)/,
      `${name}: no table scan`,
    );
  }
  t.end();
});
