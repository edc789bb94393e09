/**
 * The fan-out (src/delivery/fanout.ts) with synthetic OutboundEvents, as the areas that emit them
 * will (messages, deletions, settings, linkifiers, groups, presence): who receives what, in which
 * form, and that each form is serialized once. The contract is documented in src/lib/events.ts.
 */
import t, { type Test } from 'tap';
import { EventQueues } from '../../src/delivery/publisher.js';
import type { QueueHandle } from '../../src/delivery/queue.js';
import type { QueueSettings } from '../../src/delivery/filter.js';
import { queueSettings } from '../helpers/queue-settings.js';
import {
  decodePacked,
  eventJson,
  eventsResponseJson,
  eventsResponsePacked,
} from '../../src/delivery/wire.js';
import { eventsFrame } from '../../src/delivery/socket-frames.js';
import type { OutboundEvent } from '../../src/lib/events.js';
import { RealmRuntime } from '../../actors/registry.js';
import { JsonableError } from '../../src/lib/errors.js';
import type { MutationContext } from '../../src/mutations/context.js';
import { doCreateRealm } from '../../src/mutations/realms.js';
import { Store } from '../../src/storage/store.js';

const REALM = 1;
const OTHER_REALM = 2;

function makeQueues(t: Test): EventQueues {
  const q = new EventQueues({
    clock: Date.now,
    heartbeatMs: 3_600_000,
    heartbeatJitterMs: 0,
    queueIdleLifetimeMs: 3_600_000,
    queueSweepMs: 3_600_000,
  });
  t.teardown(() => q.close());
  return q;
}

function settings(
  userId: number,
  o: Partial<QueueSettings> & { caps?: string[] } = {},
): QueueSettings {
  const { caps, ...rest } = o;
  return queueSettings(userId, REALM, rest, caps);
}

type Ev = Record<string, unknown> & { id: number; type: string };

function got(rt: QueueHandle): Ev[] {
  return rt.queue.contents().map((e) => JSON.parse(eventJson(e)) as Ev);
}

function types(rt: QueueHandle): string[] {
  return got(rt).map((e) => e.type);
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

function publish(q: EventQueues, ...events: OutboundEvent[]): void {
  q.publish(REALM, events);
}

t.test('an event reaches every queue of the users it names, and nobody else', (t) => {
  const q = makeQueues(t);
  const a1 = q.register(settings(1));
  const a2 = q.register(settings(1));
  const b = q.register(settings(2));
  const otherRealm = q.register({ ...settings(1), realmId: OTHER_REALM });
  publish(q, { event: { type: 'custom_profile_fields', fields: [] }, users: [1] });
  t.same(types(a1), ['custom_profile_fields']);
  t.same(types(a2), ['custom_profile_fields']);
  t.same(types(b), [], 'an event emitted for [A] never reaches B');
  t.same(types(otherRealm), [], 'nor a queue of another realm');
  t.same(
    got(a1).map((e) => e.id),
    [0],
    'ids start at 0 per queue',
  );
  publish(q, { event: { type: 'custom_profile_fields', fields: [] }, users: [1, 2] });
  t.same(
    got(a1).map((e) => e.id),
    [0, 1],
  );
  t.same(
    got(b).map((e) => e.id),
    [0],
  );
  t.end();
});

t.test('event_types filter, and user_topic suppresses its legacy twin', (t) => {
  const q = makeQueues(t);
  const only = q.register(
    settings(1, { eventTypes: ['realm_user', 'user_topic', 'muted_topics'] }),
  );
  const all = q.register(settings(1));
  publish(
    q,
    { event: { type: 'realm_user', op: 'update', person: { user_id: 1 } }, users: [1] },
    { event: { type: 'alert_words', alert_words: [] }, users: [1] },
    { event: { type: 'muted_topics', muted_topics: [] }, users: [1] },
    {
      event: {
        type: 'user_topic',
        stream_id: 1,
        topic_name: 'x',
        last_updated: 1,
        visibility_policy: 1,
      },
      users: [1],
    },
  );
  t.same(types(only), ['realm_user', 'user_topic']);
  t.same(types(all), ['realm_user', 'alert_words', 'muted_topics', 'user_topic']);
  t.end();
});

const STREAM_MESSAGE = {
  id: 10,
  type: 'stream',
  display_recipient: 'Denmark',
  stream_id: 3,
  subject: '',
  content: '<p><strong>hi</strong></p>',
  content_type: 'text/html',
  avatar_url: 'https://secure.gravatar.com/avatar/abc?d=identicon&version=1',
  sender_email: 'hamlet@zulip.com',
  sender_id: 1,
  sender_full_name: 'Hamlet',
  recipient_id: 7,
  timestamp: 1700000000,
  client: 'test',
  is_me_message: false,
  reactions: [],
  submessages: [],
  topic_links: [],
  sender_realm_str: '',
};

function streamMessage(over: Partial<OutboundEvent> = {}, publicChannel = true): OutboundEvent {
  return {
    event: { type: 'message', message: STREAM_MESSAGE },
    users: [1, 2],
    flags: { 1: ['read'], 2: ['mentioned'] },
    message: {
      rawContent: '**hi**',
      senderAvatarIsExternal: true,
      publicChannel,
    },
    ...over,
  };
}

t.test('message events: flags, markdown, avatars, empty topic, local id, per queue', (t) => {
  const q = makeQueues(t);
  const sender = q.register(settings(1, { caps: ['empty_topic_name'] }));
  const senderOther = q.register(settings(1, { applyMarkdown: false, clientExtAvatar: true }));
  const sameVariant = q.register(settings(2, { caps: ['empty_topic_name'] }));
  const ev = streamMessage();
  ev.message!.senderQueueId = sender.id;
  ev.message!.localId = '10.01';
  publish(q, ev);

  const [s] = got(sender);
  t.equal(s!.type, 'message');
  t.same(s!.flags, ['read'], "the recipient's own flags");
  t.equal(s!.local_message_id, '10.01', 'the sending queue gets local_message_id');
  const sm = s!.message as Record<string, unknown>;
  t.equal(sm.content, '<p><strong>hi</strong></p>');
  t.equal(sm.content_type, 'text/html');
  t.equal(sm.avatar_url, STREAM_MESSAGE.avatar_url);
  t.equal(sm.subject, '', 'empty topic kept for empty_topic_name clients');
  t.equal(sm.recipient_id, 7);

  const [o] = got(senderOther);
  t.notOk('local_message_id' in o!, "the sender's other queue gets no local_message_id");
  const om = o!.message as Record<string, unknown>;
  t.equal(om.content, '**hi**', 'apply_markdown false: raw content');
  t.equal(om.content_type, 'text/x-markdown');
  t.equal(om.avatar_url, null, 'client_extavatar: external avatar is null');
  t.equal(om.subject, 'general chat', 'no empty_topic_name: the display name');

  const [m] = got(sameVariant);
  t.same(m!.flags, ['mentioned']);
  t.notOk('local_message_id' in m!);
  t.equal(
    sender.queue.contents()[0]!.shared,
    sameVariant.queue.contents()[0]!.shared,
    'queues of the same variant share one serialization',
  );
  t.not(sender.queue.contents()[0]!.shared, senderOther.queue.contents()[0]!.shared);
  t.end();
});

t.test('message events: recipient_id as each side of a 1:1 conversation sees it', (t) => {
  const q = makeQueues(t);
  const a = q.register(settings(1));
  const b = q.register(settings(2));
  publish(q, {
    event: {
      type: 'message',
      message: {
        ...STREAM_MESSAGE,
        type: 'private',
        display_recipient: [],
        recipient_id: 20,
      },
    },
    users: [1, 2],
    message: {
      rawContent: 'x',
      senderAvatarIsExternal: false,
      publicChannel: false,
      recipientIdFor: { 2: 21 },
    },
  });
  t.equal((got(a)[0]!.message as Record<string, unknown>).recipient_id, 20);
  t.equal((got(b)[0]!.message as Record<string, unknown>).recipient_id, 21);
  t.same(got(a)[0]!.flags, [], 'a listed user without flags gets []');
  t.end();
});

t.test('all_public_streams: public channels only, never private ones or DMs', (t) => {
  const q = makeQueues(t);
  const watcher = q.register(settings(3, { allPublicStreams: true }));
  const plain = q.register(settings(4));
  const otherRealm = q.register({
    ...settings(5, { allPublicStreams: true }),
    realmId: OTHER_REALM,
  });
  publish(q, streamMessage({}, true));
  t.same(types(watcher), ['message'], 'a public channel message reaches all_public_streams');
  t.same(got(watcher)[0]!.flags, [], 'with no flags (not a recipient)');
  t.same(types(plain), [], 'a non-recipient without all_public_streams gets nothing');
  t.same(types(otherRealm), [], 'nor a queue in another realm');

  publish(q, streamMessage({}, false));
  t.same(types(watcher), ['message'], 'a private channel message never reaches a non-subscriber');
  publish(q, {
    ...streamMessage({}, false),
    event: {
      type: 'message',
      message: { ...STREAM_MESSAGE, type: 'private', display_recipient: [] },
    },
  });
  t.same(types(watcher), ['message'], 'nor does a direct message');

  // A recipient with all_public_streams gets the event once, with its flags.
  const both = q.register(settings(2, { allPublicStreams: true }));
  publish(q, streamMessage({}, true));
  t.equal(got(both).length, 1);
  t.same(got(both)[0]!.flags, ['mentioned']);
  t.end();
});

t.test('register narrow filters message events only', (t) => {
  const q = makeQueues(t);
  const dm = q.register(settings(2, { narrow: [['is', 'dm']] }));
  const denmark = q.register(settings(2, { narrow: [['stream', 'denmark']] }));
  const channelTopic = q.register(
    settings(2, {
      narrow: [
        ['channel', 'Denmark'],
        ['topic', 'general chat'],
      ],
    }),
  );
  const sender = q.register(settings(2, { narrow: [['sender', 'HAMLET@zulip.com']] }));
  const mentioned = q.register(settings(2, { narrow: [['is', 'mentioned']] }));
  const starred = q.register(settings(2, { narrow: [['is', 'starred']] }));
  const other = q.register(settings(2, { narrow: [['stream', 'Verona']] }));
  publish(q, streamMessage());
  publish(q, { event: { type: 'realm_user', op: 'update', person: { user_id: 1 } }, users: [2] });
  t.same(types(dm), ['realm_user'], 'is:dm: no channel message; other events still arrive');
  t.same(types(denmark), ['message', 'realm_user'], 'channel name, case-insensitive');
  t.same(types(channelTopic), ['message', 'realm_user'], 'the empty topic as displayed');
  t.same(types(sender), ['message', 'realm_user']);
  t.same(types(mentioned), ['message', 'realm_user'], "the recipient's flags");
  t.same(types(starred), ['realm_user']);
  t.same(types(other), ['realm_user']);

  publish(q, {
    event: {
      type: 'message',
      message: { ...STREAM_MESSAGE, type: 'private', display_recipient: [] },
    },
    users: [2],
    message: { rawContent: 'x', senderAvatarIsExternal: false, publicChannel: false },
  });
  t.same(types(dm), ['realm_user', 'message'], 'is:dm: direct messages');
  t.same(types(denmark), ['message', 'realm_user']);
  t.end();
});

t.test('delete_message: bulk for bulk_message_deletion, one per message otherwise', (t) => {
  const q = makeQueues(t);
  const bulk = q.register(settings(1, { caps: ['bulk_message_deletion', 'empty_topic_name'] }));
  const legacy = q.register(settings(1));
  publish(q, {
    event: {
      type: 'delete_message',
      message_type: 'stream',
      message_ids: [5, 6],
      stream_id: 3,
      topic: '',
    },
    users: [1],
  });
  const b = got(bulk);
  t.equal(b.length, 1);
  t.same(b[0]!.message_ids, [5, 6]);
  t.equal(b[0]!.topic, '');
  const l = got(legacy);
  t.same(
    l.map((e) => [e.message_id, e.id, 'message_ids' in e, e.topic]),
    [
      [5, 0, false, 'general chat'],
      [6, 1, false, 'general chat'],
    ],
  );
  t.end();
});

t.test('typing: channel typing only to stream_typing_notifications queues', (t) => {
  const q = makeQueues(t);
  const capable = q.register(settings(1, { caps: ['stream_typing_notifications'] }));
  const legacy = q.register(settings(1));
  const sender = { user_id: 2, email: 'b@zulip.com' };
  publish(
    q,
    {
      event: {
        type: 'typing',
        op: 'start',
        message_type: 'stream',
        sender,
        stream_id: 3,
        topic: '',
      },
      users: [1],
    },
    {
      event: { type: 'typing', op: 'start', message_type: 'direct', sender, recipients: [sender] },
      users: [1],
    },
  );
  t.same(types(capable), ['typing', 'typing']);
  t.equal(got(capable)[0]!.topic, 'general chat', 'no empty_topic_name: display name');
  t.same(
    got(legacy).map((e) => e.message_type),
    ['direct'],
  );
  t.end();
});

t.test('settings events: legacy twins only without user_settings_object', (t) => {
  const q = makeQueues(t);
  const modern = q.register(settings(1, { caps: ['user_settings_object'] }));
  const legacy = q.register(settings(1));
  publish(
    q,
    {
      event: { type: 'user_settings', op: 'update', property: 'high_contrast_mode', value: true },
      users: [1],
    },
    {
      event: {
        type: 'update_display_settings',
        user: 'a@zulip.com',
        setting_name: 'high_contrast_mode',
        setting: true,
      },
      users: [1],
    },
    {
      event: {
        type: 'update_global_notifications',
        user: 'a@zulip.com',
        notification_name: 'enable_sounds',
        setting: false,
      },
      users: [1],
    },
  );
  t.same(types(modern), ['user_settings']);
  t.same(types(legacy), [
    'user_settings',
    'update_display_settings',
    'update_global_notifications',
  ]);
  t.end();
});

t.test('capability-gated events: linkifiers, groups, inaccessible users, presence', (t) => {
  const q = makeQueues(t);
  const modern = q.register(
    settings(1, {
      slimPresence: true,
      caps: ['linkifier_url_template', 'include_deactivated_groups', 'user_list_incomplete'],
    }),
  );
  const legacy = q.register(settings(1));
  publish(
    q,
    { event: { type: 'realm_linkifiers', realm_linkifiers: [] }, users: [1] },
    { event: { type: 'user_group', op: 'remove', group_id: 9 }, users: [1] },
    {
      event: { type: 'user_group', op: 'update', group_id: 9, data: { deactivated: true } },
      users: [1],
    },
    {
      event: { type: 'realm_user', op: 'add', person: { user_id: 8 }, inaccessible_user: true },
      users: [1],
    },
    {
      event: {
        type: 'presence',
        user_id: 8,
        email: 'x@zulip.com',
        server_timestamp: 1,
        presence: {},
      },
      users: [1],
    },
  );
  t.same(
    got(modern).map((e) => `${e.type}/${typeof e.op === 'string' ? e.op : ''}`),
    ['realm_linkifiers/', 'user_group/update', 'presence/'],
  );
  t.notOk('email' in got(modern)[2]!, 'slim_presence: no email');
  const l = got(legacy);
  t.same(
    l.map((e) => `${e.type}/${typeof e.op === 'string' ? e.op : ''}`),
    ['user_group/remove', 'realm_user/add', 'presence/'],
  );
  t.notOk('inaccessible_user' in l[1]!, 'the internal marker never reaches a client');
  t.equal(l[2]!.email, 'x@zulip.com');
  t.end();
});

t.test(
  'a flush: sockets given the same events share one frame; other flags, their own',
  async (t) => {
    const q = makeQueues(t);
    const frames = new Map<QueueHandle, Buffer[]>();
    const rts = [1, 2, 3, 4, 5, 6].map((user) => q.register(settings(user)));
    for (const rt of rts) {
      frames.set(rt, []);
      q.attach(rt, {
        kind: 'socket',
        deliver: (events) => frames.get(rt)!.push(eventsFrame('json', events)),
        close: () => {},
      });
    }
    const [one, two, three, four, five, six] = rts as [QueueHandle, ...QueueHandle[]];
    publish(q, { event: { type: 'heartbeat' }, users: [5] }); // five's ids run one ahead
    await tick();
    frames.get(five!)!.length = 0;
    // Two sends committed together: one publish, one flush.
    const users = [1, 2, 3, 4, 5, 6];
    publish(
      q,
      streamMessage({ users, flags: { 1: ['read'], 2: ['mentioned'] } }),
      streamMessage({ users, flags: { 1: ['read'], 3: ['mentioned'] } }),
    );
    await tick();
    const frame = (rt: QueueHandle) => {
      const f = frames.get(rt)!;
      t.equal(f.length, 1, 'one frame per socket');
      t.same(f[0], Buffer.from(eventsResponseJson(rt.queue.contents().slice(-2))), 'its events');
      return f[0]!;
    };
    const flagsOf = (rt: QueueHandle) =>
      (JSON.parse(frame(rt).toString('utf8')) as { events: Ev[] }).events.map((e) => e.flags);
    t.same(flagsOf(one), [['read'], ['read']]);
    t.same(flagsOf(two!), [['mentioned'], []]);
    t.same(flagsOf(three!), [[], ['mentioned']]);
    t.same(flagsOf(four!), [[], []]);
    t.same(flagsOf(five!), [[], []]);
    t.not(frame(one), frame(four!));
    t.not(frame(two!), frame(four!));
    t.not(frame(three!), frame(four!));
    t.not(frame(five!), frame(four!), 'the same flags under other ids: its own frame');
    t.same(
      (JSON.parse(frame(five!).toString('utf8')) as { events: Ev[] }).events.map((e) => e.id),
      [1, 2],
    );
    t.equal(frame(six!), frame(four!), 'the same events, ids and flags: one body, built once');
  },
);

t.test('msgpack frames carry exactly what JSON frames carry', (t) => {
  const q = makeQueues(t);
  const rt = q.register(settings(1));
  const big: Record<string, unknown> = { type: 'realm', op: 'update_dict', property: 'default' };
  const data: Record<string, unknown> = {};
  for (let i = 0; i < 40; i++) data[`k${i}`] = i % 2 ? `v${i}` : i;
  big.data = data;
  for (let i = 0; i < 20; i++) big[`extra${i}`] = i * 1000; // more than 15 keys: map16 headers
  const ev = streamMessage();
  ev.message!.senderQueueId = rt.id;
  ev.message!.localId = 'x1';
  for (let i = 0; i < 300; i++) {
    publish(q, { event: { type: 'heartbeat' }, users: [1] });
  }
  publish(q, { event: big as { type: string }, users: [1] }, ev);
  const events = rt.queue.contents();
  t.equal(events.length, 302);
  const fromJson = JSON.parse(eventsResponseJson(events)) as unknown;
  const fromPack = decodePacked(eventsResponsePacked(events));
  t.same(fromPack, fromJson);
  t.equal((fromJson as { events: Ev[] }).events[301]!.local_message_id, 'x1');
  t.end();
});

t.test(
  'a mutation emits a message with delivery facts; the realm actor passes them through',
  async (t) => {
    const store = Store.open(t.testdir());
    t.teardown(() => store.close());
    const { realm_id } = doCreateRealm(store, {
      name: 'R',
      string_id: '',
      owner_email: 'o@x.com',
      owner_full_name: 'O',
      owner_password_hash: null,
      owner_can_create_users: false,
      now: 0,
    });
    const q = makeQueues(t);
    const commands = {
      send: (ctx: MutationContext) => {
        ctx.emit({ type: 'message', message: STREAM_MESSAGE }, [1, 2], {
          flags: { 2: ['mentioned'] },
          message: { rawContent: '**hi**', senderAvatarIsExternal: true, publicChannel: true },
        });
        return null;
      },
      sendThenRefuse: (ctx: MutationContext) => {
        ctx.emit({ type: 'message', message: STREAM_MESSAGE }, [1, 2], {
          message: { rawContent: 'x', senderAvatarIsExternal: false, publicChannel: true },
        });
        throw new JsonableError('refused');
      },
    };
    const realm = new RealmRuntime(store, realm_id, q, commands);
    const one = q.register({ ...settings(1), realmId: realm_id });
    const two = q.register({ ...settings(2), realmId: realm_id, applyMarkdown: false });
    const watcher = q.register({ ...settings(3, { allPublicStreams: true }), realmId: realm_id });
    await t.rejects(realm.askUntyped('sendThenRefuse', {}), new JsonableError('refused'));
    t.same(types(one), [], 'nothing from a rolled-back mutation');
    await realm.askUntyped('send', {});
    t.same(got(one)[0]!.flags, []);
    t.same(got(two)[0]!.flags, ['mentioned']);
    t.equal((got(two)[0]!.message as { content: string }).content, '**hi**');
    t.same(types(watcher), ['message'], 'all_public_streams sees the public channel message');
    realm.close();
  },
);
