/**
 * Upload access reads use indexes (EXPLAIN QUERY PLAN of the statements the store methods really
 * run, see test/helpers/query-plans.ts): serving a file looks it up by path and asks whether the
 * reader received a message linking it or may read a channel that does; the uploads listing reads
 * a user's files and the messages linking them.
 */
import t from 'tap';
import { Store } from '../../src/storage/store.js';
import { assertIndexSearches } from '../helpers/query-plans.js';

t.test('upload access queries are index searches', (t) => {
  const store = Store.open(t.testdir(), { backgroundCheckpoint: false });
  t.teardown(() => store.close());
  const cases: [string, () => unknown][] = [
    ['upload by path id', () => store.attachments.byPathId('1/ab/c/d.txt')],
    ['uploads of a user', () => store.attachments.byOwner(1)],
    ['did the reader receive a message linking it', () => store.attachments.receivedByUser(1, 1)],
    ['channels of the messages linking it', () => store.attachments.referencingStreamIds(1)],
    ['uploads a message links', () => store.attachments.ofMessage(1)],
    ['messages linking a user’s uploads', () => store.attachments.messagesOfOwner(1)],
    ['messages linking an upload', () => store.attachments.messagesOf(1)],
    ['is an upload linked', () => store.attachments.isClaimed(1)],
  ];
  assertIndexSearches(t, store, cases, [
    'attachments',
    'attachment_messages',
    'messages',
    'user_messages',
  ]);
  t.end();
});
