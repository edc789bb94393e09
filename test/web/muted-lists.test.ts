/**
 * Muted users left out of the lists, as the reference's web app leaves them out (buddy_data.ts,
 * pm_conversations.ts, composebox_typeahead.ts): the people list (filter or not), the
 * direct-message conversations whose other members are all muted (unless being viewed; a group
 * with someone else stays, the muted named "Muted user"), the compose box's suggestions for
 * mentions and recipients (unless named exactly as `Name|id`), and the read receipts' rows.
 */
import t from 'tap';
import { mentionCandidates, namedById, type People } from '../../web/state/autocomplete.js';
import { receiptRows } from '../../web/state/message-menu.js';
import {
  listedDms,
  listedName,
  muteExplained,
  MutedUsers,
  MUTED_NAME,
} from '../../web/state/muted-users.js';
import { peopleList, type PresenceStatus } from '../../web/state/presence.js';

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
