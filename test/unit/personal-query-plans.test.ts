/**
 * The draft, invitation, alert-word and bot-storage statements use indexes (EXPLAIN QUERY PLAN of the
 * statements the store methods really run, see test/helpers/query-plans.ts): drafts are read per
 * user on every GET /drafts and register; an invitation link is looked up by its key; listings and
 * the new-account revocation read one realm's, one creator's or one address's invitations; the
 * render context reads a realm's alert words; GET/PUT /bot_storage read one user's storage.
 */
import t from 'tap';
import { Store } from '../../src/storage/store.js';
import { assertIndexSearches } from '../helpers/query-plans.js';

t.test('draft, invitation, alert-word and bot-storage queries are index searches', (t) => {
  const store = Store.open(t.testdir(), { backgroundCheckpoint: false });
  t.teardown(() => store.close());
  const cases: [string, () => unknown][] = [
    ['drafts of a user', () => store.drafts.byUser(1)],
    ['newest drafts of a user', () => store.drafts.recentByUser(1, 10)],
    ['one draft', () => store.drafts.byId(1, 1)],
    ['invitation by key', () => store.invitations.byKey('k')],
    ['one invitation', () => store.invitations.byId(1, 1)],
    ['valid invitations of a realm', () => store.invitations.validByRealm(1, 0)],
    ['valid invitations of a creator', () => store.invitations.validByReferrer(1, 0)],
    ['pending invitations of an address', () => store.invitations.pendingEmailFor(1, 'a@b.c')],
    ['alert words of a user', () => store.alertWords.byUser(1)],
    ['alert word rows of a user', () => store.alertWords.rowsByUser(1)],
    ['alert words of a realm', () => store.alertWords.byRealm(1)],
    ['one bot storage value', () => store.bots.storageGet(1, 'k')],
    ['bot storage keys of a user', () => store.bots.storageKeys(1)],
    ['bot storage size of a user', () => store.bots.storageSize(1)],
  ];
  assertIndexSearches(t, store, cases, ['drafts', 'invitations', 'alert_words', 'bot_storage']);
  t.end();
});
