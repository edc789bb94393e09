/**
 * A cluster node's own batches that the log did not take are taken back from its copy
 * (Replication.undo; docs/cluster.md "Failover and fencing": a refused append), and then from its
 * in-memory read model (src/cluster/refresh.ts refreshReadModel with what the undo wrote): after
 * the batches of a user's creation, a channel created with subscriptions, a group and a realm
 * setting are taken back, the realm's view must equal a view freshly loaded from the store —
 * users (by id, by e-mail, the sorted list, the active count), groups and their members, channels,
 * subscribers and each user's subscriptions, the realm's row and settings. (Before: the created
 * user stayed in the view's user list, found by e-mail, until the node restarted.)
 *
 * The batches run through the real realm actor of a single-process server whose store also has
 * the cluster's capture triggers (Replication), each sealed with its undo as an owner seals it.
 */
import t from 'tap';
import { refreshReadModel } from '../../src/cluster/refresh.js';
import { RealmView } from '../../src/queries/realm-view.js';
import { Replication } from '../../src/storage/replication.js';
import { startServer } from '../helpers/server.js';

function snapshot(view: RealmView) {
  const sorted = (s: Iterable<number>) => [...s].sort((a, b) => a - b);
  const users = sorted(view.usersById.keys());
  const groups = sorted(view.groupsById.keys());
  const channels = [...view.channels.all()].sort((a, b) => a.id - b.id);
  return {
    users: users.map((id) => {
      const u = view.user(id)!;
      return [id, u.delivery_email, u.full_name, u.is_active, u.role];
    }),
    byEmail: users.map((id) => view.userByEmail(view.user(id)!.delivery_email)?.id),
    ascending: [...view.userIdsAscending()],
    active: view.activeUserCount(),
    groups: groups.map((id) => [view.group(id), sorted(view.directMembers.get(id) ?? [])]),
    channels: channels.map((c) => [c.id, c.name, view.channels.subscriberIds(c.id)]),
    subscriptions: users.map((id) => sorted(view.channels.subscriptionsOf(id).keys())),
    realm: [view.row.name, view.row.description, JSON.stringify(view.settings)],
  };
}

t.test("a node's batches taken back leave its read model as a fresh load", async (t) => {
  const { server, fx, api } = await startServer(t);
  const realm = server.context.realms.get(fx.realmId)!;
  const view = realm.view;
  const replication = new Replication(server.store);
  replication.discard();
  const before = snapshot(view);

  const ok = async (res: Promise<{ status: number; text: string }>) => {
    const r = await res;
    t.equal(r.status, 200, r.text.slice(0, 300));
  };
  // Each write is one batch, sealed with its undo as the owner's commit strategy seals it.
  const batches: ReturnType<Replication['sealWithUndo']>[] = [];
  const sealed = () => batches.push(replication.sealWithUndo());
  const { user_id: ann } = await realm.ask('user.create', {
    acting_user_id: null,
    email: 'ann@zulip.com',
    full_name: 'Ann Undone',
    password_hash: null,
    role: 400,
    welcome: null,
  });
  sealed();
  t.ok(view.userByEmail('ann@zulip.com'), 'the new user is in the view');
  await ok(
    api.post('desdemona', 'users/me/subscriptions', {
      subscriptions: JSON.stringify([{ name: 'undone channel' }]),
      principals: JSON.stringify([ann, fx.users.hamlet!.id]),
    }),
  );
  sealed();
  await ok(
    api.post('desdemona', 'user_groups/create', {
      name: 'undone group',
      description: '',
      members: JSON.stringify([ann, fx.users.hamlet!.id]),
    }),
  );
  sealed();
  await ok(api.patch('desdemona', 'realm', { description: 'undone description' }));
  sealed();
  t.ok(
    batches.every((b) => b.changes.length > 0 && b.undo.length > 0),
    'each write is a batch with its undo',
  );
  t.notSame(snapshot(view), before, 'the view holds the writes');

  const { touched, restored } = replication.undo(batches);
  refreshReadModel(server.context.realms, fx.realmId, restored, touched);

  const fresh = snapshot(new RealmView(server.store, fx.realmId));
  t.same(fresh, before, 'the store is as before the batches');
  t.same(snapshot(view), fresh, 'the view equals a fresh load');
  t.equal(view.userByEmail('ann@zulip.com'), undefined, 'the taken-back user is not found');
  t.equal(view.user(ann), undefined);
  t.equal(view.channels.byName('undone channel'), undefined, 'nor the channel');
});
