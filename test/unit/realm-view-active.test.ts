/**
 * RealmView.activeUserCount (counted once per change to the realm's users; a presence report in
 * a large realm reads it instead of listing every user) equals the active users listed, through
 * user creation, deactivation and reactivation.
 */
import t from 'tap';
import { assertSuccess } from '../helpers/api.js';
import { addWelcomeBot } from '../helpers/fixtures.js';
import { startServer } from '../helpers/server.js';

t.test('the active-user count follows the users', async (t) => {
  const { server, fx, api } = await startServer(t);
  // As in every realm the server sets up; else the first account created brings it, one more.
  await addWelcomeBot(server, fx);
  const view = () => server.context.realms.get(fx.realmId)!.view;
  const agree = (what: string) =>
    t.equal(view().activeUserCount(), view().activeUsers().length, what);
  agree('at start');
  const before = view().activeUserCount();
  t.ok(before > 0);
  const made = assertSuccess(
    t,
    await api.post('iago', 'users', {
      email: 'newcomer@example.com',
      password: 'xyz-long-enough-1',
      full_name: 'Newcomer',
    }),
  ) as { user_id: number };
  agree('after a user is created');
  t.equal(view().activeUserCount(), before + 1);
  assertSuccess(t, await api.delete('iago', `users/${made.user_id}`));
  agree('after a deactivation');
  t.equal(view().activeUserCount(), before);
  assertSuccess(t, await api.post('iago', `users/${made.user_id}/reactivate`));
  agree('after a reactivation');
  t.equal(view().activeUserCount(), before + 1);
});
