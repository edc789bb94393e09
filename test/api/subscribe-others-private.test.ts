/**
 * Subscribing others to a private channel one is not subscribed to (POST /users/me/subscriptions
 * with `principals`), as the reference at Zulip 10.2 decides it (lib/streams.py
 * filter_stream_authorization_for_adding_subscribers, user_has_content_access;
 * views/streams.py "Unable to access channel"): without content access the channel is
 * unauthorized, whatever the role — an owner or administrator not subscribed to a private channel
 * is refused like anyone, and administering the channel (can_administer_channel_group) does not
 * give content access. Membership in the channel's can_add_subscribers_group does (feature level
 * 349: "Users in this group need not be subscribed to a private channel to add subscribers to
 * it"), and then the owner adds others without joining; can_subscribe_group gives access too,
 * but adding others then needs the realm's or the channel's permission to add subscribers.
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { createChannel, systemGroupId } from '../helpers/channels.js';
import { startServer } from '../helpers/server.js';

t.test('an owner outside a private channel: refused until can_add_subscribers_group', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const id = (who: string) => fx.users[who]!.id;
  const admins = systemGroupId(ts, 'role:administrators');
  // Made by prospero, a member: its only subscriber, and its administrator by default.
  const vault = await createChannel(api, 'prospero', 'vault', { invite_only: true });
  const subscribe = (who: string, principal: string, extra: Record<string, unknown> = {}) =>
    api.post(who, 'users/me/subscriptions', {
      subscriptions: [{ name: 'vault' }],
      principals: [id(principal)],
      ...extra,
    });
  const subscribers = async () =>
    (
      assertSuccess(t, await api.get('prospero', `streams/${vault}/members`))
        .subscribers as number[]
    ).sort((a, b) => a - b);

  for (const who of ['desdemona', 'iago', 'hamlet']) {
    assertError(t, await subscribe(who, 'othello'), 'Unable to access channel (vault).');
  }
  const soft = assertSuccess(
    t,
    await subscribe('desdemona', 'othello', { authorization_errors_fatal: false }),
  );
  t.same(soft.unauthorized, ['vault'], 'listed as unauthorized when not fatal');
  t.same(soft.subscribed, {});

  // Administering the channel gives no content access: still refused.
  assertSuccess(
    t,
    await api.patch('prospero', `streams/${vault}`, {
      can_administer_channel_group: {
        new: { direct_members: [id('prospero')], direct_subgroups: [admins] },
      },
    }),
  );
  assertError(t, await subscribe('desdemona', 'othello'), 'Unable to access channel (vault).');
  t.same(await subscribers(), [id('prospero')], 'nobody was added');

  // The channel's can_add_subscribers_group: administrators (owners are among them).
  assertSuccess(
    t,
    await api.patch('prospero', `streams/${vault}`, {
      can_add_subscribers_group: { new: admins },
    }),
  );
  const added = assertSuccess(t, await subscribe('desdemona', 'othello'));
  t.same(added.subscribed, { [id('othello')]: ['vault'] }, 'the owner adds othello');
  assertSuccess(t, await subscribe('iago', 'cordelia'), 'the administrator adds cordelia');
  t.same(
    await subscribers(),
    [id('prospero'), id('othello'), id('cordelia')].sort((a, b) => a - b),
    'without joining themselves',
  );
  // A member outside the group is still refused.
  assertError(t, await subscribe('hamlet', 'shiva'), 'Unable to access channel (vault).');
});

t.test('can_subscribe_group: access, and adding others as the permissions say', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const id = (who: string) => fx.users[who]!.id;
  await createChannel(api, 'prospero', 'club', {
    invite_only: true,
    can_subscribe_group: { direct_members: [id('hamlet')], direct_subgroups: [] },
  });
  const subscribe = (who: string, principal: string) =>
    api.post(who, 'users/me/subscriptions', {
      subscriptions: [{ name: 'club' }],
      principals: [id(principal)],
    });
  // hamlet may join, and (the realm's can_add_subscribers_group is members by default) add others.
  assertSuccess(t, await subscribe('hamlet', 'othello'), 'hamlet adds othello');
  // Once the realm allows only administrators to add subscribers, hamlet has access but no right.
  assertSuccess(
    t,
    await api.patch('desdemona', 'realm', {
      can_add_subscribers_group: JSON.stringify({
        new: systemGroupId(ts, 'role:administrators'),
      }),
    }),
  );
  assertError(t, await subscribe('hamlet', 'cordelia'), 'Insufficient permission');
});
