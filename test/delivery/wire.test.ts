/**
 * Fan-out shortcuts (issue #14, part 5): a one-event body built once and shared equals the body
 * built for each consumer, whatever the id and tail; the plain acknowledgement reader accepts
 * exactly the frames the full validation would take as `{"last_event_id": N}` and leaves every
 * other frame to it.
 */
import t from 'tap';
import {
  SharedEvent,
  decodePacked,
  eventsResponseBytes,
  eventsResponseJson,
  eventsResponsePacked,
  type QueuedEvent,
} from '../../src/delivery/wire.js';
import { plainAck } from '../../src/delivery/socket-frames.js';

const wholeBody = (events: QueuedEvent[]) =>
  '{"result":"success","msg":"","events":[' +
  events.map((e) => e.shared.open + e.tail + ',"id":' + e.id + '}').join(',') +
  ']}';

t.test('one-event bodies are shared and equal to building them', (t) => {
  const realm = SharedEvent.of({ type: 'realm', op: 'update_dict', data: { x: 'é' } });
  const message = SharedEvent.openMessage({ id: 5, content: 'hi' });
  for (let round = 0; round < 2; round++) {
    for (let id = 0; id < 20; id++) {
      for (const e of [
        { id, shared: realm, tail: '', extra: null },
        { id, shared: message, tail: ',"recipient_id":3},"flags":[]', extra: null },
        { id, shared: message, tail: ',"recipient_id":3},"flags":["read"]', extra: null },
      ] as QueuedEvent[]) {
        const body = eventsResponseJson([e]);
        t.equal(body, wholeBody([e]));
        JSON.parse(body);
      }
    }
  }
  const e = { id: 1, shared: realm, tail: '', extra: null };
  t.equal(eventsResponseJson([e]), eventsResponseJson([e]), 'the same string object twice');
  const two = [e, { ...e, id: 2 }];
  t.equal(eventsResponseJson(two), wholeBody(two), 'several events: built as before');
  t.match(eventsResponseJson([e], 'q1'), /,"queue_id":"q1"\}$/);
  t.end();
});

t.test(
  'byte bodies: shared by identical event lists in a turn, never across differences',
  async (t) => {
    const a = SharedEvent.openMessage({ id: 5, content: 'é' });
    const b = SharedEvent.openMessage({ id: 6, content: 'b' });
    const c = SharedEvent.openMessage({ id: 6, content: 'b' }); // equal JSON, another event
    const plain = ',"recipient_id":3},"flags":[]';
    const read = ',"recipient_id":3},"flags":["read"]';
    const list = (first: number, tails: string[], events = [a, b]): QueuedEvent[] =>
      events.map((shared, i) => ({ id: first + i, shared, tail: tails[i]!, extra: null }));
    const bytes = (events: QueuedEvent[]) => {
      const body = eventsResponseBytes(events);
      t.equal(body.toString('utf8'), wholeBody(events), 'the body as built for each consumer');
      return body;
    };
    const shared = bytes(list(7, [plain, plain]));
    t.equal(bytes(list(7, [plain, plain])), shared, 'the same events: the same bytes, built once');
    const differ = [
      list(7, [read, plain]),
      list(7, [plain, read]),
      list(8, [plain, plain]),
      list(7, [plain, plain], [a, c]),
      list(7, [plain, plain, plain], [a, b, b]),
      list(7, [plain]),
    ];
    for (const events of differ) t.not(bytes(events), shared, 'a list that differs has its own');
    t.equal(bytes(list(7, [read, plain])), bytes(list(7, [read, plain])), 'each shared in turn');
    t.same(eventsResponseBytes([]), Buffer.from(eventsResponseJson([])), 'no events');
    const big = SharedEvent.of({
      type: 'realm',
      op: 'update_dict',
      data: { x: 'y'.repeat(70_000) },
    });
    const backlog = list(3, ['', plain], [big, a]);
    t.not(bytes(backlog), bytes(backlog), 'a body over 64 KiB is not kept: each built anew');
    // Polls answered as they come in are each a callback of their own in the same turn.
    const [first, second] = await new Promise<Buffer[]>((resolve) => {
      const got: Buffer[] = [];
      setImmediate(() => got.push(bytes(list(20, [plain, plain]))));
      setImmediate(() => resolve([...got, bytes(list(20, [plain, plain]))]));
    });
    t.equal(first, second, 'shared by callbacks of one turn');
    await new Promise<void>((resolve) => setImmediate(resolve));
    const later = bytes(list(7, [plain, plain]));
    t.not(later, shared, 'built again in a later turn');
    t.same(later, shared);
  },
);

t.test('the byte bodies kept in one turn are bounded in all', async (t) => {
  // A turn answering many polls, each a backlog of its own under 64 KiB: past 4 MiB in all, a
  // body is built for its consumer and not kept (each one equal to its events' body all the same).
  await new Promise<void>((resolve) => setImmediate(resolve)); // a turn of its own
  const lists: QueuedEvent[][] = [];
  for (let i = 0; i < 100; i++) {
    const shared = SharedEvent.of({
      type: 'realm',
      op: 'update_dict',
      data: { x: 'y'.repeat(25_000) },
    });
    lists.push([
      { id: i, shared, tail: '', extra: null },
      { id: i + 1, shared, tail: '', extra: null },
    ]);
  }
  const first = lists.map((l) => eventsResponseBytes(l));
  const again = lists.map((l) => eventsResponseBytes(l));
  for (let i = 0; i < lists.length; i++) t.same(again[i], Buffer.from(wholeBody(lists[i]!)));
  const kept = first.filter((b, i) => b === again[i]).length;
  t.ok(kept > 0, `the first bodies are kept (${kept})`);
  t.ok(kept * 50_000 <= 4 * 1024 * 1024, `no more than 4 MiB of them (${kept} of ${lists.length})`);
  t.not(first.at(-1), again.at(-1), 'the last, past the bound, built anew');
  await new Promise<void>((resolve) => setImmediate(resolve));
  const last = lists.at(-1)!.map((e) => ({ ...e, id: e.id + 100 }));
  t.equal(eventsResponseBytes(last), eventsResponseBytes(last), 'the next turn keeps bodies again');
});

t.test('what a frame builds from an event is kept for the turn only', async (t) => {
  // A queued event holds only what the queue memory budget counts (its JSON): the decoded object
  // and the msgpack body that msgpack frames use are shared within a fan-out, then dropped.
  const message = SharedEvent.openMessage({ id: 5, content: 'hi' });
  const queued: QueuedEvent = {
    id: 3,
    shared: message,
    tail: ',"recipient_id":3},"flags":[]',
    extra: { message: { recipient_id: 3 }, top: { flags: [] } },
  };
  const obj = message.object();
  t.equal(message.object(), obj, 'shared within the turn');
  t.same(decodePacked(eventsResponsePacked([queued])), JSON.parse(eventsResponseJson([queued])));
  const packed = message.packedBody();
  t.equal(message.packedBody(), packed, 'the msgpack body too');
  await new Promise<void>((resolve) => setImmediate(resolve));
  const again = message.object();
  t.not(again, obj, 'made again in a later turn');
  t.same(again, obj, 'equal to the first');
  t.not(message.packedBody(), packed);
  t.same(message.packedBody(), packed);
  t.same(decodePacked(eventsResponsePacked([queued])), JSON.parse(eventsResponseJson([queued])));
});

t.test('plain acknowledgements', (t) => {
  // A view into a larger area, as the guard's batches hand them over.
  const ab = (s: string) => {
    const b = Buffer.from(`xx${s}yy`);
    return b.subarray(2, b.length - 2);
  };
  t.equal(plainAck(ab('{"last_event_id":12}')), 12);
  t.equal(plainAck(ab('{ "last_event_id" : -1 }\n')), -1);
  for (const other of [
    '{"last_event_id":"12"}',
    '{"last_event_id":1.5}',
    '{"last_event_id":1e3}',
    '{"last_event_id":-}',
    '{"last_event_id":12}x',
    '{"last_event_id":12',
    '{"last_eventid":12}',
    '{"last_event_id":12,"x":1}',
    '{"last_event_id":1234567890123456789}',
    '[12]',
    '',
    `{"last_event_id":${' '.repeat(80)}1}`,
  ]) {
    t.equal(plainAck(ab(other)), null, `${other.slice(0, 30)}: left to the full validation`);
  }
  t.end();
});
