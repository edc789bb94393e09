/**
 * State rebuilt from events equals a fresh snapshot, for messages, channels and subscriptions
 * (the reference's verify_action idea; the settings area's version is in settings.test.ts and
 * realm-settings.test.ts): a client registers, a realistic run of mutations happens, the client
 * applies the events its queue got to its first snapshot (test/helpers/apply-state-events.ts) and
 * the result must equal a fresh POST /register and, for messages, a fresh GET /messages.
 */
import t, { type Test } from 'tap';
import { assertSuccess, type ApiClient } from '../helpers/api.js';
import {
  applyChannelEvents,
  applyMessageEvents,
  channelLists,
  sortedUnreads,
  unreadsOf,
  type Message,
} from '../helpers/apply-state-events.js';
import { createChannel } from '../helpers/channels.js';
import { register } from '../helpers/events.js';
import { sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';
import { Listener } from '../helpers/queues.js';
import { startServer } from '../helpers/server.js';
import { CHANNEL_SPEC_EXTRAS } from '../helpers/spec-extras.js';

async function allMessages(t: Test, api: ApiClient, who: string): Promise<Message[]> {
  const res = await api.get(who, 'messages', {
    anchor: 'newest',
    num_before: 1000,
    num_after: 0,
    narrow: [],
  });
  return assertSuccess(t, res, `GET /messages for ${who}`).messages as Message[];
}

/** What the clients these tests stand for ask for: subscribers, and rendered content. */
const SUBSCRIBERS = { include_subscribers: true };
const MARKDOWN = { apply_markdown: true };

const ok = async (t: Test, res: Promise<{ status: number; text: string }>) => {
  const r = await res;
  t.equal(r.status, 200, r.text);
};

t.test('channels and subscriptions: a snapshot kept by events equals a fresh one', async (t) => {
  const { api, fx } = await startServer(t);
  const id = (n: string) => fx.users[n]!.id;
  const hamlet = await Listener.open(t, api, 'hamlet', SUBSCRIBERS, {
    allowExtra: CHANNEL_SPEC_EXTRAS,
  });

  const garden = await createChannel(api, 'hamlet', 'garden', {
    principals: [id('hamlet'), id('othello')],
  });
  const council = await createChannel(api, 'iago', 'council', {
    invite_only: true,
    principals: [id('hamlet'), id('iago')],
  });
  const plaza = await createChannel(api, 'iago', 'plaza');
  await createChannel(api, 'iago', 'secret', { invite_only: true });
  const porch = await createChannel(api, 'othello', 'porch');
  await createChannel(api, 'othello', 'fair');
  await createChannel(api, 'iago', 'market');
  // Peers come and go.
  await ok(
    t,
    api.post('cordelia', 'users/me/subscriptions', { subscriptions: [{ name: 'garden' }] }),
  );
  await ok(t, api.delete('othello', 'users/me/subscriptions', { subscriptions: ['garden'] }));
  await ok(
    t,
    api.post('iago', 'users/me/subscriptions', {
      subscriptions: [{ name: 'porch' }],
      principals: [id('hamlet'), id('iago'), id('polonius')],
    }),
  );
  // The channel changes: name, description, privacy, a permission.
  await ok(t, api.patch('iago', `streams/${garden}`, { description: 'Where **roses** grow' }));
  await ok(t, api.patch('iago', `streams/${garden}`, { new_name: 'rose garden' }));
  await ok(t, api.patch('iago', `streams/${porch}`, { is_private: true }));
  await ok(t, api.patch('desdemona', `streams/${council}`, { message_retention_days: 30 }));
  // Hamlet's own subscription settings.
  await ok(
    t,
    api.post('hamlet', 'users/me/subscriptions/properties', {
      subscription_data: [
        { stream_id: garden, property: 'color', value: '#123456' },
        { stream_id: garden, property: 'pin_to_top', value: true },
        { stream_id: council, property: 'is_muted', value: true },
        { stream_id: council, property: 'desktop_notifications', value: false },
        { stream_id: porch, property: 'in_home_view', value: false },
      ],
    }),
  );
  // Hamlet leaves a private channel and subscribes to, then leaves, a public one.
  await ok(t, api.delete('hamlet', 'users/me/subscriptions', { subscriptions: ['council'] }));
  await ok(t, api.post('hamlet', 'users/me/subscriptions', { subscriptions: [{ name: 'plaza' }] }));
  await ok(t, api.delete('hamlet', 'users/me/subscriptions', { subscriptions: ['plaza'] }));
  await ok(
    t,
    api.post('hamlet', 'users/me/subscriptions', { subscriptions: [{ name: 'market' }] }),
  );
  await ok(t, api.delete('hamlet', 'users/me/subscriptions', { subscriptions: ['market'] }));
  await ok(
    t,
    api.post('cordelia', 'users/me/subscriptions', { subscriptions: [{ name: 'fair' }] }),
  );
  // A channel is archived; another is made public again.
  await ok(t, api.delete('iago', `streams/${plaza}`));
  await ok(t, api.patch('iago', `streams/${porch}`, { is_private: false }));

  await hamlet.drain(t);
  const kinds = new Set(hamlet.got.map((e) => `${e.type} ${e.op as string}`));
  for (const k of [
    'stream create',
    'stream update',
    'stream delete',
    'subscription add',
    'subscription remove',
    'subscription update',
    'subscription peer_add',
    'subscription peer_remove',
  ]) {
    t.ok(kinds.has(k), `the run caused ${k}`);
  }
  const state = structuredClone(hamlet.snapshot);
  applyChannelEvents(state, hamlet.got, { includeSubscribers: true });
  const fresh = (await register(t, api, 'hamlet', SUBSCRIBERS)).body;
  const rebuilt = channelLists(state);
  const expected = channelLists(fresh);
  t.ok(expected.subscriptions!.length >= 2, 'subscribed channels compared');
  t.ok(expected.unsubscribed!.length >= 1, 'unsubscribed channels compared');
  t.ok(expected.never_subscribed!.length >= 1, 'never-subscribed channels compared');
  for (const key of Object.keys(expected)) {
    t.same(rebuilt[key], expected[key], `${key} after the events`);
  }
});

t.test('messages: the list and the unreads kept by events equal fresh ones', async (t) => {
  const { api, fx } = await startServer(t);
  const id = (n: string) => fx.users[n]!.id;
  const garden = await createChannel(api, 'hamlet', 'garden', {
    principals: [id('hamlet'), id('othello'), id('cordelia'), id('iago')],
  });
  const porch = await createChannel(api, 'hamlet', 'porch', {
    principals: [id('hamlet'), id('iago')],
  });
  const names = new Map([
    [garden, 'garden'],
    [porch, 'porch'],
  ]);
  const hamlet = await Listener.open(t, api, 'hamlet', MARKDOWN);
  const start = await allMessages(t, api, 'hamlet');

  const roses = [
    await sendChannelMessage(api, 'othello', 'garden', 'roses', 'The first rose'),
    await sendChannelMessage(api, 'cordelia', 'garden', 'roses', 'A second one, @**Hamlet**'),
    await sendChannelMessage(api, 'hamlet', 'garden', 'roses', 'My own'),
    await sendChannelMessage(api, 'othello', 'garden', 'roses', 'A third'),
  ];
  const weeds = await sendChannelMessage(api, 'iago', 'garden', 'weeds', 'Pull them');
  const stray = await sendChannelMessage(api, 'iago', 'garden', 'weeds', 'This belongs elsewhere');
  const dm = await sendDirectMessage(api, 'othello', [id('hamlet')], 'Hello Hamlet');
  const group = await sendDirectMessage(api, 'othello', [id('hamlet'), id('cordelia')], 'All');
  await sendDirectMessage(api, 'hamlet', [id('cordelia')], 'Mine');

  // Edits: content, topic of the whole topic, a move to another channel, a deletion.
  await ok(t, api.patch('othello', `messages/${roses[0]!}`, { content: 'The first rose, edited' }));
  await ok(t, api.patch('hamlet', `messages/${roses[2]!}`, { content: 'My own, with **bold**' }));
  await ok(
    t,
    api.patch('iago', `messages/${roses[1]!}`, { topic: 'tulips', propagate_mode: 'change_all' }),
  );
  await ok(
    t,
    api.patch('iago', `messages/${stray}`, {
      stream_id: porch,
      topic: 'moved',
      propagate_mode: 'change_one',
      send_notification_to_old_thread: false,
      send_notification_to_new_thread: false,
    }),
  );
  await ok(t, api.delete('iago', `messages/${roses[3]!}`));
  // Reactions.
  await ok(t, api.post('cordelia', `messages/${roses[0]!}/reactions`, { emoji_name: 'heart' }));
  await ok(t, api.post('hamlet', `messages/${roses[0]!}/reactions`, { emoji_name: 'heart' }));
  await ok(t, api.post('hamlet', `messages/${weeds}/reactions`, { emoji_name: 'octopus' }));
  await ok(t, api.delete('cordelia', `messages/${roses[0]!}/reactions`, { emoji_name: 'heart' }));
  // Flags: read, starred, unread again, a whole topic read.
  await ok(
    t,
    api.post('hamlet', 'messages/flags', { messages: [dm, weeds], op: 'add', flag: 'read' }),
  );
  await ok(
    t,
    api.post('hamlet', 'messages/flags', { messages: [group], op: 'add', flag: 'starred' }),
  );
  await ok(
    t,
    api.post('hamlet', 'messages/flags', { messages: [weeds], op: 'remove', flag: 'read' }),
  );
  await ok(
    t,
    api.post('hamlet', 'mark_topic_as_read', { stream_id: garden, topic_name: 'tulips' }),
  );

  await hamlet.drain(t);
  const kinds = new Set(hamlet.got.map((e) => `${e.type} ${(e.op as string) ?? ''}`.trim()));
  for (const k of [
    'message',
    'update_message',
    'delete_message',
    'reaction add',
    'reaction remove',
    'update_message_flags add',
    'update_message_flags remove',
  ]) {
    t.ok(kinds.has(k), `the run caused ${k}`);
  }

  const held = applyMessageEvents(structuredClone(start), hamlet.got, (s) => names.get(s)!);
  const fetched = await allMessages(t, api, 'hamlet');
  t.equal(fetched.length, 9, 'the messages sent, the notice of the topic move, less the deleted');
  // The edit history is fetched on demand (GET /messages/{id}/history), not kept from events.
  // A move's event does not say the new recipient_id (clients go by stream_id); flags are a set.
  const comparable = (ms: Message[]) =>
    ms.map(({ edit_history: _h, recipient_id: _r, ...m }) => ({
      ...m,
      flags: [...m.flags].sort(),
    }));
  t.same(
    comparable(held),
    comparable(fetched),
    'the messages after the events equal GET /messages',
  );

  const fresh = (await register(t, api, 'hamlet', MARKDOWN)).body;
  const base = hamlet.snapshot.unread_msgs as Parameters<typeof unreadsOf>[2];
  const unreads = sortedUnreads(unreadsOf(held, id('hamlet'), base));
  const expected = sortedUnreads(fresh.unread_msgs as typeof base);
  t.ok(expected.count >= 3, 'unread messages compared');
  t.same(unreads, expected, 'unread_msgs after the events equals a fresh snapshot');
});
