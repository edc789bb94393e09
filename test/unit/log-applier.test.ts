/**
 * The progress watch of a cluster node's log applier (src/cluster/log-applier.ts; docs/cluster.md
 * "The log and what a node applies"), with the log played by hand: a consumer that stops
 * delivering while the log holds more (what a node saw when its consumer's NATS server froze, and
 * what it did before: nothing, for minutes) is made again from the last applied position, the
 * stall shows in the applier's status while it lasts, and a stall that lasts past its limit stops
 * the node. An idle log, or one the node cannot ask, is no stall.
 */
import t from 'tap';
import type { Entry } from '../../src/cluster/jetstream.js';
import type { ClusterLink } from '../../src/cluster/link.js';
import { patiently } from '../../src/cluster/jetstream.js';
import { pack } from '../../src/lib/pack.js';
import { CatchingUpError } from '../../src/cluster/read-barrier.js';
import { stubbedApplier } from '../helpers/applier.js';

type Msg = { seq: number; subject: string; data: Uint8Array };

/** A log of lease markers on realm 1, `last` entries long, and the consumers made on it. */
function world(opts: {
  last: number;
  stallAfter?: number;
  /** Every consumer made stops after `stallAfter` entries (not only the first). */
  everyStalls?: boolean;
  stallMs?: number;
  exitMs?: number;
  readBarrierMs?: number;
  /** Each entry reaches a consumer this long after the log took it (a slow but live copy). */
  deliverAfterMs?: number;
  /** The log was trimmed up to this position: a consumer hands on nothing at or below it. */
  trimmedTo?: number;
}) {
  let last = opts.last;
  /** When (performance.now) the log took each entry after the first `opts.last`. */
  const takenAt = new Map<number, number>();
  const deliverable = (seq: number) =>
    performance.now() - (takenAt.get(seq) ?? -Infinity) >= (opts.deliverAfterMs ?? 0);
  let unreachable = false;
  let leaderless = false;
  const made: number[] = [];
  const entry: Entry = { k: 'lease', node: 'n2', inc: 'x', term: 1 };
  const msg = (seq: number): Msg => ({ seq, subject: 'confab.log.1', data: pack(entry) });
  const consumer = (from: number) => {
    made.push(from);
    // The first consumer stops after `stallAfter` entries (its server froze); later ones do not.
    const stalls = opts.stallAfter !== undefined && (made.length === 1 || opts.everyStalls);
    const stopAt = stalls ? opts.stallAfter! : Infinity;
    let closed = false;
    let wake: (() => void) | null = null;
    return {
      close: () => {
        closed = true;
        wake?.();
        return Promise.resolve();
      },
      async *[Symbol.asyncIterator]() {
        let seq = Math.max(from, (opts.trimmedTo ?? 0) + 1);
        for (;;) {
          while (!closed && (seq > last || seq > stopAt || !deliverable(seq)))
            await new Promise<void>((r) => {
              wake = r;
              setTimeout(r, 20);
            });
          if (closed) return;
          yield msg(seq++);
        }
      },
    };
  };
  const consumeOpts: { expires?: number }[] = [];
  const electedCallbacks: ((err: unknown, m: unknown) => void)[] = [];
  /** While set, making a consumer waits for it (a creation held up by an election). */
  let gate: Promise<void> | null = null;
  /** How many of the next creations are never answered (placed on a server that is gone). */
  let hanging = 0;
  /** When (performance.now) each consumer was asked for. */
  const asks: number[] = [];
  let reconnected: (() => void) | null = null;
  /** While set, questions for the log's position are never answered (a frozen server). */
  let silent = false;
  let positionAsks = 0;
  let checks = 0;
  const link = {
    opts: {
      stallMs: opts.stallMs ?? 300,
      stallExitMs: opts.exitMs ?? 60_000,
      ...(opts.readBarrierMs === undefined ? {} : { readBarrierMs: opts.readBarrierMs }),
    },
    names: { stream: 'LOG', log: 'confab.log' },
    checkConnection: () => void checks++,
    nc: {
      // The connection's status: a reconnection when the test says (`reconnect`).
      status: () =>
        (async function* () {
          for (;;) {
            await new Promise<void>((r) => (reconnected = r));
            yield { type: 'reconnect', data: 'nats2' };
          }
        })(),
      getServer: () => 'nats1',
      // JetStream's advisories: a stream leader's election, told by `elect`.
      subscribe: (_subject: string, o: { callback: (err: unknown, m: unknown) => void }) => {
        electedCallbacks.push(o.callback);
        return { unsubscribe: () => undefined };
      },
    },
    js: {
      consumers: {
        get: (_stream: string, o: { opt_start_seq?: number }) => {
          asks.push(performance.now());
          if (hanging > 0) {
            hanging--;
            return new Promise<never>(() => undefined);
          }
          return (gate ?? Promise.resolve()).then(() => ({
            consume: (c?: { expires?: number }) => {
              consumeOpts.push(c ?? {});
              return Promise.resolve(consumer(o.opt_start_seq ?? 1));
            },
          }));
        },
      },
    },
    jsm: {
      streams: {
        info: () =>
          ++positionAsks && silent
            ? new Promise<never>(() => undefined)
            : unreachable
              ? Promise.reject(new Error('no answer'))
              : Promise.resolve({
                  // A replicated stream's info names its leader; none while it elects one.
                  cluster: { leader: leaderless ? '' : 'nats1' },
                  state: { last_seq: last },
                }),
      },
    },
  } as unknown as ClusterLink;
  const { applier, died, applied } = stubbedApplier(link);
  return {
    applier,
    made,
    died,
    applied,
    grow: (n: number) => {
      for (let i = 0; i < n; i++) takenAt.set(++last, performance.now());
    },
    cut: (off: boolean) => void (unreachable = off),
    leaderless: (on: boolean) => void (leaderless = on),
    elect: () => electedCallbacks.forEach((cb) => cb(null, {})),
    reconnect: () => reconnected?.(),
    hold: () => {
      let release = () => undefined as void;
      gate = new Promise<void>((r) => (release = r));
      return () => {
        gate = null;
        release();
      };
    },
    consumeOpts,
    asks,
    hang: (n: number) => void (hanging = n),
    silence: (on: boolean) => void (silent = on),
    positionAsks: () => positionAsks,
    checks: () => checks,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ok: () => boolean, ms = 10_000) {
  for (const deadline = Date.now() + ms; !ok(); await sleep(25))
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
}

t.test('a consumer that stops delivering is made again from the last applied entry', async (t) => {
  const w = world({ last: 5, stallAfter: 3 });
  await w.applier.start({} as never);
  t.teardown(() => w.applier.close());
  await until('three entries applied', () => w.applier.applied === 3);
  await until('the stall seen', () => w.applier.status().stalled);
  t.ok(w.applier.status().behindFor > 0, 'the status says for how long');
  await until('the rest applied', () => w.applier.applied === 5);
  t.same(w.made, [1, 4], 'a second consumer, from entry 4');
  t.equal(w.applier.status().consumerRestarts, 1, 'counted');
  await until('the stall over', () => !w.applier.status().stalled);
  t.same(w.died, [], 'the node goes on');
});

t.test('a log trimmed past the copy fails the start, and stops a started node', async (t) => {
  // While the node starts it serves nothing: its start is made again from the newest snapshot in
  // the same process (src/cluster/main.ts); before, the process stopped, for its supervisor.
  const w = world({ last: 5, trimmedTo: 3 });
  await w.applier.start({} as never);
  t.teardown(() => w.applier.close());
  await t.rejects(
    w.applier.trimmedPast,
    { name: 'TrimmedPastError', at: 0, next: 4 },
    'the start fails, saying where',
  );
  t.same(w.died, [], 'the process goes on');
  t.equal(w.applier.applied, 0, 'nothing past the gap applied');
  // Once started (it serves), the node stops instead, as before.
  const s = world({ last: 5, trimmedTo: 3 });
  s.applier.started();
  await s.applier.start({} as never);
  t.teardown(() => s.applier.close());
  await until('the started node stopped', () => s.died.length > 0);
  t.match(s.died[0], /^the log was trimmed past this copy \(at 0, next entry 4\)$/);
});

t.test('an idle log, or one that does not answer, is no stall', async (t) => {
  const w = world({ last: 2 });
  await w.applier.start({} as never);
  t.teardown(() => w.applier.close());
  await until('both entries applied', () => w.applier.applied === 2);
  w.cut(true);
  await sleep(2500);
  t.same(w.made, [1], 'one consumer all along');
  t.notOk(w.applier.status().stalled, 'no stall');
  w.cut(false);
  w.grow(2);
  await until('new entries applied by the same consumer', () => w.applier.applied === 4);
  t.same(w.made, [1]);
});

t.test('a stall that outlasts its limit stops the node, for its supervisor', async (t) => {
  const w = world({ last: 5, stallAfter: 2, everyStalls: true, exitMs: 1500 });
  await w.applier.start({} as never);
  t.teardown(() => w.applier.close());
  await until('the node stopped', () => w.died.length > 0);
  t.equal(w.applier.applied, 2, 'nothing past the stall was applied');
  t.ok(w.made.length >= 2, `consumers made again meanwhile (${w.made.length})`);
  t.match(w.died[0], /applied nothing for \d+ s while the log held 3 more entries/, 'and says why');
});

t.test('a log without a leader at start is waited for, not a failed start', async (t) => {
  // CI, 2026-12-03: a node started while the NATS servers were still electing the stream's
  // leader gave up at once ("the log stream has no leader") instead of waiting as it does for a
  // server that does not answer yet.
  const w = world({ last: 3 });
  w.leaderless(true);
  await w.applier.start({} as never);
  t.teardown(() => w.applier.close());
  await t.rejects(w.applier.lastPosition(), { code: '503' }, 'a leaderless answer is no answer');
  setTimeout(() => w.leaderless(false), 700);
  await patiently(() => w.applier.caughtUp());
  t.equal(w.applier.applied, 3, 'caught up once the stream had a leader');
  t.same(w.died, []);
});

t.test(
  "the consumer's pulls are short, so nats.js retries a failed creation within seconds",
  async (t) => {
    // nats.js waits a random 0.5-1.5 times `expires` between attempts to create an ordered consumer
    // (30 s by default: a creation refused once at start held the node's start 15-45 s), and
    // misses heartbeats only after `expires`.
    const w = world({ last: 0 });
    await w.applier.start({} as never);
    t.teardown(() => w.applier.close());
    t.ok(w.consumeOpts.length > 0, 'the consumer was made');
    for (const o of w.consumeOpts)
      t.ok(o.expires !== undefined && o.expires <= 5000, `pulls expire after ${o.expires} ms`);
  },
);

t.test("the log stream's election leaves a consumer that hands on entries alone", async (t) => {
  const w = world({ last: 3 });
  await w.applier.start({} as never);
  t.teardown(() => w.applier.close());
  await until('three entries applied', () => w.applier.applied === 3);
  w.elect();
  w.grow(2);
  await until('the entries after the election applied', () => w.applier.applied === 5);
  t.same(w.made, [1], 'no other consumer made');
  t.same(w.died, []);
});

t.test('a consumer made again: the old one applies until the new one is made', async (t) => {
  const w = world({ last: 3 });
  await w.applier.start({} as never);
  t.teardown(() => w.applier.close());
  await until('three entries applied', () => w.applier.applied === 3);
  const release = w.hold();
  w.reconnect();
  w.grow(2);
  await until('the old consumer applying meanwhile', () => w.applier.applied === 5);
  release();
  await until('a second consumer', () => w.made.length === 2);
  t.same(w.made, [1, 4], 'made from the entry after the last applied when it was asked for');
  w.grow(1);
  await until('the next entry applied', () => w.applier.applied === 6);
  t.same(w.died, [], 'each entry applied once, in order (no gap: the node goes on)');
});

/** How a read barrier ended. */
function settled(p: Promise<void>): Promise<unknown> {
  return p.then(
    () => 'passed',
    (err: unknown) => err,
  );
}

t.test(
  "a new consumer placed on a dead server: asked for again soon, the node's requests answered 503 meanwhile",
  async (t) => {
    // 2026-12-04 (docs/cluster.md "Faults", the 9.9 s run): after a SIGKILL of the NATS server
    // leading the log, a non-owner's consumer (on that server) stopped; its new one was placed by
    // JetStream's meta leader on the dead server and never answered, and was asked again only after
    // CREATE_REASK_MS (5 s), every request on the node waiting its read barrier's budget meanwhile.
    // On the code before the fix: the creation asked again 5 s after the first, and both barriers
    // below passed once the entries came, 5 s later, instead of answering 503.
    const w = world({ last: 3, stallAfter: 3, readBarrierMs: 30_000 });
    await w.applier.start({} as never);
    t.teardown(() => w.applier.close());
    await until('three entries applied', () => w.applier.applied === 3);
    w.hang(1);
    w.elect();
    w.grow(2);
    const waiting = settled(w.applier.readBarrier());
    await until('the stall seen', () => w.applier.status().stalled);
    const during = settled(w.applier.readBarrier());
    t.type(await waiting, CatchingUpError, 'a request waiting at the barrier: 503 at the stall');
    const err = await during;
    t.type(err, CatchingUpError, 'a request arriving during the stall: 503 at once');
    t.same((err as CatchingUpError).headers, { 'Retry-After': '1' }, 'with Retry-After');
    await until('the entries after the election applied', () => w.applier.applied === 5);
    t.equal(w.asks.length, 3, 'the first consumer, the one never answered, the one made');
    const again = w.asks[2]! - w.asks[1]!;
    // Its design is CREATE_QUICK_MS (1 s) after the first; the old code's was 5 s. Not a speed
    // figure: which of the two schedules ran.
    t.ok(again < 4000, `the creation asked again ${Math.round(again)} ms after the first`);
    t.same(w.made, [1, 4], 'the consumer made from entry 4');
    t.equal(await settled(w.applier.readBarrier()), 'passed', 'caught up: requests pass again');
    t.same(w.died, []);
  },
);

t.test('creations never answered are asked again less and less often', async (t) => {
  const w = world({ last: 3, stallAfter: 3 });
  await w.applier.start({} as never);
  t.teardown(() => w.applier.close());
  await until('three entries applied', () => w.applier.applied === 3);
  w.hang(Infinity);
  w.elect();
  w.grow(2);
  await until('the stall seen', () => w.applier.status().stalled);
  await sleep(4000);
  // At the stall, then 1 s and 2 s later (doubling up to 5 s): not at every look of the watch.
  t.ok(w.asks.length - 1 <= 4, `${w.asks.length - 1} creations asked in 4 s`);
  t.ok(w.asks.length - 1 >= 2, 'but asked again');
  t.equal(w.applier.applied, 3);
});

t.test(
  'a position its server does not answer: the connection checked, asked again once it moved',
  async (t) => {
    // The node's own NATS server froze: the read barrier's question for the log's position is
    // never answered. Before, nothing checked the connection (nats.js's pings left the server
    // after 2-3 s) and the question was asked again only after REASK_MS (3 s).
    const w = world({ last: 3, readBarrierMs: 60_000 });
    await w.applier.start({} as never);
    t.teardown(() => w.applier.close());
    await until('three entries applied', () => w.applier.applied === 3);
    w.silence(true);
    const asked = w.positionAsks();
    let passed = false;
    const barrier = w.applier.readBarrier().then(() => (passed = true));
    // Waits without a short limit (the old code never checked), and no count of the time: the
    // question is asked again in the same turn of the event loop as the reconnection, where the
    // old code's next question came only from its timer, REASK_MS after the first.
    await until('the connection checked', () => w.checks() > 0);
    t.ok(w.positionAsks() > asked, 'a question, unanswered');
    t.notOk(passed, 'the barrier waits');
    w.silence(false);
    const before = w.positionAsks();
    w.reconnect(); // the connection moved to another server
    await new Promise((r) => setImmediate(r));
    t.ok(w.positionAsks() > before, 'the question asked again at the reconnection');
    await barrier;
    t.ok(passed, 'the barrier passed on the answer from the new server');
  },
);

t.test(
  'a copy that applies each entry a few hundred ms after the log took it is not called stuck',
  async (t) => {
    // A slow but live copy (a loaded machine, a consumer on a lagging replica): each entry reaches
    // it 350 ms after the log took it, under the 500 ms stall time of the 10 s after an election.
    // On the code before, the stall time was counted from the watch's last look that saw progress,
    // not from when the copy was first seen behind: an entry taken 150 ms or more after such a
    // look made the node "stuck" at the look 500 ms after it (most entries here), every request on
    // it 503 and its consumer made again, while it applied every entry 350 ms late.
    const w = world({ last: 3, stallMs: 2000, readBarrierMs: 30_000, deliverAfterMs: 350 });
    await w.applier.start({} as never);
    t.teardown(() => w.applier.close());
    await until('three entries applied', () => w.applier.applied === 3);
    w.elect();
    let stalled = 0;
    const watch = setInterval(() => void (w.applier.status().stalled && stalled++), 10);
    t.teardown(() => clearInterval(watch));
    const barriers: Promise<unknown>[] = [];
    for (let i = 0; i < 12; i++) {
      w.grow(1);
      barriers.push(settled(w.applier.readBarrier()));
      await sleep(600);
    }
    const ended = await Promise.all(barriers);
    t.same(
      ended.filter((e) => e !== 'passed').map(String),
      [],
      "every request on the node passed its barrier (none 503 'catching up')",
    );
    t.equal(stalled, 0, 'no stall seen');
    t.same(w.made, [1], 'the consumer was not made again');
    t.equal(w.applier.applied, 15, 'every entry applied');
  },
);

t.test('a try at making the consumer that a newer try replaced asks for no more', async (t) => {
  // nats.js asks again for an ordered consumer's first creation after each failure, up to
  // maxInitialReset (30) times a pull's `expires` apart. The applier asks for a consumer again
  // beside one unanswered (every CREATE_REASK_MS, 5 s): before, each abandoned object asked on
  // until its 30 attempts were spent or the applier closed, beside the newest.
  let succeed = false;
  const objects: { adds: number }[] = [];
  const never = new Promise<never>(() => undefined);
  const link = {
    opts: { stallMs: 60_000, stallExitMs: 600_000 },
    names: { stream: 'LOG', log: 'confab.log' },
    checkConnection: () => undefined,
    nc: {
      status: () =>
        (async function* () {
          await never;
          yield { type: 'reconnect', data: '' };
        })(),
      getServer: () => 'nats1',
      subscribe: () => ({ unsubscribe: () => undefined }),
    },
    js: {
      consumers: {
        get: () => {
          const o = { adds: 0 };
          objects.push(o);
          let closed = false;
          const messages = {
            close: () => {
              closed = true;
              return Promise.resolve();
            },
            // Hands on nothing until closed.
            [Symbol.asyncIterator]: () => ({
              next: async () => {
                while (!closed) await sleep(20);
                return { done: true, value: undefined };
              },
            }),
          };
          return Promise.resolve({
            maxInitialReset: 30,
            api: {
              add: () => {
                o.adds++;
                return succeed
                  ? Promise.resolve({})
                  : Promise.reject(Object.assign(new Error('timeout'), { code: 'TIMEOUT' }));
              },
            },
            // As nats.js's OrderedPullConsumerImpl makes its consumer the first time.
            async consume(this: {
              maxInitialReset: number;
              api: { add: (...a: unknown[]) => Promise<unknown> };
            }) {
              for (let i = 0; ; i++) {
                try {
                  await this.api.add('LOG', {});
                  return messages;
                } catch (err) {
                  if (i >= this.maxInitialReset) throw err;
                  await sleep(250); // (a pull's `expires` in nats.js: 5 s)
                }
              }
            },
          });
        },
      },
    },
    jsm: { streams: { info: () => Promise.resolve({ state: { last_seq: 0 } }) } },
  } as unknown as ClusterLink;
  const { applier, died } = stubbedApplier(link);
  const started = applier.start({} as never);
  t.teardown(() => applier.close());
  await until('a second try', () => objects.length === 2, 8000);
  const first = objects[0]!.adds;
  await sleep(600);
  t.ok(
    objects[0]!.adds <= first + 1,
    `the first try asked no more (${first}, then ${objects[0]!.adds})`,
  );
  t.ok(objects[1]!.adds >= 2, `the newest asks on (${objects[1]!.adds})`);
  succeed = true;
  await started;
  t.equal(objects.length, 2, 'made by the newest try');
  t.same(died, []);
});
