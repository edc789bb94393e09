/**
 * Muted users left out of the lists, as the reference's web app leaves them out (buddy_data.ts,
 * pm_conversations.ts, composebox_typeahead.ts): the people list (filter or not), the
 * direct-message conversations whose other members are all muted (unless being viewed; a group
 * with someone else stays, the muted named "Muted user"), the compose box's suggestions for
 * mentions and recipients (unless named exactly as `Name|id`), and the read receipts' rows.
 * Beyond the lists (message_list_data.ts messages_filtered_for_user_mutes): a one-on-one
 * conversation with someone muted is drawn in its own view only; a group's header names them
 * "Muted user".
 */
import t from 'tap';
import type { Message, ServerEvent } from '../../src/client/types.js';
import {
  ALL,
  dmNarrow,
  isNarrow,
  searchNarrow,
  senderNarrow,
  type Narrow,
} from '../../web/state/narrow.js';
import { mentionCandidates, namedById, type People } from '../../web/state/autocomplete.js';
import { receiptRows } from '../../web/state/message-menu.js';
import {
  drawnForMutes,
  listedDms,
  listedName,
  listedNames,
  muteExplained,
  MutedUsers,
  MUTED_NAME,
} from '../../web/state/muted-users.js';
import { peopleList, type PresenceStatus } from '../../web/state/presence.js';
import { chatState } from '../helpers/web-chat.js';

const users = [
  { user_id: 3, full_name: 'Me', email: 'me@x' },
  { user_id: 4, full_name: 'Othello', email: 'othello@x' },
  { user_id: 5, full_name: 'Cordelia', email: 'cordelia@x' },
  { user_id: 6, full_name: 'Oswald', email: 'oswald@x' },
  { user_id: 7, full_name: 'Oswald', email: 'oswald2@x' },
];
const muted = new MutedUsers([
  { id: 4, timestamp: 1 },
  { id: 6, timestamp: 1 },
]);
const isMuted = (id: number) => muted.has(id);

t.test('the people list leaves the muted out, filter or not', (t) => {
  const status = (): PresenceStatus => 'active';
  const ids = (filter: string, hidden?: (id: number) => boolean) =>
    peopleList(users, status, 3, filter, hidden).map((p) => p.user_id);
  t.same(ids(''), [3, 5, 6, 7, 4], 'nobody muted: everyone');
  t.same(ids('', isMuted), [3, 5, 7], 'the muted left out');
  t.same(ids('oth', isMuted), [], 'a filter naming them finds nobody');
  t.same(ids('osw', isMuted), [7], 'their namesake stays');
  t.end();
});

t.test('the direct-message list: conversations with the muted only are left out', (t) => {
  const dms: [string, number][] = [
    ['4', 90],
    ['5', 80],
    ['4,5', 70],
    ['4,6', 60],
    ['3', 50],
  ];
  const keys = (current?: string) =>
    listedDms(dms, muted, current ? (k) => k === current : undefined).map(([k]) => k);
  t.same(keys(), ['5', '4,5', '3'], 'one-on-one and all-muted groups left out; oneself stays');
  t.same(keys('4'), ['4', '5', '4,5', '3'], 'the conversation being viewed stays');
  t.same(keys('4,6'), ['5', '4,5', '4,6', '3'], 'a muted group being viewed too');
  t.same(
    listedDms(dms, new MutedUsers(), () => false).map(([k]) => k),
    ['4', '5', '4,5', '4,6', '3'],
    'nobody muted: all',
  );
  const name = (id: number) => users.find((u) => u.user_id === id)?.full_name ?? '?';
  t.same(
    [4, 5].map((id) => listedName(id, muted, name)),
    [MUTED_NAME, 'Cordelia'],
    'in a group, a muted member reads "Muted user"',
  );
  t.end();
});

t.test('compose suggestions leave the muted out unless named as Name|id', (t) => {
  const p: People = { users: users.filter((u) => u.user_id !== 3), groups: [], hidden: isMuted };
  const offered = (q: string, people = p) =>
    mentionCandidates(q, people, false)
      .filter((c) => c.kind === 'user')
      .map((c) => c.userId);
  t.same(offered('o', { ...p, hidden: undefined }), [4, 6, 7, 5], 'nobody hidden: all who match');
  t.same(offered('o'), [7, 5], 'the muted are not offered');
  t.same(offered('othello'), [], 'not even by their whole name');
  t.same(offered('Othello|4'), [4], 'named exactly with the id: offered');
  t.same(offered('othello|4'), [4], 'in any case');
  t.same(offered('Othello|5'), [], 'a name and an id that do not go together: nobody');
  const named = mentionCandidates('Oswald|6', p, true);
  t.same(
    named.map((c) => c.insert),
    ['@_**Oswald|6**'],
    'alone, inserted with the id that tells namesakes apart',
  );
  t.equal(namedById('Oswald|7', users)?.email, 'oswald2@x');
  t.equal(namedById('Oswald', users), undefined, 'a name alone is no exact naming');
  t.equal(namedById('|7', users), undefined);
  // Wildcards and groups are offered as before.
  const withGroups: People = {
    ...p,
    groups: [{ id: 1, name: 'othellos', description: 'the Othello fans' }],
  };
  t.same(
    mentionCandidates('oth', withGroups, false).map((c) => c.kind),
    ['group'],
    'a group matching the muted user’s name stays',
  );
  t.end();
});

t.test('read receipts: someone muted since the answer is left out', (t) => {
  const byId = (id: number) => users.find((u) => u.user_id === id);
  t.same(
    receiptRows([4, 5, 7], byId).map((u) => u.user_id),
    [5, 7, 4],
    'by name, nobody hidden',
  );
  t.same(
    receiptRows([4, 5, 7], byId, isMuted).map((u) => u.user_id),
    [5, 7],
    'the muted left out',
  );
  t.end();
});

t.test('the confirmation says muting leaves them out of the lists', (t) => {
  const text = muteExplained('Othello');
  t.match(text, /Othello will be left out of the people list, your direct message conversations/);
  t.match(text, /not see whether you read their messages/);
  t.end();
});

t.test(
  'which direct messages a view draws: one-on-one with the muted only in their own view',
  (t) => {
    t.ok(drawnForMutes(null, muted, false), "a channel's message");
    t.notOk(drawnForMutes([4], muted, false), 'one-on-one with someone muted');
    t.ok(drawnForMutes([4], muted, true), "in that conversation's own view");
    t.ok(drawnForMutes([5], muted, false), 'one-on-one with someone not muted');
    t.ok(drawnForMutes([4, 5], muted, false), 'a group with someone muted stays');
    t.ok(
      drawnForMutes([4, 6], muted, false),
      'a group of the muted only stays too (as the reference)',
    );
    t.ok(drawnForMutes([3], muted, false), 'to oneself');
    t.ok(drawnForMutes([4], new MutedUsers(), false), 'nobody muted');
    t.end();
  },
);

t.test('a direct message\'s header names the muted "Muted user"', (t) => {
  const name = (id: number) => users.find((u) => u.user_id === id)!.full_name;
  t.equal(listedNames([4], muted, name), MUTED_NAME);
  t.equal(listedNames([5, 4], muted, name), `Cordelia, ${MUTED_NAME}`);
  t.equal(listedNames([5], muted, name), 'Cordelia');
  t.end();
});

function dm(id: number, sender: number, others: number[]): Message {
  return {
    id,
    sender_id: sender,
    sender_full_name: '',
    sender_email: '',
    timestamp: id,
    content: `<p>${id}</p>`,
    reactions: [],
    type: 'private',
    subject: '',
    display_recipient: [3, ...others].map((uid) => ({ id: uid, email: '', full_name: '' })),
  };
}

t.test('ChatState draws the views without one-on-one messages with the muted, live', (t) => {
  const s = chatState({ muted_users: [{ id: 4, timestamp: 1 }] });
  const channel: Message = {
    ...dm(1, 5, []),
    type: 'stream',
    stream_id: 9,
    subject: 'lunch',
    display_recipient: 'c',
  };
  const all = [channel, dm(2, 4, [4]), dm(3, 3, [4]), dm(4, 4, [4, 5]), dm(5, 5, [5])];
  const drawn = (n: Narrow, messages: Message[]) => {
    const l = s.list(n);
    s.ingest(messages, n);
    l.setInitial(
      messages.map((m) => m.id),
      true,
      true,
      null,
    );
    return () => s.drawnIds(l);
  };
  const feed = drawn(ALL, all);
  t.same(feed(), [1, 4, 5], 'All messages: not his one-on-one, either way; the group stays');
  const dms = drawn(isNarrow('dm'), all.slice(1));
  t.same(dms(), [4, 5], 'Direct messages likewise');
  const search = drawn(searchNarrow(ALL, 'x'), all);
  t.same(search(), [1, 4, 5], 'a search likewise');
  t.same(drawn(senderNarrow(4), [all[1]!, all[3]!])(), [4], 'his messages: the group one only');
  const own = drawn(dmNarrow([4], 3), [all[1]!, all[2]!]);
  t.same(own(), [2, 3], 'their conversation shows it all');
  s.apply([{ id: 0, type: 'muted_users', muted_users: [] } as unknown as ServerEvent]);
  t.same(feed(), [1, 2, 3, 4, 5], 'unmuted: drawn again at once');
  s.apply([
    {
      id: 1,
      type: 'muted_users',
      muted_users: [{ id: 5, timestamp: 2 }],
    } as unknown as ServerEvent,
  ]);
  t.same(
    feed(),
    [1, 2, 3, 4],
    'another muted: his one-on-one gone at once, his channel message stays',
  );
  t.end();
});
