/**
 * web/state/message-menu.ts: the quote "Quote and reply" writes (a fence no line of the content
 * closes), which messages get which of the menu's items, the versions of an edit history with
 * their changes in words, the readers' order, and "Mark as unread from here"'s rounds.
 */
import t from 'tap';
import {
  historyPolicy,
  historyShown,
  historyVersions,
  markUnreadFrom,
  markUnreadShown,
  quoteText,
  receiptRows,
  unusedFence,
  UNREAD_BATCH,
  withQuote,
  type UnreadRound,
} from '../../web/state/message-menu.js';

t.test('unusedFence: longer than any fence of the content', (t) => {
  t.equal(unusedFence('plain text'), '```');
  t.equal(unusedFence('```\ncode\n```'), '````');
  t.equal(unusedFence('````python\nx\n````\n```\ny\n```'), '`````');
  t.equal(unusedFence('   ```\nindented three\n   ```'), '````', 'up to three spaces before');
  t.equal(unusedFence('    ```\nfour spaces: code, not a fence'), '```');
  t.equal(unusedFence('inline ``` is no fence'), '```');
  t.equal(unusedFence('``\ntwo backticks'), '```');
  t.end();
});

t.test('quoteText: silent mention, "said" link, quote block', (t) => {
  const q = quoteText({
    senderName: 'Othello, the Moor of Venice',
    senderId: 12,
    link: 'http://x.test/#narrow/channel/3-general/topic/t/near/99',
    raw: 'Hello **world**\n',
  });
  t.equal(
    q,
    '@_**Othello, the Moor of Venice|12** [said](http://x.test/#narrow/channel/3-general/topic/t/near/99):\n' +
      '```quote\nHello **world**\n```\n',
  );
  const fenced = quoteText({ senderName: 'A', senderId: 1, link: 'L', raw: '```\nx = 1\n```' });
  t.equal(fenced, '@_**A|1** [said](L):\n````quote\n```\nx = 1\n```\n````\n');
  t.end();
});

t.test('withQuote: after the draft, a blank line between', (t) => {
  t.equal(withQuote('', 'Q\n'), 'Q\n');
  t.equal(withQuote('  \n', 'Q\n'), 'Q\n');
  t.equal(withQuote('my reply\n\n', 'Q\n'), 'my reply\n\nQ\n');
  t.end();
});

t.test('historyPolicy and historyShown', (t) => {
  t.equal(historyPolicy({ realm_message_edit_history_visibility_policy: 'moves' }), 'moves');
  t.equal(historyPolicy({ realm_message_edit_history_visibility_policy: 'none' }), 'none');
  t.equal(historyPolicy({ realm_allow_edit_history: false }), 'none', 'the older setting');
  t.equal(historyPolicy({}), 'all');
  const plain = {};
  const edited = { last_edit_timestamp: 5 };
  const moved = { last_moved_timestamp: 6 };
  const both = { last_edit_timestamp: 5, last_moved_timestamp: 6 };
  t.same(
    [plain, edited, moved, both].map((m) => historyShown('all', m)),
    [false, true, true, true],
    'all: edited or moved',
  );
  t.same(
    [plain, edited, moved, both].map((m) => historyShown('moves', m)),
    [false, false, true, true],
    'moves: moved only',
  );
  t.same(
    [plain, edited, moved, both].map((m) => historyShown('none', m)),
    [false, false, false, false],
    'none: never',
  );
  t.end();
});

t.test('markUnreadShown: read messages, in channels only subscribed ones', (t) => {
  t.equal(markUnreadShown({ type: 'stream' }, true, true), true);
  t.equal(markUnreadShown({ type: 'stream' }, false, true), false, 'already unread');
  t.equal(markUnreadShown({ type: 'stream' }, true, false), false, 'not subscribed');
  t.equal(markUnreadShown({ type: 'private' }, true, false), true, 'a direct message');
  t.end();
});

t.test('historyVersions: kinds, changes in words, diffs', (t) => {
  const names: Record<number, string> = { 1: 'general', 2: 'design' };
  const v = historyVersions(
    [
      { user_id: 7, timestamp: 100, topic: 'a', rendered_content: '<p>one</p>', content: 'one' },
      {
        user_id: 7,
        timestamp: 110,
        topic: 'a',
        rendered_content: '<p>two</p>',
        prev_content: 'one',
        prev_rendered_content: '<p>one</p>',
        content_html_diff: '<p><span class="highlight_text_inserted">two</span></p>',
      },
      { user_id: 8, timestamp: 120, topic: 'b', prev_topic: 'a' },
      { user_id: 9, timestamp: 130, topic: 'b', stream: 2, prev_stream: 1 },
      {
        user_id: 7,
        timestamp: 140,
        topic: 'c',
        prev_topic: 'b',
        rendered_content: '<p>three</p>',
        prev_rendered_content: '<p>two</p>',
        prev_content: 'two',
      },
    ],
    (id) => names[id] ?? '?',
  );
  t.same(
    v.map((x) => x.kind),
    ['Original', 'Edited', 'Moved', 'Moved', 'Edited and moved'],
  );
  t.same(v[0]!.changes, []);
  t.equal(v[0]!.html, '<p>one</p>');
  t.equal(v[0]!.userId, 7);
  t.equal(v[1]!.diff, true, 'the diff where the server gave one');
  t.match(v[1]!.html, /highlight_text_inserted/);
  t.same(v[2]!.changes, ['Topic: a → b']);
  t.equal(v[2]!.html, null, 'a move alone shows no content again');
  t.same(v[3]!.changes, ['Moved from #general to #design']);
  t.same(v[4]!.changes, ['Topic: b → c']);
  t.equal(v[4]!.diff, false, 'no diff given: the version whole');
  t.equal(v[4]!.html, '<p>three</p>');
  t.end();
});

t.test('receiptRows: by name, unknown ids left out', (t) => {
  const users = new Map(
    [
      { user_id: 3, full_name: 'iago' },
      { user_id: 1, full_name: 'Othello' },
      { user_id: 2, full_name: 'Cordelia' },
    ].map((u) => [u.user_id, u]),
  );
  t.same(
    receiptRows([1, 2, 3, 99], (id) => users.get(id)).map((u) => u.full_name),
    ['Cordelia', 'iago', 'Othello'],
  );
  t.same(
    receiptRows([], (id) => users.get(id)),
    [],
  );
  t.end();
});

t.test('markUnreadFrom: rounds until the newest, bounded', async (t) => {
  const sent: UnreadRound[] = [];
  const narrow = [{ operator: 'channel', operand: 5 }];
  let n = await markUnreadFrom(40, narrow, (r) => {
    sent.push(r);
    return Promise.resolve(
      sent.length < 3
        ? { found_newest: false, last_processed_id: 40 + sent.length * 10, processed_count: 10 }
        : { found_newest: true, last_processed_id: 70, processed_count: 4 },
    );
  });
  t.equal(n, 24);
  t.same(
    sent.map((r) => [r.anchor, r.include_anchor]),
    [
      [40, true],
      [50, false],
      [60, false],
    ],
    'from the message, then after the last processed',
  );
  t.same(
    { ...sent[0]!, anchor: 0, include_anchor: false },
    {
      anchor: 0,
      include_anchor: false,
      num_before: 0,
      num_after: UNREAD_BATCH,
      narrow,
      op: 'remove',
      flag: 'read',
    },
  );
  sent.length = 0;
  n = await markUnreadFrom(
    1,
    [],
    (r) => {
      sent.push(r);
      return Promise.resolve({
        found_newest: false,
        last_processed_id: r.anchor + 1,
        processed_count: 1,
      });
    },
    5,
  );
  t.equal(sent.length, 5, 'no more rounds than allowed');
  t.equal(n, 5);
  sent.length = 0;
  await markUnreadFrom(1, [], (r) => {
    sent.push(r);
    return Promise.resolve({ found_newest: false, last_processed_id: null, processed_count: 0 });
  });
  t.equal(sent.length, 1, 'nothing processed: no endless asking');
});
