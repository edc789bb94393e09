/**
 * web/state/channel-settings.ts: the privacy choices as the API's parameters and back, the new
 * channel's checks and request, what a user may change in a channel (as the server's
 * src/lib/channel-permissions.ts decides), and the members kept by the events, also those that
 * arrive while the members are being fetched.
 */
import t from 'tap';
import type { ServerEvent } from '../../src/client/types.js';
import {
  ChannelMembers,
  channelPermissions,
  creatableChoices,
  CREATABLE,
  type PermissionFacts,
} from '../../web/state/channel-settings.js';
import {
  checkNewChannel,
  PRIVACY_CHOICES,
  createParams,
  privacyLabel,
  privacyOf,
  privacyChangeText,
  privacyChoicesFor,
  privacyParams,
  membersMatching,
  sortMembers,
} from '../../web/state/channel-forms.js';
import type { GroupSetting } from '../../web/state/groups.js';
import { PAGE_SIZE, pageOf } from '../../web/state/users.js';

t.test('privacy: the choices, their parameters, and read back', (t) => {
  for (const p of ['public', 'private-shared', 'private-protected'] as const) {
    const params = privacyParams(p);
    t.equal(privacyOf(params), p, `${p} round-trips`);
  }
  t.same(privacyParams('public'), { invite_only: false, history_public_to_subscribers: true });
  t.same(privacyParams('private-shared'), {
    invite_only: true,
    history_public_to_subscribers: true,
  });
  t.same(privacyParams('private-protected'), {
    invite_only: true,
    history_public_to_subscribers: false,
  });
  t.equal(privacyOf({ invite_only: true }), 'private-shared', 'no history field: shared');
  t.equal(privacyOf({ invite_only: false, is_web_public: true }), 'web-public');
  t.equal(privacyLabel('private-protected'), 'Private, protected history');
  t.equal(privacyLabel('web-public'), 'Web-public');
  t.end();
});

t.test("a channel's privacy changed: what is offered, what the confirmation says", (t) => {
  t.same(privacyChoicesFor('public', ['public', 'private-shared', 'private-protected']), [
    'public',
    'private-shared',
    'private-protected',
  ]);
  t.same(
    privacyChoicesFor('private-shared', ['public']),
    ['public', 'private-shared'],
    'only what one may create, and what it is',
  );
  t.same(privacyChoicesFor('public', []), ['public'], 'nothing to change to');
  t.equal(privacyChangeText('public', 'public'), null, 'no change');
  t.match(privacyChangeText('public', 'private-protected'), /others lose access.*sent after/);
  t.match(privacyChangeText('public', 'private-shared'), /others lose access.*earlier ones/);
  t.match(privacyChangeText('private-shared', 'public'), /Everyone in the organization/);
  t.notMatch(
    privacyChangeText('private-shared', 'private-protected'),
    /lose access/,
    'between private kinds: only the history',
  );
  t.end();
});

t.test('a new channel: checks and the request', (t) => {
  const taken = (n: string) => n.toLowerCase() === 'general';
  const f = { name: '  design ', description: ' Logos ', privacy: 'public' as const, members: [1] };
  t.equal(checkNewChannel(f, taken), null, 'fine');
  t.equal(checkNewChannel({ ...f, name: '   ' }, taken), 'Choose a name for the new channel.');
  t.equal(
    checkNewChannel({ ...f, name: 'General' }, taken),
    'A channel with this name already exists.',
    'taken, whatever the case',
  );
  t.match(checkNewChannel({ ...f, name: 'x'.repeat(61) }, taken), /at most 60 characters/);
  t.match(
    checkNewChannel({ ...f, description: 'x'.repeat(11) }, taken, {
      maxName: 60,
      maxDescription: 10,
    }),
    /at most 10 characters/,
  );
  t.match(checkNewChannel({ ...f, members: [] }, taken), /at least one person/);
  t.same(
    createParams({ ...f, privacy: 'private-protected', members: [1, 3, 1] }),
    {
      name: 'design',
      description: 'Logos',
      invite_only: true,
      history_public_to_subscribers: false,
      principals: [1, 3],
    },
    'trimmed, the privacy as parameters, each person once',
  );
  t.end();
});

t.test("permissions, as the server's rules", (t) => {
  const ADMINS = 10;
  const MEMBERS = 12;
  const NOBODY = 13;
  const mine = new Set([MEMBERS]);
  const facts = (o: Partial<PermissionFacts> = {}): PermissionFacts => ({
    admin: false,
    guest: false,
    subscribed: true,
    inGroup: (g: GroupSetting | undefined) =>
      typeof g === 'number' ? mine.has(g) : (g?.direct_members.includes(1) ?? false),
    realmAddSubscribers: MEMBERS,
    ...o,
  });
  const ch = {
    invite_only: false,
    can_add_subscribers_group: NOBODY,
    can_remove_subscribers_group: ADMINS,
    can_administer_channel_group: NOBODY,
    can_subscribe_group: NOBODY,
  };
  t.same(channelPermissions(ch, facts()), {
    administer: false,
    addMembers: true,
    removeMembers: false,
  });
  t.same(channelPermissions(ch, facts({ admin: true })), {
    administer: true,
    addMembers: true,
    removeMembers: true,
  });
  t.same(
    channelPermissions(
      { ...ch, can_administer_channel_group: { direct_members: [1], direct_subgroups: [] } },
      facts({ realmAddSubscribers: NOBODY }),
    ),
    { administer: true, addMembers: true, removeMembers: true },
    "the channel's administrators (its creator) do all three",
  );
  t.equal(
    channelPermissions(ch, facts({ realmAddSubscribers: NOBODY })).addMembers,
    false,
    'not in the realm\'s "add subscribers" group',
  );
  const priv = { ...ch, invite_only: true };
  t.equal(
    channelPermissions(priv, facts({ admin: true, subscribed: false })).addMembers,
    false,
    'an administrator not in a private channel may not add others (no access to its content)',
  );
  t.same(
    channelPermissions(priv, facts({ admin: true, subscribed: false })),
    { administer: true, addMembers: false, removeMembers: true },
    'but may administer it and remove people',
  );
  t.equal(
    channelPermissions(
      { ...priv, can_add_subscribers_group: MEMBERS },
      facts({ subscribed: false, realmAddSubscribers: NOBODY }),
    ).addMembers,
    true,
    "its can_add_subscribers_group may, without being in it (reference's feature level 349)",
  );
  t.same(
    channelPermissions(
      { ...ch, can_administer_channel_group: MEMBERS, can_add_subscribers_group: MEMBERS },
      facts({ guest: true }),
    ),
    { administer: false, addMembers: false, removeMembers: false },
    "a guest counts in none of the channel's groups",
  );
  t.end();
});

t.test('the kinds of channel one may create', (t) => {
  const MEMBERS = 12;
  const ADMINS = 10;
  const inGroup = (g: GroupSetting | undefined) => g === MEMBERS;
  t.same(creatableChoices(inGroup, { publicGroup: MEMBERS, privateGroup: MEMBERS }), [
    'public',
    'private-shared',
    'private-protected',
  ]);
  t.same(creatableChoices(inGroup, { publicGroup: MEMBERS, privateGroup: ADMINS }), ['public']);
  t.same(creatableChoices(inGroup, { publicGroup: ADMINS, privateGroup: ADMINS }), []);
  t.same(
    creatableChoices(inGroup, { publicGroup: undefined, privateGroup: ADMINS }),
    ['public'],
    'a setting not given: the server decides',
  );
  t.end();
});

t.test('members sorted by name, unknown people last', (t) => {
  const users = new Map([
    [1, { full_name: 'othello' }],
    [2, { full_name: 'Émilie' }],
    [3, { full_name: 'Aaron' }],
  ]);
  t.same(sortMembers([9, 1, 2, 3], users), [3, 2, 1, 9]);
  t.end();
});

t.test('membersMatching: a filter over the sorted members, paged by pageOf', (t) => {
  const users = new Map<number, { user_id: number; full_name: string; email: string }>();
  for (let i = 1; i <= 3000; i++) {
    const n = String(i).padStart(4, '0');
    users.set(i, { user_id: i, full_name: `Member ${n}`, email: `m${n}@example.com` });
  }
  users.set(3001, { user_id: 3001, full_name: 'Élise Durand', email: 'elise@example.com' });
  const started = performance.now();
  const sorted = sortMembers([...users.keys()].reverse(), users);
  const took = performance.now() - started;
  t.ok(took < 500, `3001 members sorted in ${Math.round(took)} ms`);
  t.same(sorted.slice(0, 2), [3001, 1], 'by name, accents aside');

  const all = membersMatching(sorted, users, '');
  t.equal(all.length, 3001, 'no filter: everyone');
  const first = pageOf(all, PAGE_SIZE);
  t.equal(first.rows.length, PAGE_SIZE, `the first ${PAGE_SIZE}`);
  t.same(first.rows.slice(0, 3), [3001, 1, 2]);
  t.equal(first.more, 'Show 100 more (100 of 3,001 shown)');
  const last = pageOf(all, 3000);
  t.equal(last.more, 'Show 1 more (3,000 of 3,001 shown)', 'the last page: what is left');
  t.equal(pageOf(all, 3100).more, null, 'all drawn: no more');

  t.same(membersMatching(sorted, users, 'eli'), [3001], 'by name');
  t.same(membersMatching(sorted, users, 'm0042'), [42], 'by e-mail');
  t.equal(membersMatching(sorted, users, 'member 01').length, 100, 'words beginning the name');
  t.same(membersMatching(sorted, users, 'nobody'), []);
  t.same(
    membersMatching([5, 77], new Map([[5, { user_id: 5, full_name: 'Ann', email: 'a@x' }]]), 'ann'),
    [5],
    'someone unknown matches no filter',
  );
  t.end();
});

t.test('members kept by the events, also while fetched', (t) => {
  const SELF = 1;
  const m = new ChannelMembers(SELF);
  const peer = (op: 'peer_add' | 'peer_remove', stream: number, users: number[]): ServerEvent => ({
    type: 'subscription',
    op,
    stream_ids: [stream],
    user_ids: users,
    id: 0,
  });
  const apply = (e: ServerEvent) => m.apply(e as Parameters<ChannelMembers['apply']>[0]);
  t.equal(m.get(5), undefined, 'not known before the fetch');
  apply(peer('peer_add', 5, [7]));
  t.equal(m.get(5), undefined, 'an event does not make it known');
  t.equal(m.shouldFetch(5), true, 'fetched');
  t.equal(m.shouldFetch(5), false, 'once at a time');
  // While the fetch is on its way: 3 joins, 2 leaves, 4 joins and leaves.
  apply(peer('peer_add', 5, [3]));
  apply(peer('peer_remove', 5, [2]));
  apply(peer('peer_add', 5, [4]));
  apply(peer('peer_remove', 5, [4]));
  const rev = m.rev.value;
  m.fetched(5, [1, 2, 4]); // taken before or after those: the same end
  t.same([...m.get(5)!].sort(), [1, 3], 'the answer with the events since applied');
  t.ok(m.rev.value > rev, 'a change is signalled');
  t.equal(m.shouldFetch(5), false, 'known: not fetched again');

  apply(peer('peer_add', 5, [8, 9]));
  t.same([...m.get(5)!].sort(), [1, 3, 8, 9], 'peer_add');
  apply({
    type: 'subscription',
    op: 'remove',
    subscriptions: [{ stream_id: 5, name: 'x' }],
    id: 0,
  });
  t.same([...m.get(5)!].sort(), [3, 8, 9], 'the user leaving');
  apply({
    type: 'stream',
    op: 'delete',
    streams: [{ stream_id: 5, name: 'x', description: '', invite_only: true }],
    id: 0,
  });
  t.equal(m.get(5), undefined, 'the channel gone: forgotten');
  t.equal(m.shouldFetch(5), true, 'and asked again if it comes back');
  m.failed(5);
  t.equal(m.shouldFetch(5), true, 'a failed fetch is tried again');
  t.end();
});

t.test('the privacies a channel is created with are the choices the form offers, in order', (t) => {
  t.same(
    PRIVACY_CHOICES.map((c) => c.value),
    CREATABLE,
  );
  t.end();
});
