/**
 * web/state/profile.ts: what a person's profile card shows, as the reference's user card popover
 * shows it — the role's name, the e-mail address the server gives, "Bot" and its owner, a
 * deactivated account, and the local time in the person's time zone.
 */
import t from 'tap';
import type { User, UserGroup } from '../../src/client/types.js';
import {
  groupCard,
  localTime,
  mentionTarget,
  mentionsMe,
  profileCard,
  roleName,
  shownEmail,
} from '../../web/state/profile.js';

const user = (id: number, extra: Partial<User> = {}): User => ({
  user_id: id,
  email: `user${id}@testserver.local`,
  full_name: `User ${id}`,
  is_bot: false,
  is_active: true,
  role: 400,
  ...extra,
});

t.test('role names, by the API values and by the older flags', (t) => {
  const names = [100, 200, 300, 400, 600].map((role) => roleName({ role }));
  t.same(names, ['Owner', 'Administrator', 'Moderator', 'Member', 'Guest']);
  t.equal(roleName({ is_owner: true, is_admin: true }), 'Owner', 'no role: the flags');
  t.equal(roleName({ is_admin: true }), 'Administrator');
  t.equal(roleName({ is_guest: true }), 'Guest');
  t.equal(roleName({}), 'Member');
  t.equal(roleName({ role: 999, is_admin: true }), 'Administrator', 'an unknown value: the flags');
  t.end();
});

t.test('the e-mail address: the real one where the server gives it', (t) => {
  t.equal(
    shownEmail({ email: 'user5@testserver.local', delivery_email: 'hamlet@zulip.com' }),
    'hamlet@zulip.com',
  );
  t.equal(
    shownEmail({ email: 'user5@testserver.local', delivery_email: null }),
    'user5@testserver.local',
    'hidden from this user: the address the realm shows',
  );
  t.equal(shownEmail({ email: 'hamlet@zulip.com' }), 'hamlet@zulip.com', 'none given');
  t.end();
});

t.test('local time in a time zone, 12 or 24 hours', (t) => {
  // 2026-12-06 07:05 UTC.
  const now = Date.UTC(2026, 11, 6, 7, 5);
  t.equal(localTime('Asia/Tokyo', now, false), '4:05 PM');
  t.equal(localTime('Asia/Tokyo', now, true), '16:05');
  t.equal(localTime('America/New_York', now, false), '2:05 AM');
  t.equal(localTime('America/New_York', now, true), '02:05');
  t.equal(localTime('UTC', Date.UTC(2026, 11, 6, 0, 30), false), '12:30 AM', 'midnight is 12');
  t.equal(localTime('UTC', Date.UTC(2026, 11, 6, 0, 30), true), '00:30');
  t.equal(localTime('UTC', Date.UTC(2026, 11, 6, 12, 0), false), '12:00 PM', 'noon is 12 PM');
  t.equal(localTime('', now, false), undefined, 'no time zone set');
  t.equal(localTime(undefined, now, false), undefined);
  t.equal(localTime('Mars/Olympus_Mons', now, false), undefined, 'one the browser does not know');
  t.end();
});

t.test("a person's card", (t) => {
  const users = new Map<number, User>([
    [1, user(1, { full_name: 'Hamlet', delivery_email: 'hamlet@zulip.com', timezone: 'UTC' })],
    [2, user(2, { full_name: 'Iago', role: 200, timezone: 'Asia/Tokyo' })],
    [3, user(3, { full_name: 'Gone', is_active: false, timezone: 'UTC', role: 600 })],
    [4, user(4, { full_name: 'Deploy Bot', is_bot: true, bot_owner_id: 2, role: 400 })],
    [5, user(5, { full_name: 'Notification Bot', is_bot: true, bot_owner_id: null })],
    [6, user(6, { full_name: 'Orphan Bot', is_bot: true, bot_owner_id: 99, is_active: false })],
  ]);
  const ctx = { users, selfId: 1, nowMs: Date.UTC(2026, 11, 6, 7, 5), twentyFour: false };
  const me = profileCard(1, ctx)!;
  t.match(me, {
    userId: 1,
    name: 'Hamlet',
    email: 'hamlet@zulip.com',
    role: 'Member',
    isBot: false,
    botOwner: null,
    deactivated: false,
    localTime: '7:05 AM',
    isMe: true,
    canMessage: true,
  });
  t.match(profileCard(2, ctx), {
    email: 'user2@testserver.local',
    role: 'Administrator',
    localTime: '4:05 PM',
    isMe: false,
  });
  t.match(
    profileCard(2, { ...ctx, twentyFour: true }),
    { localTime: '16:05' },
    'the 24-hour setting',
  );
  t.match(
    profileCard(3, ctx),
    { role: 'Guest', deactivated: true, localTime: undefined, canMessage: false },
    'deactivated: no local time (as the reference), no direct message',
  );
  t.match(
    profileCard(4, ctx),
    { role: 'Bot', isBot: true, botOwner: { id: 2, name: 'Iago' }, localTime: undefined },
    'a bot: "Bot" and its owner',
  );
  t.match(profileCard(5, ctx), { role: 'Bot', botOwner: null }, 'a bot without an owner');
  t.match(
    profileCard(6, ctx),
    { role: 'Bot', botOwner: null, deactivated: true },
    'an owner the app does not know is not named',
  );
  t.equal(profileCard(42, ctx), undefined, 'someone the app does not know');
  t.end();
});

t.test('what a mention opens: a person, a group, nothing for a wildcard', (t) => {
  t.same(mentionTarget('user-mention', { userId: '7' }), { userId: 7 });
  t.same(mentionTarget('user-mention silent', { userId: '7' }), { userId: 7 }, 'silent');
  t.same(mentionTarget('user-group-mention', { userGroupId: '3' }), { groupId: 3 });
  t.same(mentionTarget('user-group-mention silent', { userGroupId: '3' }), { groupId: 3 });
  t.equal(
    mentionTarget('user-mention channel-wildcard-mention', { userId: '*' }),
    null,
    '@all (and @everyone, @channel)',
  );
  t.equal(mentionTarget('topic-mention', {}), null, '@topic');
  t.equal(mentionTarget('user-mention', {}), null, 'no id (an old rendering by address)');
  t.equal(mentionTarget('user-group-mention', { userGroupId: 'x' }), null);
  t.equal(mentionTarget('emoji', { userId: '7' }), null, 'no mention');
  t.end();
});

t.test('which mentions name the user (user-mention-me), as the reference decides', (t) => {
  type G = UserGroup & { direct_subgroup_ids?: number[] };
  const groups = new Map<number, G>([
    [1, { id: 1, name: 'reviewers', description: '', members: [3], direct_subgroup_ids: [2] }],
    [2, { id: 2, name: 'leads', description: '', members: [7], direct_subgroup_ids: [1] }],
    [4, { id: 4, name: 'others', description: '', members: [3] }],
  ]);
  const me = (cls: string, data: { userId?: string; userGroupId?: string }, flags: string[]) =>
    mentionsMe(cls, data, { selfId: 7, flags, groups });
  t.ok(me('user-mention', { userId: '7' }, ['mentioned']), 'oneself, the message flagged');
  t.notOk(me('user-mention', { userId: '7' }, []), 'oneself, not flagged (as the reference)');
  t.ok(me('user-mention silent', { userId: '7' }, ['mentioned']), 'silent, flagged otherwise');
  t.notOk(me('user-mention', { userId: '3' }, ['mentioned']), 'someone else');
  t.ok(
    me('user-mention channel-wildcard-mention', { userId: '*' }, ['stream_wildcard_mentioned']),
    '@all, flagged',
  );
  t.notOk(me('user-mention', { userId: '*' }, ['topic_wildcard_mentioned']), '@all, not flagged');
  t.ok(me('topic-mention', {}, ['topic_wildcard_mentioned']), '@topic, flagged');
  t.notOk(me('topic-mention', {}, ['stream_wildcard_mentioned']), '@topic, not flagged');
  t.ok(me('user-group-mention', { userGroupId: '2' }, []), 'a group of mine, directly');
  t.ok(me('user-group-mention', { userGroupId: '1' }, []), 'through a subgroup (cycle-safe)');
  t.ok(me('user-group-mention silent', { userGroupId: '1' }, []), 'a silent group mention');
  t.notOk(me('user-group-mention', { userGroupId: '4' }, ['mentioned']), 'a group not mine');
  t.notOk(me('user-group-mention', { userGroupId: '9' }, []), 'a group the app does not know');
  t.notOk(me('user-group-mention', { userGroupId: 'x' }, []), 'no id');
  t.notOk(me('emoji', { userId: '7' }, ['mentioned']), 'no mention');
  t.end();
});

t.test("a group's card: name, description, count through subgroups, members by name", (t) => {
  type G = UserGroup & { direct_subgroup_ids?: number[] };
  const groups = new Map<number, G>([
    [
      1,
      {
        id: 1,
        name: 'reviewers',
        description: 'Read first',
        members: [3, 2, 4],
        direct_subgroup_ids: [2, 5],
      },
    ],
    [2, { id: 2, name: 'leads', description: '', members: [2, 5], direct_subgroup_ids: [1] }],
    [5, { id: 5, name: 'role:members', description: '', members: [6], is_system_group: true }],
    [6, { id: 6, name: 'empty', description: '', members: [] }],
  ]);
  const users = new Map<number, User>([
    [2, user(2, { full_name: 'othello' })],
    [3, user(3, { full_name: 'Desdemona' })],
    [4, user(4, { full_name: 'Deploy Bot', is_bot: true })],
  ]);
  const card = groupCard(1, { groups, users, name: (id) => `Someone ${id}` })!;
  t.equal(card.name, 'reviewers');
  t.equal(card.description, 'Read first');
  t.same(
    card.members.map((m) => [m.name, m.isBot]),
    [
      ['Deploy Bot', true],
      ['Desdemona', false],
      ['othello', false],
    ],
    'by name, whatever the case',
  );
  t.same(
    card.subgroups.map((s) => s.name),
    ['leads', 'Members'],
    'subgroups by name, a system group by its display name',
  );
  t.equal(card.count, 5, 'everyone once, through subgroups (a cycle followed once)');
  t.equal(card.deactivated, false);

  const empty = groupCard(6, { groups, users, name: () => '' })!;
  t.same([empty.members, empty.subgroups, empty.count], [[], [], 0], 'no members');
  const loading = groupCard(2, { groups, users, name: (id) => `Someone ${id}` })!;
  t.same(
    loading.members.map((m) => [m.name, m.known]),
    [
      ['othello', true],
      ['Someone 5', false],
    ],
    'one not loaded yet: the name the app has for now',
  );
  t.equal(groupCard(9, { groups, users, name: () => '' }), undefined, 'a group not known');
  t.end();
});
