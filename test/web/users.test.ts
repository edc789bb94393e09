/**
 * web/state/users.ts: the Users panel's tabs (active people, deactivated people, bots without
 * the system bots) filtered and sorted by name; a page at a time; who may change whose role (only
 * owners make or unmake owners), deactivate (not oneself, an owner only by an owner) and
 * reactivate; what the deactivation's confirmation says (the bots that go too).
 */
import t from 'tap';
import type { User } from '../../src/client/types.js';
import {
  botsOwnedBy,
  canDeactivate,
  canReactivate,
  botDeactivationText,
  deactivationText,
  isAdministrator,
  lastActiveText,
  PAGE_SIZE,
  pageOf,
  roleChoices,
  roleFilterOptions,
  roleOf,
  stepDownQuestion,
  usersOf,
  withRole,
} from '../../web/state/users.js';

const person = (user_id: number, full_name: string, role: number, more: Partial<User> = {}) =>
  ({
    user_id,
    full_name,
    email: `${full_name.toLowerCase().replace(/\W/g, '')}@example.com`,
    is_bot: false,
    is_active: true,
    role,
    ...more,
  }) as User;

const owner = person(1, 'Desdemona', 100);
const admin = person(2, 'Iago', 200);
const moderator = person(3, 'Shiva', 300);
const member = person(4, 'Hamlet', 400);
const guest = person(5, 'Polonius', 600);
const gone = person(6, 'Ophelia', 400, { is_active: false });
const owner2 = person(7, 'Élise Owner', 100);
const bot = person(8, 'Deploy notices', 400, {
  is_bot: true,
  bot_owner_id: 4,
  bot_type: 2,
  email: 'deploys-bot@example.com',
});
const oldBot = person(9, 'Archive bot', 400, { is_bot: true, bot_owner_id: 4, is_active: false });
const systemBot = person(10, 'Notification Bot', 400, { is_bot: true, bot_owner_id: null });
const all = [owner, admin, moderator, member, guest, gone, owner2, bot, oldBot, systemBot];

const names = (us: User[]) => us.map((u) => u.full_name);

t.test('the tabs, by name', (t) => {
  t.same(names(usersOf(all, 'active')), [
    'Desdemona',
    'Élise Owner',
    'Hamlet',
    'Iago',
    'Polonius',
    'Shiva',
  ]);
  t.same(names(usersOf(all, 'deactivated')), ['Ophelia']);
  t.same(names(usersOf(all, 'bots')), ['Deploy notices', 'Archive bot'], 'active bots first');
  t.end();
});

t.test('the filter: words of the name, the start of an address', (t) => {
  t.same(names(usersOf(all, 'active', 'eli')), ['Élise Owner'], 'accents folded');
  t.same(names(usersOf(all, 'active', 'owner')), ['Élise Owner'], 'any word of the name');
  t.same(names(usersOf(all, 'active', 'hamlet@')), ['Hamlet'], 'an address');
  t.same(names(usersOf(all, 'active', 'zzz')), []);
  t.same(names(usersOf(all, 'deactivated', 'ham')), [], 'only the tab’s users');
  const hidden = person(11, 'Cordelia', 400, {
    email: 'user11@example.com',
    delivery_email: 'cordelia@real.example',
  });
  t.same(names(usersOf([hidden], 'active', 'cordelia@real')), ['Cordelia'], 'the real address');
  t.same(names(usersOf([hidden], 'active', 'user11')), ['Cordelia'], 'the shown address');
  const renamed = { ...member, full_name: 'Horatio' };
  t.same(names(usersOf([member], 'active', 'ham')), ['Hamlet']);
  t.same(names(usersOf([renamed], 'active', 'hor')), ['Horatio'], 'a changed user: the new name');
  t.same(names(usersOf([renamed], 'active', 'ham')), ['Horatio'], 'still their address');
  t.same(names(usersOf([{ ...renamed, email: 'h@x.org' }], 'active', 'ham')), []);
  t.end();
});

t.test('a page at a time', (t) => {
  const many = Array.from({ length: 250 }, (_, i) => i);
  let p = pageOf(many, PAGE_SIZE);
  t.equal(p.rows.length, 100);
  t.equal(p.more, 'Show 100 more (100 of 250 shown)');
  p = pageOf(many, 200);
  t.equal(p.more, 'Show 50 more (200 of 250 shown)');
  p = pageOf(many, 300);
  t.equal(p.rows.length, 250);
  t.equal(p.more, null, 'all shown');
  t.equal(pageOf([1, 2], PAGE_SIZE).more, null);
  t.equal(
    pageOf(Array.from({ length: 12_345 }), PAGE_SIZE).more,
    'Show 100 more (100 of 12,345 shown)',
  );
  t.end();
});

t.test('roles: administrators change them, owners alone make or unmake owners', (t) => {
  const roles = (viewer: User, target: User) =>
    roleChoices(viewer, target).choices?.map((c) => c.role);
  t.same(roles(owner, member), [100, 200, 300, 400, 600], 'an owner: every role');
  t.same(roles(owner, owner2), [100, 200, 300, 400, 600], 'another owner’s');
  t.same(roles(owner, owner), [100, 200, 300, 400, 600], 'their own (the server guards the last)');
  t.same(roles(admin, member), [200, 300, 400, 600], 'an administrator: not owner');
  t.same(roles(admin, admin), [200, 300, 400, 600], 'their own');
  t.equal(roleChoices(admin, owner).why, 'Only owners can change an owner’s role.');
  t.equal(roleChoices(moderator, member).why, 'Only administrators can change roles.');
  t.equal(roleChoices(member, guest).why, 'Only administrators can change roles.');
  t.ok(roleChoices(owner, bot).why, 'not a bot’s');
  t.ok(roleChoices(owner, gone).why, 'not a deactivated account’s');
  t.same(
    roleChoices(owner, member).choices?.map((c) => c.name),
    ['Owner', 'Administrator', 'Moderator', 'Member', 'Guest'],
  );
  t.end();
});

t.test('the older flags where there is no role', (t) => {
  t.equal(roleOf({ is_owner: true }), 100);
  t.equal(roleOf({ is_admin: true }), 200);
  t.equal(roleOf({ is_guest: true }), 600);
  t.equal(roleOf({}), 400);
  t.ok(isAdministrator({ is_admin: true }));
  t.notOk(isAdministrator({ role: 300 }));
  t.end();
});

t.test('deactivate and reactivate', (t) => {
  t.ok(canDeactivate(admin, member));
  t.ok(canDeactivate(admin, moderator));
  t.ok(canDeactivate(admin, bot), 'a bot');
  t.notOk(canDeactivate(admin, admin), 'not oneself (the Account panel’s)');
  t.notOk(canDeactivate(owner, owner), 'not oneself, an owner neither');
  t.notOk(canDeactivate(admin, owner), 'an owner: only by an owner');
  t.ok(canDeactivate(owner, owner2));
  t.notOk(canDeactivate(moderator, member), 'a moderator cannot');
  t.notOk(canDeactivate(member, guest));
  t.notOk(canDeactivate(admin, gone), 'already deactivated');
  t.notOk(canDeactivate(owner, systemBot), 'not the system bots');
  t.ok(canReactivate(admin, gone));
  t.ok(canReactivate(admin, oldBot));
  t.notOk(canReactivate(admin, member), 'active');
  t.notOk(canReactivate(moderator, gone));
  t.end();
});

t.test('the confirmation names the person and the bots that go with them', (t) => {
  t.same(names(botsOwnedBy(all, member.user_id)), ['Deploy notices'], 'active bots only');
  const one = deactivationText(member, botsOwnedBy(all, member.user_id));
  t.match(one, /^Hamlet is logged out everywhere/);
  t.match(one, /Their bot Deploy notices is deactivated too\./);
  t.match(one, /Invitations they sent stop working/);
  const two = deactivationText(member, [bot, { ...bot, user_id: 12, full_name: 'Echo' }]);
  t.match(two, /Their 2 bots \(Deploy notices, Echo\) are deactivated too\./);
  const none = deactivationText(guest, []);
  t.notMatch(none, /bot/);
  const ofBot = deactivationText(bot, []);
  t.match(ofBot, /^Deploy notices can no longer use the API: it cannot send messages/);
  t.match(ofBot, /An administrator can reactivate it later\.$/);
  t.notMatch(ofBot, /Invitations/, 'a bot invites nobody');
  t.equal(
    ofBot,
    botDeactivationText('Deploy notices', 'An administrator'),
    'one wording for both panels',
  );
  t.match(
    botDeactivationText('Echo', 'You or an administrator'),
    /^Echo .* You or an administrator can/,
  );
  t.end();
});

t.test('the role filter: each role with its count', (t) => {
  const active = usersOf(all, 'active');
  t.same(
    roleFilterOptions(active).map((o) => o.label),
    ['All roles (6)', 'Owner (2)', 'Administrator (1)', 'Moderator (1)', 'Member (1)', 'Guest (1)'],
  );
  t.same(
    roleFilterOptions(active).map((o) => o.value),
    [0, 100, 200, 300, 400, 600],
  );
  t.same(names(withRole(active, 100)), ['Desdemona', 'Élise Owner']);
  t.same(names(withRole(active, 0)), names(active), '0: everyone');
  t.same(names(withRole(usersOf(all, 'deactivated'), 600)), []);
  t.end();
});

t.test('stepping down oneself is asked first', (t) => {
  t.equal(stepDownQuestion(100, 200)?.title, 'Make yourself an administrator?');
  t.match(stepDownQuestion(100, 200)?.text, /no longer an owner/);
  t.equal(stepDownQuestion(200, 400)?.title, 'Make yourself a member?');
  t.match(stepDownQuestion(200, 400)?.text, /lose the administrators’ controls/);
  t.equal(stepDownQuestion(100, 600)?.title, 'Make yourself a guest?');
  t.equal(stepDownQuestion(200, 100), null, 'not going up');
  t.equal(stepDownQuestion(400, 400), null);
  t.end();
});

t.test('last active, or when someone never seen active joined', (t) => {
  const now = Date.parse('2026-12-06T12:00:00Z');
  t.equal(lastActiveText('active', undefined, '2026-12-01T10:00:00+00:00', now), 'Active now');
  t.equal(lastActiveText('idle', undefined, undefined, now), 'Idle');
  t.equal(
    lastActiveText('offline', now / 1000 - 600, '2020-01-01T00:00:00+00:00', now),
    'Active 10 minutes ago',
  );
  t.equal(
    lastActiveText('offline', undefined, '2026-12-01T10:00:00+00:00', now),
    'Never active; joined Dec 1',
  );
  t.equal(
    lastActiveText('offline', undefined, '2024-03-05T10:00:00+00:00', now),
    'Never active; joined Mar 5, 2024',
  );
  t.equal(lastActiveText('offline', undefined, undefined, now), 'Not active in the last year');
  t.equal(lastActiveText('offline', undefined, 'not a date', now), 'Not active in the last year');
  t.end();
});
