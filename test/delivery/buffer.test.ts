/**
 * Pure pieces of the event system: the queue buffer (ids, acknowledgement, pruning, memory),
 * the events narrow, and the typing fan-out rules.
 */
import t from 'tap';
import { EventBuffer } from '../../src/delivery/buffer.js';
import { JsonableError } from '../../src/lib/errors.js';
import { eventJson, SharedEvent } from '../../src/delivery/wire.js';
import { checkNarrowForEvents, narrowMatches } from '../../src/lib/narrow.js';
import { MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS } from '../../src/lib/limits.js';
import { channelTypingEvent, directTypingEvent, type TypingPerson } from '../../src/lib/typing.js';

function pushN(q: EventBuffer, n: number): void {
  for (let i = 0; i < n; i++) q.push(SharedEvent.of({ type: 'heartbeat' }));
}

t.test('ids start at 0 and only increase; acknowledged events are dropped', (t) => {
  const q = new EventBuffer();
  t.equal(q.lastId, -1);
  pushN(q, 3);
  t.same(
    q.contents().map((e) => e.id),
    [0, 1, 2],
  );
  q.acknowledge(-1);
  t.equal(q.size, 3, 'acknowledging -1 drops nothing');
  q.acknowledge(1);
  t.same(
    q.contents().map((e) => e.id),
    [2],
  );
  t.equal(q.newestPrunedId, 1);
  q.acknowledge(1);
  t.equal(q.size, 1, 'acknowledging the same id again is harmless');
  pushN(q, 1);
  t.same(
    q.after(2).map((e) => e.id),
    [3],
  );
  t.equal(eventJson(q.contents()[0]!), '{"type":"heartbeat","id":2}');
  t.end();
});

t.test('acknowledgements the queue cannot honour are refused', (t) => {
  const q = new EventBuffer();
  pushN(q, 3);
  q.acknowledge(1);
  t.throws(
    () => q.acknowledge(0),
    new JsonableError('An event newer than 0 has already been pruned!'),
  );
  t.throws(() => q.acknowledge(7), new JsonableError('Event 7 was not in this queue'));
  t.end();
});

t.test('pruning many events keeps order and memory bounded', (t) => {
  const q = new EventBuffer();
  for (let i = 0; i < 1000; i++) {
    pushN(q, 1);
    if (i % 3 === 0) q.acknowledge(i - 1);
  }
  const ids = q.contents().map((e) => e.id);
  t.same(
    ids,
    [...ids].sort((a, b) => a - b),
  );
  t.ok(ids.length <= 3);
  t.equal(ids[ids.length - 1], 999);
  t.end();
});

t.test('events narrow: supported operators, refusals', (t) => {
  t.throws(
    () => checkNarrowForEvents([['search', 'x']]),
    new JsonableError('Operator search not supported.'),
  );
  t.throws(
    () => checkNarrowForEvents([['is', 'followed']]),
    new JsonableError('Operand followed not supported.'),
  );
  t.throws(
    () => checkNarrowForEvents([['dm', 'a@b.c']]),
    new JsonableError('Operator dm not supported.'),
  );
  t.doesNotThrow(() =>
    checkNarrowForEvents([
      ['channel', 'x'],
      ['stream', 'x'],
      ['topic', 'y'],
      ['exact-topic', 'y'],
      ['sender', 'a@b.c'],
      ['is', 'dm'],
    ]),
  );
  const msg = {
    type: 'stream',
    display_recipient: 'Verona',
    subject: '✔ Lunch plans',
    sender_email: 'Iago@zulip.com',
  };
  t.ok(narrowMatches([['channel', 'verona']], msg, []));
  t.notOk(narrowMatches([['channel', 'denmark']], msg, []));
  t.ok(narrowMatches([['topic', 'lunch']], msg, []), 'a word of the topic');
  t.notOk(narrowMatches([['exact-topic', 'lunch plans']], msg, []));
  t.ok(narrowMatches([['exact-topic', '✔ Lunch plans']], msg, []));
  t.ok(narrowMatches([['is', 'resolved']], msg, []));
  t.ok(narrowMatches([['sender', 'iago@zulip.com']], msg, []));
  t.ok(narrowMatches([['is', 'unread']], msg, []));
  t.notOk(narrowMatches([['is', 'unread']], msg, ['read']));
  t.ok(narrowMatches([['is', 'alerted']], msg, ['mentioned']));
  t.notOk(narrowMatches([['is', 'private']], msg, []));
  t.ok(narrowMatches([['is', 'private']], { type: 'private', display_recipient: [] }, []));
  t.notOk(
    narrowMatches(
      [
        ['channel', 'verona'],
        ['is', 'starred'],
      ],
      msg,
      [],
    ),
    'every term must hold',
  );
  t.end();
});

const person = (id: number, o: Partial<TypingPerson> = {}): TypingPerson => ({
  user_id: id,
  email: `u${id}@zulip.com`,
  is_active: true,
  receives_typing_notifications: true,
  ...o,
});

t.test('direct typing: active participants who receive typing notifications', (t) => {
  const ev = directTypingEvent(
    person(1),
    [
      person(2),
      person(3, { receives_typing_notifications: false }),
      person(4, { is_active: false }),
      person(1),
    ],
    'start',
  );
  t.same(ev.users, [2, 1]);
  t.same(ev.event, {
    type: 'typing',
    op: 'start',
    message_type: 'direct',
    sender: { user_id: 1, email: 'u1@zulip.com' },
    recipients: [2, 3, 4, 1].map((id) => ({ user_id: id, email: `u${id}@zulip.com` })),
  });
  t.end();
});

t.test('channel typing: subscribers who receive it; nobody in channels over 100', (t) => {
  const subs = [person(1), person(2), person(3, { receives_typing_notifications: false })];
  const ev = channelTypingEvent(person(1), 'stop', 7, 'lunch', subs)!;
  t.same(ev.users, [1, 2]);
  t.same(ev.event, {
    type: 'typing',
    op: 'stop',
    message_type: 'stream',
    sender: { user_id: 1, email: 'u1@zulip.com' },
    stream_id: 7,
    topic: 'lunch',
  });
  const exactly = Array.from({ length: MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS }, (_, i) =>
    person(i + 1),
  );
  t.equal(channelTypingEvent(person(1), 'start', 7, 't', exactly)!.users.length, 100);
  const over = [...exactly, person(101)];
  t.equal(channelTypingEvent(person(1), 'start', 7, 't', over), null);
  t.end();
});
