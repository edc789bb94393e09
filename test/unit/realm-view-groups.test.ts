/**
 * RealmView's group read model is updated incrementally after each mutation (a new user's
 * system-group memberships, group creation, membership and subgroup changes, renames and
 * deactivation) instead of being re-read whole. After every step of a series of changes, the
 * incrementally maintained view must equal a view freshly loaded from the store — including the
 * recursive memberships, which are warmed before each step so that the in-place updates of the
 * cache (not just recomputation) are what gets compared.
 */
import t, { type Test } from 'tap';
import { RealmView } from '../../src/queries/realm-view.js';
import type { Role } from '../../src/lib/roles.js';
import { startServer, type TestServer } from '../helpers/server.js';

function snapshot(view: RealmView) {
  const sorted = (s: Iterable<number> | undefined) => [...(s ?? [])].sort((a, b) => a - b);
  const groups = [...view.groupsById.keys()].sort((a, b) => a - b);
  return {
    rows: groups.map((id) => view.group(id)),
    system: [...view.systemGroupIds.entries()].sort(),
    direct: groups.map((id) => [id, sorted(view.directMembers.get(id))]),
    subgroups: groups.map((id) => [id, sorted(view.directSubgroups.get(id))]),
    recursive: groups.map((id) => [id, sorted(view.recursiveMembers(id))]),
  };
}

function warm(view: RealmView): void {
  for (const id of view.groupsById.keys()) view.recursiveMembers(id);
}

t.test('the incrementally updated group model equals a fresh load', async (t) => {
  const ts = await startServer(t);
  const { server, fx, api } = ts;
  const realm = server.context.realms.get(fx.realmId)!;
  const view = realm.view;
  const id = (who: string) => fx.users[who]!.id;

  const check = (what: string) => {
    const fresh = new RealmView(server.store, fx.realmId);
    t.same(snapshot(view), snapshot(fresh), what);
    warm(view);
  };
  const ok = async (res: Promise<{ status: number; text: string }>) => {
    const r = await res;
    t.equal(r.status, 200, r.text.slice(0, 300));
    return JSON.parse(r.text) as Record<string, unknown>;
  };
  warm(view);

  const create = async (email: string, role: Role) =>
    (
      await realm.ask('user.create', {
        acting_user_id: null,
        email,
        full_name: email.split('@')[0]!,
        password_hash: null,
        role,
        welcome: null,
      })
    ).user_id;
  const ann = await create('ann@zulip.com', 400);
  const bob = await create('bob@zulip.com', 300);
  const cat = await create('cat@zulip.com', 600);
  check('after creating a member, a moderator and a guest');

  const group = async (name: string, members: number[], subgroups: number[] = []) =>
    (
      await ok(
        api.post('desdemona', 'user_groups/create', {
          name,
          description: '',
          members,
          subgroups,
        }),
      )
    ).group_id as number;
  const a = await group('a', [ann, id('hamlet')]);
  const b = await group('b', [bob, ann], [a]);
  const c = await group('c', [], [b]);
  check('after creating nested groups');

  await ok(api.post('desdemona', `user_groups/${a}/members`, { add: [cat, id('othello')] }));
  check('after adding members to the innermost group');

  // ann stays in b directly: removing her from a must not remove her from b or c.
  await ok(api.post('desdemona', `user_groups/${a}/members`, { delete: [ann, cat] }));
  t.ok(view.recursiveMembers(c).has(ann), 'still in c through b');
  t.notOk(view.recursiveMembers(c).has(cat), 'gone from c');
  check('after removing members');

  const moderators = view.systemGroupId('role:moderators');
  await ok(api.post('desdemona', `user_groups/${a}/subgroups`, { add: [moderators] }));
  t.ok(view.recursiveMembers(c).has(bob) && view.recursiveMembers(c).has(id('shiva')));
  check('after adding a system group as a subgroup');

  await ok(api.post('desdemona', `user_groups/${c}/subgroups`, { delete: [b] }));
  t.same([...view.recursiveMembers(c)], []);
  check('after removing a subgroup');

  await ok(
    api.post('desdemona', `user_groups/${b}/members`, {
      add: [cat],
      delete: [bob],
      add_subgroups: [],
    }),
  );
  await ok(api.post('desdemona', `user_groups/${c}/subgroups`, { add: [a, b] }));
  check('after mixed changes');

  await ok(api.patch('desdemona', `user_groups/${a}`, { name: 'alpha', description: 'first' }));
  await ok(api.post('desdemona', `user_groups/${c}/deactivate`));
  check('after renaming and deactivating');

  const dan = await create('dan@zulip.com', 200);
  const eve = await create('eve@zulip.com', 400);
  t.ok(view.recursiveMembers(a).has(dan), 'an administrator is a moderator, in a through it');
  t.notOk(view.recursiveMembers(a).has(eve));
  check('after creating users in a realm with warmed caches');

  await ok(api.delete('iago', `users/${eve}`));
  check('after deactivating a user');
  t.equal(view.isUserInGroupSetting(eve, view.systemGroupId('role:members')), false);
  t.equal(view.isUserInGroupSetting(dan, a), true);
});

t.test('a fresh load after many creations matches (the bulk path of imports)', async (t) => {
  const ts: TestServer = await startServer(t);
  const realm = ts.server.context.realms.get(ts.fx.realmId)!;
  warm(realm.view);
  for (let i = 0; i < 40; i++) {
    await realm.ask('user.create', {
      acting_user_id: null,
      email: `u${i}@zulip.com`,
      full_name: `U ${i}`,
      password_hash: null,
      role: ([100, 200, 300, 400, 600] as const)[i % 5]!,
      welcome: null,
    });
  }
  compare(t, realm.view, new RealmView(ts.server.store, ts.fx.realmId));
});

function compare(t: Test, a: RealmView, b: RealmView): void {
  t.same(snapshot(a), snapshot(b));
}
