/**
 * web/state/topic-actions.ts and topic-move.ts: the resolved names as the reference's resolved_topic (and the
 * server's topicResolution) have them, which topic actions a user sees from the realm's
 * permissions in the register data (a ChatState built from one, and kept by a `realm` event),
 * the link to a topic, and what the move dialog sends.
 */
import t from 'tap';
import type { RegisterResponse, ServerEvent, Subscription } from '../../src/client/types.js';
import { ApiError } from '../../src/client/api.js';
import { topicResolution } from '../../src/lib/message-edit.js';
import { MessageMoveError } from '../../src/mutations/message-edit-plan.js';
import { ChatState } from '../../web/state/chat.js';
import type { Names } from '../../web/state/narrow.js';
import {
  isResolved,
  topicActions,
  topicPowers,
  type TopicPowers,
} from '../../web/state/topic-actions.js';
import {
  moveRequest,
  partialMove,
  partialMoveQuestion,
  partialMoveRequest,
  resolveName,
  toggledResolved,
  topicLink,
  unresolveName,
} from '../../web/state/topic-move.js';
import { FakeTimers } from '../helpers/fake-timers.js';

t.test('resolved names: the "✔ " prefix, added and taken off as the server takes them', (t) => {
  t.equal(resolveName('lunch'), '✔ lunch');
  t.ok(isResolved('✔ lunch'));
  t.notOk(isResolved('✔lunch'), 'the prefix is the check and a space');
  t.notOk(isResolved('lunch ✔ '));
  t.equal(unresolveName('✔ lunch'), 'lunch');
  t.equal(unresolveName('✔ ✔✔ lunch'), 'lunch', 'a doubled prefix goes all at once');
  t.equal(unresolveName('lunch'), 'lunch', 'not resolved: the same');
  t.equal(toggledResolved('lunch'), '✔ lunch');
  t.equal(toggledResolved('✔ lunch'), 'lunch');
  t.equal(toggledResolved('✔ ✔ lunch'), 'lunch');
  // The server counts these as a pure resolve or unresolve (its permission, its notices).
  for (const orig of ['lunch', '✔ lunch', '✔ ✔✔ lunch', '✔ ✔ a ✔ b']) {
    const to = toggledResolved(orig);
    const r = topicResolution(orig, to, to);
    t.ok(isResolved(orig) ? r.unresolved : r.resolved, `${orig} → ${to}: as the server sees it`);
  }
  t.end();
});

const ALL: TopicPowers = {
  moveChannels: true,
  moveTopics: true,
  resolve: true,
  admin: true,
  emptyTopicOnly: false,
};
const NONE: TopicPowers = {
  moveChannels: false,
  moveTopics: false,
  resolve: false,
  admin: false,
  emptyTopicOnly: false,
};

t.test('which actions show, in the reference’s order', (t) => {
  t.same(topicActions('lunch', ALL), ['copy-link', 'move', 'resolve', 'delete']);
  t.same(topicActions('✔ lunch', ALL), ['copy-link', 'move', 'unresolve', 'delete']);
  t.same(topicActions('lunch', NONE), ['copy-link'], 'the link for everyone');
  t.same(
    topicActions('lunch', { ...NONE, moveTopics: true }),
    ['copy-link', 'rename'],
    'topics but not channels: Rename topic',
  );
  t.same(
    topicActions('lunch', { ...NONE, moveChannels: true }),
    ['copy-link', 'move'],
    'channels but not topics: Move topic (its name fixed in the dialog)',
  );
  t.same(
    topicActions('lunch', { ...NONE, moveTopics: true, emptyTopicOnly: true }),
    ['copy-link'],
    'a channel of the general chat only: no other name to rename to',
  );
  t.same(
    topicActions('', { ...NONE, resolve: true }),
    ['copy-link'],
    'the general chat cannot be resolved',
  );
  t.same(topicActions('lunch', { ...NONE, resolve: true }), ['copy-link', 'resolve']);
  t.same(topicActions('lunch', { ...NONE, admin: true }), ['copy-link', 'delete']);
  t.end();
});

const members = (ids: number[]) => ({ direct_members: ids, direct_subgroups: [] });

function state(
  self: { role: number; is_admin?: boolean },
  realm: Record<string, unknown>,
  subs: Partial<Subscription>[] = [],
) {
  const clock = new FakeTimers();
  const reg = {
    queue_id: 'q',
    last_event_id: -1,
    user_id: 1,
    email: 'hamlet@zulip.com',
    full_name: 'Hamlet',
    role: self.role,
    is_admin: self.is_admin ?? false,
    subscriptions: subs.map((s) => ({ name: `c${s.stream_id}`, is_muted: false, ...s })),
    ...realm,
  } as unknown as RegisterResponse;
  return new ChatState(reg, { now: clock.now, timers: clock.timers });
}

t.test('the powers, from the register data', (t) => {
  const member = state(
    { role: 400 },
    {
      realm_can_move_messages_between_channels_group: members([9]),
      realm_can_move_messages_between_topics_group: members([1]),
      realm_can_resolve_topics_group: members([1, 9]),
      realm_topics_policy: 'allow_empty_topic',
    },
    [{ stream_id: 3 }, { stream_id: 4, topics_policy: 'empty_topic_only' }],
  );
  t.same(topicPowers(member, 3), {
    moveChannels: false,
    moveTopics: true,
    resolve: true,
    admin: false,
    emptyTopicOnly: false,
  });
  t.same(topicActions('lunch', topicPowers(member, 3)), ['copy-link', 'rename', 'resolve']);
  t.equal(topicPowers(member, 4).emptyTopicOnly, true, 'the channel’s own topics policy');
  t.same(topicActions('', topicPowers(member, 4)), ['copy-link']);

  // The realm's setting changed (an event): the menu follows.
  member.apply([
    {
      id: 0,
      type: 'realm',
      op: 'update_dict',
      property: 'default',
      data: { can_move_messages_between_channels_group: members([1]) },
    } as unknown as ServerEvent,
  ]);
  t.same(
    topicActions('lunch', topicPowers(member, 3)),
    ['copy-link', 'move', 'resolve'],
    'moving between channels given: Move topic',
  );

  const admin = state({ role: 200, is_admin: true }, { realm_topics_policy: 'empty_topic_only' }, [
    { stream_id: 3, topics_policy: 'inherit' },
  ]);
  t.same(topicPowers(admin, 3), {
    moveChannels: false,
    moveTopics: false,
    resolve: false,
    admin: true,
    emptyTopicOnly: true,
  });
  t.same(topicActions('lunch', topicPowers(admin, 3)), ['copy-link', 'delete']);
  t.end();
});

t.test('the link to a topic: its view’s address, as a message’s link has it', (t) => {
  const names: Names = {
    channelName: (id) => ({ 9: 'design team' })[id],
    channelId: () => undefined,
    userName: () => undefined,
    userId: () => undefined,
    selfId: 1,
  };
  t.equal(
    topicLink('https://chat.example.com', 9, 'lunch plans', names),
    'https://chat.example.com/#narrow/channel/9-design-team/topic/lunch.20plans',
  );
  t.equal(
    topicLink('https://chat.example.com', 9, '✔ a/b', names),
    'https://chat.example.com/#narrow/channel/9-design-team/topic/.E2.9C.94.20a.2Fb',
  );
  t.end();
});

t.test('what the move dialog sends', (t) => {
  const from = { streamId: 3, topic: 'lunch' };
  const notify = { newThread: true, oldThread: false };
  const opts = { emptyTopicAllowed: true };
  t.same(moveRequest(from, { streamId: 3, topic: ' dinner ' }, notify, opts), {
    ok: true,
    body: {
      topic: 'dinner',
      propagate_mode: 'change_all',
      send_notification_to_new_thread: true,
      send_notification_to_old_thread: false,
    },
  });
  t.same(
    moveRequest(from, { streamId: 4, topic: 'lunch' }, { newThread: false, oldThread: true }, opts),
    {
      ok: true,
      body: {
        stream_id: 4,
        propagate_mode: 'change_all',
        send_notification_to_new_thread: false,
        send_notification_to_old_thread: true,
      },
    },
    'another channel, the same name: the name not sent',
  );
  t.same(moveRequest(from, { streamId: 3, topic: 'lunch ' }, notify, opts), {
    ok: false,
    why: 'Nothing to change.',
  });
  t.same(moveRequest(from, { streamId: 3, topic: '' }, notify, { emptyTopicAllowed: false }), {
    ok: false,
    why: 'Topics are required in this organization.',
  });
  t.same(moveRequest(from, { streamId: 3, topic: '' }, notify, opts).ok, true);
  t.same(
    moveRequest(from, { streamId: 3, topic: 'Lunch' }, notify, opts).ok,
    true,
    'a change of case is a rename',
  );
  t.end();
});

t.test('a move the time limit refuses: only the newer messages, from the first allowed', (t) => {
  // The server's own refusal (a member; 2 of the topic's 5 messages are within the limit, the
  // first of them 7), as the client receives it.
  const refusal = (first: number | null, total: number, allowed: number) => {
    const e = new ApiError(400, new MessageMoveError(first, total, allowed).toBody(), null);
    return partialMove(e.code, e.body);
  };
  const part = refusal(7, 5, 2);
  t.same(part, { firstId: 7, allowed: 2, remaining: 3 });
  const rename = moveRequest(
    { streamId: 3, topic: 'lunch' },
    { streamId: 3, topic: 'dinner' },
    { newThread: true, oldThread: false },
    { emptyTopicAllowed: true },
  );
  if (!rename.ok || !part) return t.fail('a move and a partial move');
  t.same(
    partialMoveRequest(rename.body, part),
    {
      id: 7,
      body: {
        topic: 'dinner',
        propagate_mode: 'change_later',
        send_notification_to_new_thread: true,
        send_notification_to_old_thread: false,
      },
    },
    'PATCH /messages/7 with change_later: it and the later ones, as the refused move otherwise',
  );
  const toChannel = moveRequest(
    { streamId: 3, topic: 'lunch' },
    { streamId: 4, topic: 'lunch' },
    { newThread: false, oldThread: true },
    { emptyTopicAllowed: true },
  );
  if (!toChannel.ok) return t.fail('a move to a channel');
  t.same(partialMoveRequest(toChannel.body, part).body, {
    stream_id: 4,
    propagate_mode: 'change_later',
    send_notification_to_new_thread: false,
    send_notification_to_old_thread: true,
  });
  t.same(partialMoveQuestion(part), {
    title: 'Move some messages?',
    text:
      'You do not have permission to move some of the messages in this topic. Contact a ' +
      'moderator to move all messages.',
    detail:
      'Do you still want to move the latest 2 messages? 3 messages will remain in the current topic.',
  });
  t.equal(
    partialMoveQuestion({ firstId: 9, allowed: 1, remaining: 1 }).detail,
    'Do you still want to move the latest message? 1 message will remain in the current topic.',
    'one of each',
  );
  t.equal(refusal(null, 3, 0), null, 'nothing left to move: the refusal stands');
  t.equal(
    partialMove('BAD_REQUEST', { first_message_id_allowed_to_move: 7 }),
    null,
    'another refusal: shown as it is',
  );
  t.equal(
    partialMove('MOVE_MESSAGES_TIME_LIMIT_EXCEEDED', { msg: 'no counts' }),
    null,
    'a refusal without its counts: shown as it is',
  );
  t.end();
});

t.test('a deletion in a channel: its topics are asked again (a topic deleted goes)', (t) => {
  const s = state({ role: 400 }, {}, [{ stream_id: 3 }, { stream_id: 4 }]);
  s.setTopics(3, [
    { name: 'lunch', max_id: 10 },
    { name: 'trash', max_id: 12 },
  ]);
  s.setTopics(4, [{ name: 'roses', max_id: 11 }]);
  const rev = s.rev.topics.value;
  s.apply([
    {
      id: 0,
      type: 'delete_message',
      message_type: 'stream',
      message_ids: [12],
      stream_id: 3,
      topic: 'trash',
    } as unknown as ServerEvent,
  ]);
  t.ok(s.topicsToFetch(3), 'the channel’s list to be fetched again');
  t.ok(s.topics.has(3), '(shown until then)');
  t.notOk(s.topicsToFetch(4), 'another channel’s kept');
  t.ok(s.rev.topics.value > rev, 'drawn again');
  // A fetch on its way when the deletion came: its answer may still hold the topic.
  s.askTopics(4);
  s.apply([
    {
      id: 1,
      type: 'delete_message',
      message_type: 'stream',
      message_ids: [11],
      stream_id: 4,
      topic: 'roses',
    } as unknown as ServerEvent,
  ]);
  t.equal(s.setTopics(4, [{ name: 'roses', max_id: 11 }]), false, 'asked again');
  // A direct message's deletion: no channel's topics.
  s.setTopics(3, [{ name: 'lunch', max_id: 10 }]);
  t.notOk(s.topicsToFetch(3), 'fetched');
  s.apply([
    {
      id: 2,
      type: 'delete_message',
      message_type: 'private',
      message_ids: [20],
    } as unknown as ServerEvent,
  ]);
  t.notOk(s.topicsToFetch(3));
  t.end();
});
