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
    whole: boolean,
    query: MessageQuery,
    range: Parameters<typeof store.messageSearch.explain>[1] = newest,
  ) =>
    store.messageSearch
      .explain(query, range, whole)
      .map((r) => r.detail)
      .join(' | ');
  // Each listing of ids and flags, and of whole rows (a listing of rows not kept).
  const cases = (whole: boolean): [string, string, RegExp][] => [
    [
      'a channel, with history',
      plan(whole, q(true, [{ kind: 'channel', id: 3, negated: false }])),
      /^SEARCH m USING INDEX messages_stream \(stream_id=\? AND id<\?\)/,
    ],
    [
      'a topic',
      plan(
        whole,
        q(true, [
          { kind: 'channel', id: 3, negated: false },
          { kind: 'topic', topic: 'x', negated: false },
        ]),
      ),
      /^SEARCH m USING INDEX messages_stream_topic/,
    ],
    [
      'everything received',
      plan(whole, q(false, [])),
      /^SEARCH um USING PRIMARY KEY \(user_id=\? AND message_id<\?\)/,
    ],
    [
      'is:unread',
      plan(whole, q(false, [{ kind: 'flags', mask: 1, set: false, negated: false }])),
      // Above the unread index's watermark, the user's newest rows; below, the unread index.
      /^SEARCH um USING PRIMARY KEY \(user_id=\? AND message_id>\? AND message_id<\?\) \| SEARCH m USING INTEGER PRIMARY KEY \(rowid=\?\) \| SEARCH u USING PRIMARY KEY \(user_id=\? AND message_id<\?\)/,
    ],
    [
      'first unread',
      plan(whole, q(false, [{ kind: 'flags', mask: 1, set: false, negated: false }]), {
        dir: 'after',
        anchor: 0,
        limit: 1,
      }),
      /^SEARCH um USING PRIMARY KEY \(user_id=\? AND message_id>\?\) \| SEARCH m USING INTEGER PRIMARY KEY \(rowid=\?\) \| SEARCH u USING PRIMARY KEY \(user_id=\? AND message_id>\? AND message_id<\?\)/,
    ],
    [
      'is:starred',
      plan(whole, q(false, [{ kind: 'flags', mask: 2, set: true, negated: false }])),
      /^SEARCH um USING INDEX user_messages_starred/,
    ],
    [
      'is:dm',
      plan(whole, q(false, [{ kind: 'flags', mask: 512, set: true, negated: false }])),
      /^SEARCH um USING INDEX user_messages_private/,
    ],
    [
      'one direct conversation',
      plan(whole, q(false, [{ kind: 'dm_group', id: 4, negated: false }])),
      /^SEARCH m USING (COVERING )?INDEX messages_dm_group/,
    ],
    [
      'a protected-history channel',
      plan(whole, q(false, [{ kind: 'channel', id: 3, negated: false }])),
      /^SEARCH m USING (COVERING )?INDEX messages_stream/,
    ],
    [
      'search',
      plan(whole, q(false, [{ kind: 'search', fts: '"x"*', negated: false }])),
      /SCAN messages_fts VIRTUAL TABLE/,
    ],
  ];
  for (const [name, p, re] of [
    ...cases(false),
    ...cases(true).map(([n, p, re]) => [`${n}, whole rows`, p, re] as const),
  ]) {
    t.match(p, re, `${name}: ${p}`);
    t.notMatch(p, /SCAN (m|um)\b(?! USING)/, `${name}: no table scan`);
    t.notMatch(p, /USE TEMP B-TREE/, `${name}: no sort`);
  }
  // The register's unread query (src/storage/messages.ts `unread`): its part at or below the
  // watermark reads the unread index, newest first, without a sort.
  const unread = (
    store.db
      .prepare(
        `EXPLAIN QUERY PLAN SELECT u.message_id AS message_id, x.flags AS flags FROM unread_messages u
         CROSS JOIN user_messages x ON x.user_id = u.user_id AND x.message_id = u.message_id
         WHERE u.user_id = ? AND u.message_id <= ? ORDER BY u.message_id DESC LIMIT ?`,
      )
      .all(1, 1000, 50000) as { detail: string }[]
  ).map((r) => r.detail);
  t.match(
    unread.join(' | '),
    /^SEARCH u USING PRIMARY KEY \(user_id=\? AND message_id<\?\)/,
    'register unread: the unread index',
  );
  t.notMatch(unread.join(' | '), /USE TEMP B-TREE/, 'register unread: no sort');
  t.end();
});
