/**
 * Bugs the fuzzers found (docs/robustness.md), each pinned by the request that showed it.
 */
import t from 'tap';
import { NOTIFICATION_BOT_EMAIL } from '../../src/mutations/message-edit.js';
import { assertError, assertSuccess } from '../helpers/api.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';

t.test('a refused move does not create the notification bot; an allowed one does', async (t) => {
  const { api, fx, server, events } = await startServer(t);
  await api.post('desdemona', 'users/me/subscriptions', {
    subscriptions: [{ name: 'moves' }],
    principals: [fx.users.hamlet!.id, fx.users.polonius!.id],
  });
  const id = await sendChannelMessage(api, 'hamlet', 'moves', 'before', 'to be moved');
  const realm = server.context.realms.get(fx.realmId)!;
  const before = events.length;
  // The fuzzer's request: a move of a message that does not exist.
  assertError(
    t,
    await api.patch('polonius', 'messages/999999', {
      topic: 'after',
      propagate_mode: 'change_one',
    }),
    'Invalid message(s)',
  );
  t.equal(realm.view.userByEmail(NOTIFICATION_BOT_EMAIL), undefined, 'no bot created');
  t.same(
    events.slice(before).map((e) => e.event.type),
    [],
    'no event at all',
  );

  assertSuccess(t, await api.patch('hamlet', `messages/${id}`, { topic: 'after' }));
  t.ok(realm.view.userByEmail(NOTIFICATION_BOT_EMAIL), 'the first allowed move created it');
  const types = events.slice(before).map((e) => e.event.type);
  t.ok(types.includes('realm_user'), 'announced');
  t.ok(types.includes('update_message'), 'and the move happened');
});
