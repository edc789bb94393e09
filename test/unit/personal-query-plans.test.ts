/**
 * The draft, invitation and alert-word statements use indexes (EXPLAIN QUERY PLAN): drafts are
 * read per user on every GET /drafts and register; an invitation link is looked up by its key;
 * listings and the new-account revocation read one realm's, one creator's or one address's
 * invitations; the render context reads a realm's alert words. (Same SQL as
 * src/storage/drafts.ts, invitations.ts, alert-words.ts.)
 */
import t from 'tap';
import { Store } from '../../src/storage/store.js';

t.test('draft, invitation and alert-word queries are index searches', (t) => {
  const store = Store.open(t.testdir());
  t.teardown(() => store.close());
  const plan = (sql: string, ...args: unknown[]) =>
    (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[])
      .map((r) => r.detail)
      .join(' | ');
  const cases: [string, string, unknown[]][] = [
    ['drafts of a user', 'SELECT * FROM drafts WHERE user_id = ? ORDER BY last_edit_time, id', [1]],
    [
      'newest drafts of a user',
      'SELECT * FROM drafts WHERE user_id = ? ORDER BY last_edit_time DESC, id DESC LIMIT ?',
      [1, 1000],
    ],
    ['one draft', 'SELECT * FROM drafts WHERE user_id = ? AND id = ?', [1, 1]],
    ['invitation by key', 'SELECT * FROM invitations WHERE confirmation_key = ?', ['k']],
    [
      'valid invitations of a realm',
      `SELECT * FROM invitations WHERE realm_id = ? AND status = 0
         AND (expiry_date IS NULL OR expiry_date >= ?) ORDER BY multiuse, id`,
      [1, 0],
    ],
    [
      'valid invitations of a creator',
      `SELECT * FROM invitations WHERE referred_by = ? AND status = 0
         AND (expiry_date IS NULL OR expiry_date >= ?) ORDER BY multiuse, id`,
      [1, 0],
    ],
    [
      'pending invitations of an address',
      'SELECT * FROM invitations WHERE realm_id = ? AND email = ? COLLATE NOCASE AND status = 0',
      [1, 'a@b.c'],
    ],
    ['alert words of a user', 'SELECT word FROM alert_words WHERE user_id = ? ORDER BY id', [1]],
    ['alert words of a realm', 'SELECT * FROM alert_words WHERE realm_id = ? ORDER BY id', [1]],
  ];
  for (const [name, sql, args] of cases) {
    const p = plan(sql, ...args);
    t.match(p, /SEARCH/, `${name}: ${p}`);
    t.notMatch(p, /SCAN (drafts|invitations|alert_words)\b(?! USING)/, `${name}: no table scan`);
  }
  t.end();
});
