/**
 * One queue, consumed in turns by WebSockets and long-polls (docs/events.md "Reconnecting"): a
 * client that switches between them — closing its socket, losing it, being replaced by a poll,
 * going back to a socket after a poll — with messages sent throughout, receives every event, in
 * order, with no gap; an event it had not acknowledged comes again, the same event.
 */
import t from 'tap';
import { assertSuccess } from '../helpers/api.js';
import { mustOpen, poll, register, type Ev, type SocketClient } from '../helpers/events.js';
import { startServer } from '../helpers/server.js';

t.test('a client switching between WebSocket and long-poll loses nothing', async (t) => {
  const ts = await startServer(t);
  const hamlet = ts.fx.users.hamlet!;
  const q = await register(t, ts.api, 'hamlet', { event_types: ['message'] });
  const query = (last: number) => ({ queue_id: q.queue_id, last_event_id: last });

  const sent: number[] = [];
  const send = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const res = await ts.api.post('othello', 'messages', {
        type: 'direct',
        to: [hamlet.id],
        content: `message ${sent.length}`,
      });
      sent.push(assertSuccess(t, res, 'send').id as number);
    }
  };
  /** Event id → message id, for every event received (a repeat must be the same event). */
  const seen = new Map<number, number>();
  let acked = q.last_event_id;
  let mismatches = 0;
  const note = (evs: readonly Ev[]) => {
    for (const e of evs) {
      const id = (e.message as { id: number }).id;
      const before = seen.get(e.id);
      if (before !== undefined && before !== id) mismatches++;
      seen.set(e.id, id);
    }
  };
  /** Reads the socket until it has every event after `acked`. */
  const drain = async (client: SocketClient) => {
    const want = sent.length - (acked + 1);
    const evs = want > 0 ? await client.nextEvents(want) : [];
    note(evs);
    return evs;
  };
  const pollFrom = async (last: number, dontBlock = false) => {
    const body = assertSuccess(t, await poll(ts.api, 'hamlet', q.queue_id, last, dontBlock));
    const evs = body.events as Ev[];
    note(evs);
    return evs;
  };

  for (let round = 0; round < 3; round++) {
    // A socket takes what is pending and acknowledges half of it, then closes cleanly.
    await send(3);
    const a = await mustOpen(t, ts.url, hamlet, query(acked));
    const got = await drain(a);
    acked = got[Math.floor(got.length / 2)]!.id;
    a.ack(acked);
    await send(2);
    await a.nextEvents(2).then(note);
    await a.close();

    // A poll from the acknowledged id gets the rest again, and acknowledges it all.
    const polled = await pollFrom(acked);
    t.same(
      polled.map((e) => e.id),
      range(acked + 1, sent.length - 1),
      `round ${round}: the poll gets everything after the acknowledged id`,
    );
    acked = polled[polled.length - 1]!.id;

    // A socket (MessagePack this time) lost without a close, before acknowledging anything.
    await send(2);
    const b = await mustOpen(t, ts.url, hamlet, query(acked), ['msgpack']);
    await drain(b);
    b.ws.terminate();
    await b.closed;

    // A socket replaced by a poll: the poll answers at once with what was not acknowledged.
    await send(1);
    const c = await mustOpen(t, ts.url, hamlet, query(acked));
    await drain(c);
    const replacing = await pollFrom(acked);
    t.same(
      replacing.map((e) => e.id),
      range(acked + 1, sent.length - 1),
      `round ${round}: the replacing poll gets what the lost and the replaced sockets had`,
    );
    t.equal((await c.closed).code, 4000, `round ${round}: the socket was replaced (4000)`);
    acked = replacing[replacing.length - 1]!.id;

    // A held poll, answered by a new message, then a socket after it.
    const held = pollFrom(acked);
    await send(1);
    const answered = await held;
    t.same(
      answered.map((e) => e.id),
      [acked + 1],
    );
    acked = answered[0]!.id;
  }
  const last = await pollFrom(acked, true);
  t.same(last, [], 'nothing left unread');

  t.equal(mismatches, 0, 'an event received twice was the same event both times');
  t.same(
    [...seen.keys()].sort((x, y) => x - y),
    range(0, sent.length - 1),
    'event ids without a gap',
  );
  t.same(
    [...seen.entries()].sort((x, y) => x[0] - y[0]).map(([, id]) => id),
    sent,
    'every message, in the order sent',
  );
});

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i <= to; i++) out.push(i);
  return out;
}
