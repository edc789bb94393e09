/**
 * The upload area's per-request statements use indexes (EXPLAIN QUERY PLAN): every file download
 * looks an upload up by path id and checks the reader against the messages referencing it.
 * (Same SQL as src/storage/attachments.ts.)
 */
import t from 'tap';
import { Store } from '../../src/storage/store.js';

t.test('upload access queries are index searches', (t) => {
  const store = Store.open(t.testdir());
  t.teardown(() => store.close());
  const plan = (sql: string, ...args: unknown[]) =>
    (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[])
      .map((r) => r.detail)
      .join(' | ');
  const cases: [string, string, unknown[]][] = [
    ['upload by path id', 'SELECT * FROM attachments WHERE path_id = ?', ['1/ab/c/d.txt']],
    ['uploads of a user', 'SELECT * FROM attachments WHERE owner_id = ? ORDER BY id', [1]],
    [
      'did the reader receive a message linking it',
      `SELECT EXISTS (SELECT 1 FROM attachment_messages am
         JOIN user_messages um ON um.message_id = am.message_id AND um.user_id = ?
         WHERE am.attachment_id = ?)`,
      [1, 1],
    ],
    [
      'channels of the messages linking it',
      `SELECT DISTINCT m.stream_id FROM attachment_messages am JOIN messages m ON m.id = am.message_id
       WHERE am.attachment_id = ? AND m.stream_id IS NOT NULL`,
      [1],
    ],
    [
      'uploads a message links',
      `SELECT a.* FROM attachment_messages am JOIN attachments a ON a.id = am.attachment_id
       WHERE am.message_id = ? ORDER BY a.id`,
      [1],
    ],
    [
      'messages linking a user’s uploads',
      `SELECT am.attachment_id, m.id, m.date_sent, m.stream_id FROM attachments a
       JOIN attachment_messages am ON am.attachment_id = a.id
       JOIN messages m ON m.id = am.message_id
       WHERE a.owner_id = ? ORDER BY am.attachment_id, m.id`,
      [1],
    ],
  ];
  for (const [name, sql, args] of cases) {
    const p = plan(sql, ...args);
    t.match(p, /SEARCH/, `${name}: ${p}`);
    t.notMatch(
      p,
      /SCAN (attachments|attachment_messages|messages|user_messages)\b(?! USING)/,
      `${name}: no table scan`,
    );
  }
  t.end();
});
