/**
 * Who may post in a channel (web/state/channel-settings.ts canPostIn, ChatState.canPostIn, the
 * server's sendMessageDecision), and what follows from it: no typing notification goes to a
 * channel the user may not post in (web/state/typing.ts), the compose box refuses the send.
 * Archived channels (register's `archived_channels`): kept apart with their names, back whole
 * when unarchived, and named in the Scheduled messages view (web/state/scheduled.ts
 * destinationText).
 */
import t from 'tap';
import type { ServerEvent } from '../../src/client/types.js';
import { canPostIn } from '../../web/state/channel-settings.js';
import type { GroupSetting } from '../../web/state/groups.js';
import { REGISTER_PARAMS } from '../../web/state/register.js';
import { destinationText, type DestinationChannel } from '../../web/state/scheduled.js';
import { TypingSender, type TypingTo } from '../../web/state/typing.js';
import { FakeTimers } from '../helpers/fake-timers.js';
import { chatState } from '../helpers/web-chat.js';

t.test('canPostIn: the channel’s posting group, then access to the channel', (t) => {
  const facts = (o: { guest?: boolean; subscribed?: boolean; groups?: number[] } = {}) => ({
    guest: o.guest ?? false,
    subscribed: o.subscribed ?? false,
    inGroup: (g: GroupSetting | undefined) =>
      g !== undefined &&
      (typeof g === 'number'
        ? (o.groups ?? [1]).includes(g)
        : g.direct_members.includes(3) ||
          g.direct_subgroups.some((x) => (o.groups ?? [1]).includes(x))),
  });
  const open = { invite_only: false, can_send_message_group: 1 };
  t.ok(canPostIn(open, facts()), 'a public channel, in the group');
  t.notOk(canPostIn({ ...open, can_send_message_group: 2 }, facts()), 'not in the posting group');
  t.notOk(
    canPostIn({ ...open, can_send_message_group: 2 }, facts({ subscribed: true })),
    'subscribed does not make up for it',
  );
  t.ok(
    canPostIn(
      { ...open, can_send_message_group: { direct_members: [3], direct_subgroups: [] } },
      facts({ groups: [] }),
    ),
    'named directly in the setting',
  );
  t.ok(canPostIn({ invite_only: false }, facts()), 'no setting known: not refused here');
  t.notOk(canPostIn({ ...open, is_archived: true }, facts({ subscribed: true })), 'archived');
  t.notOk(canPostIn(open, facts({ guest: true })), 'a guest outside a public channel');
  t.ok(canPostIn(open, facts({ guest: true, subscribed: true })), 'a guest in it');
  t.ok(canPostIn({ ...open, is_web_public: true }, facts({ guest: true })), 'web-public');
  const priv = { ...open, invite_only: true, history_public_to_subscribers: true };
  t.notOk(canPostIn(priv, facts()), 'a private channel one is not in');
  t.ok(canPostIn(priv, facts({ subscribed: true })), 'one is in');
  t.ok(canPostIn({ ...priv, can_subscribe_group: 1 }, facts()), 'one may join it (shared history)');
  t.notOk(
    canPostIn({ ...priv, can_subscribe_group: 1, history_public_to_subscribers: false }, facts()),
    'not with protected history',
  );
  t.end();
});

t.test('typing: nothing sent to a conversation refused', (t) => {
  const clock = new FakeTimers();
  const sent: string[] = [];
  const refused = new Set<number>([2]);
  const s = new TypingSender(
    (op, to) => sent.push(`${op}:${to.type === 'stream' ? to.stream_id : 'dm'}`),
    { startedWaitMs: 10_000, stoppedWaitMs: 5_000, startedExpiryMs: 15_000 },
    clock.now,
    clock.timers,
    (to) => to.type !== 'stream' || !refused.has(to.stream_id),
  );
  const channel = (id: number): TypingTo => ({ type: 'stream', stream_id: id, topic: 'x' });
  s.typed(channel(2), false);
  clock.advance(20_000);
  s.typed(channel(2), false);
  t.same(sent, [], 'no start, no stop, for a channel one may not post in');
  t.equal(clock.pending, 0, 'and no timer');
  s.typed(channel(1), false);
  s.typed(channel(2), false);
  t.same(sent, ['start:1', 'stop:1'], 'moving to it stops the one before, sends nothing to it');
  s.typed(channel(1), false);
  refused.add(1);
  clock.advance(5_000);
  t.same(sent, ['start:1', 'stop:1', 'start:1'], 'refused since the start: no stop sent');
  s.typed({ type: 'direct', to: [4] }, false);
  t.same(sent.at(-1), 'start:dm', 'direct messages are not concerned');
  t.end();
});

let eventId = 0;
const ev = (e: Record<string, unknown>) => ({ id: eventId++, ...e }) as unknown as ServerEvent;

const SYSTEM = [
  { id: 10, name: 'role:members', members: [3], direct_subgroup_ids: [] },
  { id: 11, name: 'role:administrators', members: [1], direct_subgroup_ids: [] },
];

const chat = (o: Record<string, unknown> = {}) => chatState({ realm_user_groups: SYSTEM, ...o });

const sub = (id: number, name: string, o: Record<string, unknown> = {}) => ({
  stream_id: id,
  name,
  description: '',
  color: '#fff',
  invite_only: false,
  is_muted: false,
  pin_to_top: false,
  desktop_notifications: null,
  can_send_message_group: 10,
  ...o,
});

t.test('ChatState.canPostIn follows the channel’s setting and what the app knows', (t) => {
  const s = chat({
    subscriptions: [sub(1, 'general'), sub(2, 'announce', { can_send_message_group: 11 })],
    never_subscribed: [sub(3, 'elsewhere'), sub(4, 'secret', { invite_only: true })],
  });
  t.ok(s.canPostIn(1), 'members may post');
  t.notOk(s.canPostIn(2), 'administrators only');
  t.ok(s.canPostIn(3), 'a public channel one is not in');
  t.notOk(s.canPostIn(4), 'a private one one is not in');
  t.notOk(s.canPostIn(99), 'one the app does not know');
  s.apply([
    ev({
      type: 'stream',
      op: 'update',
      stream_id: 2,
      property: 'can_send_message_group',
      value: { direct_members: [3], direct_subgroups: [] },
    }),
  ]);
  t.ok(s.canPostIn(2), 'the setting’s change applies');
  t.end();
});

t.test('archived channels: registered for, kept apart with their names', (t) => {
  t.equal(REGISTER_PARAMS.client_capabilities.archived_channels, true);
  const s = chat({
    subscriptions: [sub(1, 'general'), sub(2, 'old days', { is_archived: true })],
    never_subscribed: [sub(3, 'attic', { is_archived: true })],
  });
  t.same([...s.channels.keys()], [1], 'only the channel in use is among the channels');
  t.same([...s.subs.keys()], [1], 'and the subscriptions');
  t.equal(s.channelName(2), 'old days', 'the archived keep their names');
  t.equal(s.channelName(3), 'attic');
  t.equal(s.channelName(9), 'unknown');
  t.notOk(s.canPostIn(2), 'nobody posts in an archived channel');

  const rev = s.rev.channels.value;
  s.apply([
    ev({ type: 'stream', op: 'update', stream_id: 1, property: 'is_archived', value: true }),
  ]);
  t.notOk(s.channels.has(1), 'archived: out of the channels');
  t.notOk(s.subs.has(1), 'out of the subscriptions (the sidebar)');
  t.equal(s.channelName(1), 'general', 'still named');
  t.ok(s.rev.channels.value > rev, 'redrawn');
  s.apply([ev({ type: 'stream', op: 'update', stream_id: 1, property: 'name', value: 'General' })]);
  t.equal(s.channelName(1), 'General', 'a rename while archived is followed');
  s.apply([
    ev({ type: 'stream', op: 'update', stream_id: 1, property: 'is_archived', value: false }),
  ]);
  t.ok(s.subs.has(1), 'unarchived: subscribed again, as before');
  t.equal(s.subs.get(1)?.is_archived, false);
  t.equal(s.channels.get(1)?.name, 'General');
  s.apply([
    ev({ type: 'stream', op: 'update', stream_id: 3, property: 'is_archived', value: false }),
  ]);
  t.ok(s.channels.has(3), 'one never subscribed comes back among the channels');
  t.notOk(s.subs.has(3), 'not subscribed');
  // Left while archived: back unsubscribed.
  s.apply([ev({ type: 'stream', op: 'update', stream_id: 2, property: 'name', value: 'Old' })]);
  s.apply([ev({ type: 'subscription', op: 'remove', subscriptions: [{ stream_id: 2 }] })]);
  s.apply([
    ev({ type: 'stream', op: 'update', stream_id: 2, property: 'is_archived', value: false }),
  ]);
  t.equal(s.channels.get(2)?.name, 'Old', 'unarchived, renamed while archived');
  t.notOk(s.subs.has(2), 'left while archived: not subscribed');
  t.end();
});

t.test('where a scheduled message goes, in words', (t) => {
  const channels: Record<number, DestinationChannel> = {
    1: { name: 'general', archived: false },
    2: { name: 'old days', archived: true },
  };
  const look = {
    channel: (id: number) => channels[id],
    topic: (topic: string) => topic || 'general chat',
    dm: (ids: readonly number[]) => ids.map((id) => `User ${id}`).join(', '),
  };
  t.equal(
    destinationText({ kind: 'stream', streamId: 1, topic: 'lunch' }, look),
    '#general › lunch',
  );
  t.equal(
    destinationText({ kind: 'stream', streamId: 2, topic: 'lunch' }, look),
    '#old days (archived channel) › lunch',
  );
  t.equal(
    destinationText({ kind: 'stream', streamId: 7, topic: '' }, look),
    'Unknown channel › general chat',
  );
  t.equal(destinationText({ kind: 'stream', streamId: null, topic: '' }, look), 'No channel');
  t.equal(destinationText({ kind: 'dm', userIds: [4, 5] }, look), 'To User 4, User 5');
  t.end();
});
