/**
 * The queue buffer (src/delivery/buffer.ts) against a plain list, as a property (fast-check):
 * any sequence of pushes, acknowledgements and reads gives the same ids and events in the same
 * order; the memory account holds each event once and each chunk while it lives, and comes back
 * to nothing when the queues are emptied.
 */
import fc from 'fast-check';
import t from 'tap';
import { chunkBytes, EventBuffer, QueueMemory } from '../../src/delivery/buffer.js';
import { SharedEvent } from '../../src/delivery/wire.js';
import { fuzzScale, fuzzSeed } from '../helpers/fuzz.js';

type Op =
  { kind: 'push'; n: number } | { kind: 'ack'; back: number } | { kind: 'read'; back: number };

t.test('the chunked buffer behaves as a list', (t) => {
  const events = Array.from({ length: 50 }, (_, i) => SharedEvent.of({ type: 'heartbeat', n: i }));
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('push' as const), n: fc.integer({ min: 1, max: 300 }) }),
    fc.record({ kind: fc.constant('ack' as const), back: fc.integer({ min: 0, max: 400 }) }),
    fc.record({ kind: fc.constant('read' as const), back: fc.integer({ min: 0, max: 400 }) }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 40 }), fc.integer({ min: 1, max: 3 }), (ops, queues) => {
      const memory = new QueueMemory();
      const qs = Array.from({ length: queues }, () => new EventBuffer(memory));
      const model: { id: number; ev: number }[][] = qs.map(() => []);
      let next = 0;
      for (const o of ops) {
        qs.forEach((q, j) => {
          const m = model[j]!;
          if (o.kind === 'push') {
            for (let i = 0; i < o.n; i++) {
              const ev = (next + i) % events.length;
              const id = q.push(events[ev]!);
              m.push({ id, ev });
            }
          } else if (o.kind === 'ack') {
            const id = q.lastId - o.back;
            if (id < q.newestPrunedId) return;
            q.prune(id);
            while (m.length > 0 && m[0]!.id <= id) m.shift();
          } else {
            const after = q.lastId - o.back;
            const got = q.after(after).map((e) => [e.id, e.shared]);
            const want = m.filter((e) => e.id > after).map((e) => [e.id, events[e.ev]]);
            if (
              got.length !== want.length ||
              got.some((g, i) => g[0] !== want[i]![0] || g[1] !== want[i]![1])
            )
              throw new Error(`after(${after}) differs`);
          }
          if (q.size !== m.length) throw new Error(`size ${q.size}, expected ${m.length}`);
        });
        if (o.kind === 'push') next += o.n;
      }
      const entries = model.reduce((n, m) => n + m.length, 0);
      if (memory.entries !== entries) throw new Error(`entries ${memory.entries} vs ${entries}`);
      const distinct = new Set(model.flatMap((m) => m.map((e) => e.ev)));
      const eventBytes = [...distinct].reduce((n, ev) => n + events[ev]!.size, 0);
      // Each queue's chunks: at least what its entries fill, at most one chunk's worth more each.
      if (memory.bytes < eventBytes + entries * 2 * 8)
        throw new Error(`memory ${memory.bytes} under what the entries hold`);
      if (memory.bytes > eventBytes + entries * 2 * 8 + qs.length * 2 * chunkBytes(256))
        throw new Error(`memory ${memory.bytes} over what the chunks can hold`);
      for (const q of qs) q.clear();
      if (memory.bytes !== 0 || memory.entries !== 0)
        throw new Error(`left: ${memory.bytes} bytes`);
    }),
    { numRuns: 300 * fuzzScale(), seed: fuzzSeed() },
  );
  t.pass('as a list, and the account comes back to nothing');
  t.end();
});
