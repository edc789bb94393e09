/**
 * The message area's hot statements lead with the right index (EXPLAIN QUERY PLAN): a channel's
 * history and topic, a user's messages, unread, direct messages, one direct conversation, search,
 * and the register's unread query.
 */
import t from 'tap';
import type { MessageQuery } from '../../src/storage/message-search.js';
import { Store } from '../../src/storage/store.js';

t.test('narrow queries use the index of what they name', (t) => {
  const store = Store.open(t.testdir(), { backgroundCheckpoint: false });
  t.teardown(() => store.close());
  const q = (includeHistory: boolean, conditions: MessageQuery['conditions']): MessageQuery => ({
    userId: 1,
    realmId: 1,
    includeHistory,
    conditions,
  });
  const newest = { dir: 'before' as const, anchor: 1e16, limit: 101 };
  const plan = (
    query: MessageQuery,
    range: Parameters<typeof store.messageSearch.explain>[1] = newest,
  ) =>
    store.messageSearch
      .explain(query, range)
      .map((r) => r.detail)
      .join(' | ');
  const cases: [string, string, RegExp][] = [
    [
      'a channel, with history',
      plan(q(true, [{ kind: 'channel', id: 3, negated: false }])),
      /^SEARCH m USING INDEX messages_stream \(stream_id=\? AND id<\?\)/,
    ],
    [
      'a topic',
      plan(
        q(true, [
          { kind: 'channel', id: 3, negated: false },
          { kind: 'topic', topic: 'x', negated: false },
        ]),
      ),
      /^SEARCH m USING INDEX messages_stream_topic/,
    ],
    [
      'everything received',
      plan(q(false, [])),
      /^SEARCH um USING PRIMARY KEY \(user_id=\? AND message_id<\?\)/,
    ],
    [
      'is:unread',
      plan(q(false, [{ kind: 'flags', mask: 1, set: false, negated: false }])),
      /^SEARCH um USING INDEX user_messages_unread/,
    ],
    [
      'first unread',
      plan(q(false, [{ kind: 'flags', mask: 1, set: false, negated: false }]), {
        dir: 'after',
        anchor: 0,
        limit: 1,
      }),
      /^SEARCH um USING INDEX user_messages_unread \(user_id=\? AND message_id>\?\)/,
    ],
    [
      'is:starred',
      plan(q(false, [{ kind: 'flags', mask: 2, set: true, negated: false }])),
      /^SEARCH um USING INDEX user_messages_starred/,
    ],
    [
      'is:dm',
      plan(q(false, [{ kind: 'flags', mask: 512, set: true, negated: false }])),
      /^SEARCH um USING INDEX user_messages_private/,
    ],
    [
      'one direct conversation',
      plan(q(false, [{ kind: 'dm_group', id: 4, negated: false }])),
      /^SEARCH m USING INDEX messages_dm_group/,
    ],
    [
      'a protected-history channel',
      plan(q(false, [{ kind: 'channel', id: 3, negated: false }])),
      /^SEARCH m USING INDEX messages_stream/,
    ],
    [
      'search',
      plan(q(false, [{ kind: 'search', fts: '"x"*', negated: false }])),
      /SCAN messages_fts VIRTUAL TABLE/,
    ],
  ];
  for (const [name, p, re] of cases) {
    t.match(p, re, `${name}: ${p}`);
    t.notMatch(p, /SCAN (m|um)\b(?! USING)/, `${name}: no table scan`);
    t.notMatch(p, /USE TEMP B-TREE/, `${name}: no sort`);
  }
  const unread = (
    store.db
      .prepare(
        `EXPLAIN QUERY PLAN SELECT message_id, flags FROM user_messages INDEXED BY user_messages_unread
         WHERE user_id = ? AND (flags & 1) = 0 ORDER BY message_id DESC LIMIT ?`,
      )
      .all(1, 50000) as { detail: string }[]
  ).map((r) => r.detail);
  t.match(unread.join(' | '), /user_messages_unread/, 'register unread: the partial index');
  t.end();
});
