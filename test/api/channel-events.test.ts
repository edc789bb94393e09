/**
 * Every event the channel area emits, validated against the GET /events description: one
 * scenario touching channels, subscriptions, user groups, topics and default channels; each tapped
 * event of those types must match one of the described event shapes.
 *
 * Fields the description lacks: the spec's channel fields (can_delete_*, topics_policy,
 * folder_id), and the markers for the event queues (`for_archiving`, `for_unarchiving`) which
 * the queues use to choose by client capability and strip before delivery.
 */
import t from 'tap';
import { assertSuccess } from '../helpers/api.js';
import { createChannel, systemGroupId } from '../helpers/channels.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';

const ALLOW_EXTRA = [
  'can_delete_any_message_group',
  'can_delete_own_message_group',
  'topics_policy',
  'folder_id',
  'for_archiving',
  'for_unarchiving',
];

const OURS = new Set(['stream', 'subscription', 'user_group', 'user_topic', 'default_streams']);

t.test('every channel-area event matches the GET /events description', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const id = (n: string) => fx.users[n]!.id;
  const mark = ts.events.length;

  const pub = await createChannel(api, 'hamlet', 'pub', { is_default_stream: false });
  const secret = await createChannel(api, 'iago', 'secret', { invite_only: true });
  assertSuccess(
    t,
    await api.post('hamlet', 'users/me/subscriptions', {
      subscriptions: [{ name: 'pub' }],
      principals: [id('othello'), id('polonius')],
    }),
  );
  assertSuccess(
    t,
    await api.delete('othello', 'users/me/subscriptions', { subscriptions: ['pub'] }),
  );
  assertSuccess(
    t,
    await api.post('hamlet', 'users/me/subscriptions/properties', {
      subscription_data: [{ stream_id: pub, property: 'is_muted', value: true }],
    }),
  );
  assertSuccess(
    t,
    await api.patch('hamlet', `streams/${pub}`, {
      new_name: 'square',
      description: 'about',
      can_send_message_group: {
        new: {
          direct_members: [id('hamlet')],
          direct_subgroups: [systemGroupId(ts, 'role:moderators')],
        },
      },
    }),
  );
  assertSuccess(t, await api.patch('desdemona', `streams/${pub}`, { message_retention_days: 7 }));
  assertSuccess(t, await api.patch('iago', `streams/${pub}`, { is_private: true }));
  assertSuccess(t, await api.patch('hamlet', `streams/${pub}`, { is_private: false }));
  assertSuccess(t, await api.patch('iago', `streams/${pub}`, { is_default_stream: true }));
  assertSuccess(
    t,
    await api.post('hamlet', 'user_topics', { stream_id: pub, topic: 't', visibility_policy: 3 }),
  );
  const gid = assertSuccess(
    t,
    await api.post('hamlet', 'user_groups/create', {
      name: 'g',
      description: '',
      members: [id('hamlet')],
    }),
  ).group_id as number;
  const sub = assertSuccess(
    t,
    await api.post('hamlet', 'user_groups/create', { name: 'sub', description: '', members: [] }),
  ).group_id as number;
  assertSuccess(
    t,
    await api.patch('hamlet', `user_groups/${gid}`, {
      description: 'd',
      can_join_group: { new: sub },
    }),
  );
  assertSuccess(
    t,
    await api.patch('hamlet', `user_groups/${gid}`, {
      can_join_group: { new: systemGroupId(ts, 'role:members') },
    }),
  );
  assertSuccess(
    t,
    await api.post('hamlet', `user_groups/${gid}/members`, {
      add: [id('cordelia')],
      delete: [id('hamlet')],
      add_subgroups: [sub],
    }),
  );
  assertSuccess(t, await api.post('desdemona', `user_groups/${gid}/subgroups`, { delete: [sub] }));
  assertSuccess(t, await api.post('hamlet', `user_groups/${sub}/deactivate`));
  assertSuccess(t, await api.delete('iago', `streams/${secret}`));
  assertSuccess(t, await api.patch('iago', `streams/${secret}`, { is_archived: false }));
  assertSuccess(t, await api.delete('iago', `streams/${pub}`));

  const seen = new Set<string>();
  let n = 0;
  for (const { event } of ts.events.slice(mark)) {
    if (!OURS.has(event.type)) continue;
    n++;
    seen.add(`${event.type}${typeof event.op === 'string' ? ' ' + event.op : ''}`);
    assertMatchesOpenApi(
      t,
      '/events',
      'get',
      { result: 'success', msg: '', queue_id: 'q', events: [{ ...event, id: n }] },
      { allowExtra: ALLOW_EXTRA },
    );
  }
  t.same([...seen].sort(), [
    'default_streams',
    'stream create',
    'stream delete',
    'stream update',
    'subscription add',
    'subscription peer_add',
    'subscription peer_remove',
    'subscription remove',
    'subscription update',
    'user_group add',
    'user_group add_members',
    'user_group add_subgroups',
    'user_group remove',
    'user_group remove_members',
    'user_group remove_subgroups',
    'user_group update',
    'user_topic',
  ]);
});
