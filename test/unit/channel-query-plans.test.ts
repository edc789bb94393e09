/**
 * The channel area's hot statements use indexes (EXPLAIN QUERY PLAN of the statements the store
 * methods really run, see test/helpers/query-plans.ts): subscriptions of a channel, a channel's
 * activity, topic lists (all, and those a user received), a user's topic preferences.
 */
import t from 'tap';
import { Store } from '../../src/storage/store.js';
import { assertIndexSearches } from '../helpers/query-plans.js';

t.test('hot channel queries are index searches', (t) => {
  const store = Store.open(t.testdir(), { backgroundCheckpoint: false });
  t.teardown(() => store.close());
  const cases: [string, () => unknown][] = [
    ['subscriptions of a channel', () => store.channels.subscriptionsByStream(1)],
    ['subscriber ids of a channel', () => store.channels.allSubscriberIds(1)],
    ['one subscription', () => store.channels.subscription(1, 1)],
    ['first and newest message of a channel', () => store.topics.activity(1)],
    ['topics of a channel', () => store.topics.topicsOfStream(1)],
    ['topics a user received', () => store.topics.topicsReceivedByUser(1, 1)],
    ['topic preferences of a user', () => store.topics.userTopicsOfUser(1)],
    ['one topic preference', () => store.topics.userTopic(1, 1, 'x')],
  ];
  assertIndexSearches(t, store, cases, [
    'subscriptions',
    'messages',
    'user_messages',
    'user_topics',
  ]);
  t.end();
});
