/**
 * The read barrier against a stale log leader (src/cluster/log-applier.ts `lastPosition`,
 * `readBarrier`; docs/cluster.md "Guarantees"), with JetStream played by hand. A NATS server that
 * led the log stream, frozen long enough for the others to elect a new leader and thawed, still
 * takes itself for the leader until it hears the new leader's higher term, and answers the
 * stream's info from its own copy: a last sequence older than writes the new leader has
 * acknowledged. nats-server 2.10 computes the reply's `cluster.replicas[].active` as the time since
 * that server last heard from each replica (`clusterInfo`, server/jetstream_cluster.go), so such a
 * leader names itself with replicas unheard from for the whole freeze (at least the 4 s election
 * timeout), while a live one hears from its followers at every heartbeat (1 s, answered).
 *
 * On the code before the fix both stale answers below passed the barrier at once, without the
 * acknowledged entries.
 *
 * A prompt answer is taken as it comes only from the confirmed leader: one a position mark proved
 * live, with no sign of trouble since (an unanswered or late question, the watch's too, another
 * leader's answer, a connection event, a gap past VIGIL_MS). Everything else takes a mark; so a
 * node marks at start and after trouble, not once per read.
 */
import t, { type Test } from 'tap';
import type { Entry } from '../../src/cluster/jetstream.js';
import type { ClusterLink } from '../../src/cluster/link.js';
import { pack } from '../../src/lib/pack.js';
import { VIGIL_MS } from '../../src/cluster/log-applier.js';
import { stubbedApplier } from '../helpers/applier.js';

type Msg = { seq: number; subject: string; data: Uint8Array };
type Replica = { name: string; current: boolean; offline: boolean; active: number; lag: number };
/** A stream info's answer; `copies`: the stream's configured replicas (default: one per server named). */
type Answer = { leader: string; replicas?: Replica[]; last: number; copies?: number };

const S = 1e9; // nanoseconds
const replica = (name: string, activeS: number): Replica => ({
  name,
  current: true,
  offline: false,
  active: Math.round(activeS * S),
  lag: 0,
});

/**
 * A log whose consumer hands on entries up to `deliverable`, and whose stream info is answered by
 * `answer()` (the test changes it: first the stale leader, then the new one).
 */
function world(first: Answer, deliverable: number) {
  let answer = first;
  let upTo = deliverable;
  /** The live leader: a mark is appended after what it acknowledged (`upTo`). */
  let live = first.leader;
  const asked: Answer[] = [];
  /**
   * What a position mark's append does (the test may set it): the mark's sequence. By default
   * the live leader appends it after the entries it acknowledged, and answers with it.
   */
  const liveMark = () => {
    upTo++;
    if (answer.leader === live) answer = { ...answer, last: upTo };
    return upTo;
  };
  let onMark: (() => number) | null = liveMark;
  const marks = new Set<number>();
  /** The connection's status events (`connection`). */
  const statuses: { type: string; data: string }[] = [];
  let statusWake: (() => void) | null = null;
  /** Runs between the leader's answer and the node's reading it (the answer in flight). */
  let inFlight: (() => Promise<void>) | null = null;
  const entry: Entry = { k: 'lease', node: 'n2', inc: 'x', term: 1 };
  const mark: Entry = { k: 'mark', node: 'n1' };
  const msg = (seq: number): Msg =>
    marks.has(seq)
      ? { seq, subject: 'confab.log.position', data: pack(mark) }
      : { seq, subject: 'confab.log.1', data: pack(entry) };
  const consumer = (from: number) => {
    let closed = false;
    return {
      close: () => {
        closed = true;
        return Promise.resolve();
      },
      async *[Symbol.asyncIterator]() {
        for (let seq = from; ;) {
          while (!closed && seq > upTo) await new Promise((r) => setTimeout(r, 10));
          if (closed) return;
          yield msg(seq++);
        }
      },
    };
  };
  const link = {
    opts: { stallMs: 60_000, stallExitMs: 600_000, readBarrierMs: 30_000 },
    names: { stream: 'LOG', log: 'confab.log' },
    checkConnection: () => undefined,
    nc: {
      // No reconnection: the connection's status never ends.
      status: () =>
        (async function* () {
          for (;;) {
            while (statuses.length === 0) await new Promise<void>((r) => (statusWake = r));
            yield statuses.shift()!;
          }
        })(),
      getServer: () => 'nats1',
      subscribe: () => ({ unsubscribe: () => undefined }),
    },
    js: {
      publish: (subject: string) => {
        if (subject !== 'confab.log.position' || !onMark)
          return Promise.reject(new Error(`unexpected append on ${subject}`));
        let seq: number;
        try {
          seq = onMark();
        } catch (err) {
          return Promise.reject(err instanceof Error ? err : new Error(String(err)));
        }
        marks.add(seq);
        return Promise.resolve({ stream: 'LOG', seq, duplicate: false });
      },
      consumers: {
        get: (_stream: string, o: { opt_start_seq?: number }) =>
          Promise.resolve({ consume: () => Promise.resolve(consumer(o.opt_start_seq ?? 1)) }),
      },
    },
    jsm: {
      streams: {
        info: async () => {
          const a = answer;
          asked.push(a);
          const hold = inFlight;
          inFlight = null;
          if (hold) await hold();
          return {
            config: { num_replicas: a.copies ?? (a.replicas?.length ?? 0) + 1 },
            cluster: { name: 'c', leader: a.leader, replicas: a.replicas },
            state: { last_seq: a.last },
          };
        },
      },
    },
  } as unknown as ClusterLink;
  const { applier } = stubbedApplier(link);
  return {
    applier,
    asked,
    /** The new leader answers from now on, and the consumer hands on what it acknowledged. */
    thawed: (next: Answer) => {
      answer = next;
      upTo = next.last;
      live = next.leader;
    },
    /** What a mark's append does by default (`marking`). */
    liveMark,
    /**
     * `leader` took over the log and acknowledged entries up to `last`, which the consumer hands
     * on; whoever answered goes on answering (`answers`).
     */
    replaced: (leader: string, last: number) => {
      live = leader;
      upTo = last;
    },
    /** From now on `a` answers the stream's info (the live log and leader unchanged). */
    answers: (a: Answer) => void (answer = a),
    /** A position mark's append runs `f`, which returns its sequence (or throws: no ack). */
    marking: (f: () => number) => void (onMark = f),
    /** The connection tells `type` (disconnect, reconnect). */
    connection: (type: string) => {
      statuses.push({ type, data: 'nats2' });
      statusWake?.();
    },
    marks,
    /** The next answer is read only after `hold` ran. */
    held: (hold: () => Promise<void>) => void (inFlight = hold),
    /** An entry appended: the leader answers `last` from now on and the consumer hands it on. */
    appended: (last: number) => {
      answer = { ...answer, last };
      upTo = last;
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ok: () => boolean, ms = 10_000) {
  for (const deadline = Date.now() + ms; !ok(); await sleep(10))
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
}

/** Starts `w`'s applier (closed at the test's end) and waits until it applied `n` entries. */
async function running(t: Test, w: ReturnType<typeof world>, n: number) {
  await w.applier.start({} as never);
  t.teardown(() => w.applier.close());
  await until(`the ${n} entries the node had`, () => w.applier.applied === n);
}

/** The next answer is read 0.5 s after it was asked: late. */
const late = (w: ReturnType<typeof world>) => w.held(() => sleep(500).then(() => undefined));

/** The new leader (nats2) after the election: heard from nats3 just now; nats1 was frozen. */
const newLeader: Answer = {
  leader: 'nats2',
  replicas: [replica('nats1', 7), replica('nats3', 0.2)],
  last: 8,
};

/**
 * Passes the barrier while the stale answer stands, the new leader answering after `staleMs`;
 * returns what the node had applied when the barrier let the read through.
 */
async function barrier(t: Test, stale: Answer, staleMs = 300) {
  const w = world(stale, 5);
  await running(t, w, 5);
  let passedAt: number | null = null;
  const passing = w.applier.readBarrier().then(() => (passedAt = w.applier.applied));
  await until('the stale leader asked', () => w.asked.length > 0);
  await sleep(staleMs);
  w.thawed(newLeader);
  await passing;
  return { passedAt: passedAt!, asked: w.asked };
}

t.test('a thawed leader that heard from no replica for the freeze is asked again', async (t) => {
  // nats1 led the log, was frozen 7 s while nats2 and nats3 elected nats2 and acknowledged
  // entries 6-8; thawed, it still names itself leader, with its last sequence of before.
  const stale: Answer = {
    leader: 'nats1',
    replicas: [replica('nats2', 7), replica('nats3', 7)],
    last: 5,
  };
  const { passedAt, asked } = await barrier(t, stale);
  t.ok(passedAt >= 8, `the read waited for the entries the new leader acknowledged (${passedAt})`);
  t.ok(asked.length >= 2, `asked again (${asked.length} questions)`);
  t.equal(asked.at(-1)!.leader, 'nats2', 'passed on the new leader’s answer');
});

t.test('an answer below what this node applied is stale whatever it says', async (t) => {
  // The thawed leader, in the instant after it read a reply its follower had sent before the
  // freeze (so that replica looks just heard from) and before the new leader's higher term.
  const stale: Answer = {
    leader: 'nats1',
    replicas: [replica('nats2', 0.01), replica('nats3', 7)],
    last: 3,
  };
  const { passedAt } = await barrier(t, stale);
  t.ok(passedAt >= 8, `the read waited for the entries the new leader acknowledged (${passedAt})`);
});

t.test('no false refusal from a live leader, idle or with a replica down', async (t) => {
  const live: [string, Answer][] = [
    // Idle: a heartbeat every 1-2 s, answered.
    [
      'idle',
      { leader: 'nats1', replicas: [replica('nats2', 1.9), replica('nats3', 1.2)], last: 5 },
    ],
    // nats3 dead for a minute: nats2 alone makes the quorum.
    [
      'one down',
      { leader: 'nats1', replicas: [replica('nats2', 0.5), replica('nats3', 60)], last: 5 },
    ],
    // One NATS server (no raft group): no replicas.
    ['single', { leader: 'nats1', last: 5 }],
  ];
  for (const [what, answer] of live) {
    const w = world(answer, 5);
    await w.applier.start({} as never);
    await until('the five entries', () => w.applier.applied === 5);
    await w.applier.readBarrier();
    t.equal(w.asked.length, 1, `${what}: passed on the first answer`);
    await w.applier.close();
  }
});

t.test('a live leader’s answer read after newer entries were applied is taken', async (t) => {
  // Writes go on: the leader answers the stream's info with last sequence 6, and entry 7,
  // appended just after, reaches this node's consumer (and is applied) before that answer is
  // read. The answer was as new as the log when asked: the read passes on it, not after pauses
  // (on the code before, it was refused as a stale leader's and asked again, each time a write
  // landed in between: 100 ms, doubling, up to the 503 at the budget's end).
  const live: Answer = {
    leader: 'nats1',
    replicas: [replica('nats2', 0.1), replica('nats3', 0.1)],
    last: 6,
  };
  const w = world(live, 6);
  await running(t, w, 6);
  w.held(async () => {
    w.appended(7);
    await until('entry 7 applied before the answer is read', () => w.applier.applied === 7);
  });
  await w.applier.readBarrier();
  t.equal(w.asked.length, 1, 'passed on the first answer');
});

t.test('a late answer is taken only through a position mark', async (t) => {
  // The question waited at nats1 through its freeze. Thawed, nats1 reads a reply nats2 had sent
  // before the freeze (nats2 looks just heard from) and answers before it reads the new leader's
  // term; this node's copy is behind as well (its consumer was on nats1), so neither rule on the
  // answer can tell (the floor is 3). On the code before, the read passed at once with entries
  // 4 and 5 applied, without 6-8.
  const stale: Answer = {
    leader: 'nats1',
    replicas: [replica('nats2', 0.01), replica('nats3', 7)],
    last: 5,
  };
  const w = world(stale, 3);
  await running(t, w, 3);
  late(w);
  w.marking(() => {
    // Only the new leader commits: the mark follows the entries it acknowledged.
    w.thawed({ ...newLeader, last: 9 });
    return 9;
  });
  await w.applier.readBarrier();
  t.ok(w.marks.has(9), 'a position mark appended');
  t.equal(w.applier.applied, 9, 'the read waited for the mark, after entries 6-8');
});

t.test('a late answer on an empty log appends no mark', async (t) => {
  // The cluster's first entry (the first realm's, or the seed) expects an empty log: a mark
  // appended by a node starting beside the one that bootstraps would refuse it.
  const w = world({ leader: 'nats1', replicas: [replica('nats2', 0.1)], last: 0 }, 0);
  await w.applier.start({} as never);
  t.teardown(() => w.applier.close());
  late(w);
  w.marking(() => 1);
  await w.applier.readBarrier();
  t.equal(w.marks.size, 0, 'no position mark');
});

/** A live leader's answer at `last`; a mark is appended after it (the consumer hands it on). */
function liveWorld(last: number) {
  return world(
    { leader: 'nats1', replicas: [replica('nats2', 0.1), replica('nats3', 0.1)], last },
    last,
  );
}

t.test('the progress watch appends no position mark', async (t) => {
  // An idle node on a loaded machine: a look of the watch finds nothing applied since the one
  // before and asks the position, answered late. It needs no proof (a stale answer is low: it can
  // only delay the call of a stall); on the code before, each such look appended a mark, a write
  // every other second from every idle node while answers were slow.
  const w = liveWorld(5);
  await running(t, w, 5);
  late(w);
  await until('the watch asked', () => w.asked.length > 0);
  // Its next question comes once the look with the late answer is over.
  await until('the watch asked again', () => w.asked.length > 1);
  t.equal(w.marks.size, 0, 'no position mark');
  t.notOk(w.applier.status().stalled, 'no stall seen');
});

t.test('a read barrier waiting behind the watch’s question is still proven', async (t) => {
  // The barrier arrives while the watch's question is under way and waits for the next one,
  // which it wants proven: answered late too, it is taken through a mark.
  const w = liveWorld(5);
  await running(t, w, 5);
  late(w);
  await until('the watch asked', () => w.asked.length > 0);
  late(w);
  await w.applier.readBarrier();
  t.equal(w.marks.size, 1, 'one position mark');
  t.equal(w.applier.applied, 6, 'the read waited for it');
});

t.test('a late answer from a stream without replicas appends no mark', async (t) => {
  // One NATS server, or a one-replica stream: the answering copy is the stream's only one, and
  // has no successor whose writes it could lack.
  const w = world({ leader: 'nats1', last: 5 }, 5);
  await running(t, w, 5);
  late(w);
  w.marking(() => 6);
  await w.applier.readBarrier();
  t.equal(w.marks.size, 0, 'no position mark');
});

/** A node whose first read took a mark (6) and whose next answer confirmed nats1. */
async function confirmed(t: Test) {
  const w = liveWorld(5);
  await running(t, w, 5);
  await w.applier.readBarrier();
  await w.applier.readBarrier();
  t.equal(w.marks.size, 1, 'one position mark at the first read');
  return w;
}

t.test('steady state: a mark at the first read, none for the reads after', async (t) => {
  const w = liveWorld(5);
  await running(t, w, 5);
  // Five reads at once share the first question, and its mark.
  await Promise.all([1, 2, 3, 4, 5].map(() => w.applier.readBarrier()));
  t.equal(w.marks.size, 1, 'the first answer (no leader confirmed yet) took a mark');
  t.equal(w.applier.applied, 6, 'the reads waited for it');
  for (let i = 0; i < 20; i++) {
    w.appended(w.applier.applied + 1);
    await w.applier.readBarrier();
    await Promise.all([1, 2, 3].map(() => w.applier.readBarrier()));
  }
  t.equal(w.marks.size, 1, 'no mark for 80 reads from the confirmed leader');
  t.equal(w.applier.applied, 26, 'each read waited for the entry appended before it');
});

t.test('a prompt answer naming another leader takes a mark', async (t) => {
  const w = await confirmed(t);
  // nats1 stepped down; nats2 leads, with entries 7-8, and answers promptly.
  w.thawed({ leader: 'nats2', replicas: [replica('nats1', 0.1), replica('nats3', 0.1)], last: 8 });
  await w.applier.readBarrier();
  t.equal(w.marks.size, 2, 'a mark for the new leader’s first answer');
  t.equal(w.applier.applied, 9, 'the read waited for it');
  await w.applier.readBarrier();
  await w.applier.readBarrier();
  t.equal(w.marks.size, 2, 'none once it is confirmed');
});

t.test(
  'a late answer to the progress watch raises doubt: the next read takes a mark',
  async (t) => {
    const w = await confirmed(t);
    // The idle node's watch asks every second; its next question is answered late.
    const n = w.asked.length;
    late(w);
    await until('the watch asked', () => w.asked.length > n);
    await sleep(600);
    t.equal(w.marks.size, 1, 'the watch took no mark');
    await w.applier.readBarrier();
    t.equal(w.marks.size, 2, 'the read’s prompt answer took a mark');
  },
);

t.test(
  'an idle node on the frozen leader’s server: its prompt stale answer is not taken',
  async (t) => {
    // The CI failure of 2026-12-06 on one node. nats1 led the log and is this node's server; it is
    // frozen: the idle node's watch asks and waits, its consumer (on nats1) hands on nothing. nats2
    // takes over and acknowledges 7-9; nats1 thaws and answers the watch late. The read after that
    // asks nats1 again, which answers at once, still naming itself, from its copy of before the
    // freeze (6, all this node has, so the floor rule cannot tell; its replicas' replies of before
    // the freeze read first, so they look fresh). On the code before, the read passed at 6.
    const w = await confirmed(t);
    const n = w.asked.length;
    w.held(async () => {
      w.replaced('nats2', 6);
      await sleep(700);
    });
    await until('the watch asked through the freeze', () => w.asked.length > n);
    await sleep(800);
    t.equal(w.asked.at(-1)!.last, 6, 'nats1 answered from its copy of before');
    // Only nats2 commits the mark, after 7-9; the consumer, made again, hands them on.
    w.marking(() => {
      w.replaced('nats2', 10);
      return 10;
    });
    await w.applier.readBarrier();
    t.equal(w.marks.size, 2, 'the stale answer took a mark');
    t.equal(w.applier.applied, 10, 'the read waited for the mark nats2 committed, after 7-9');
  },
);

t.test(
  'a node on a follower: the old leader answering first after its thaw takes a mark',
  async (t) => {
    // nats1 froze; this node's questions went through nats3 and were answered by nats2, the new
    // leader, which a mark confirmed. nats1 thaws and, first to answer, names itself.
    const w = await confirmed(t);
    w.thawed({ leader: 'nats2', replicas: [replica('nats1', 7), replica('nats3', 0.1)], last: 9 });
    await w.applier.readBarrier();
    await w.applier.readBarrier();
    t.equal(w.marks.size, 2, 'nats2 confirmed through a mark');
    w.answers({
      leader: 'nats1',
      replicas: [replica('nats2', 0.01), replica('nats3', 0.01)],
      last: 10,
    });
    w.replaced('nats2', 12);
    await w.applier.readBarrier();
    t.equal(w.marks.size, 3, 'the old leader’s answer took a mark');
    t.equal(w.applier.applied, 13, 'the read waited for it, after 11-12');
  },
);

t.test('a reconnection raises doubt: the next read takes a mark', async (t) => {
  const w = await confirmed(t);
  w.connection('reconnect');
  await sleep(50);
  await w.applier.readBarrier();
  t.equal(w.marks.size, 2, 'a mark after the reconnection');
});

t.test('no prompt answer for longer than VIGIL_MS: the next read takes a mark', async (t) => {
  // No progress watch (not started), no reads for a while: the confirmed leader was not watched.
  const w = liveWorld(5);
  t.equal(await w.applier.lastPosition(), 6, 'the first position is a mark’s');
  t.equal(await w.applier.lastPosition(), 6, 'the next, prompt and holding it, confirms nats1');
  t.equal(await w.applier.lastPosition(), 6, 'and the one after is taken as it comes');
  t.equal(w.marks.size, 1, 'one mark');
  await sleep(VIGIL_MS + 100);
  t.equal(await w.applier.lastPosition(), 7, 'after the gap, a mark again');
  await w.applier.close();
});

t.test('a failed mark is a 503, and the read asks again', async (t) => {
  const w = liveWorld(5);
  await running(t, w, 5);
  let failures = 1;
  w.marking(() => {
    if (failures-- > 0) throw new Error('TIMEOUT');
    return w.liveMark();
  });
  await t.rejects(w.applier.lastPosition(), { code: '503' }, 'no mark: no position');
  await w.applier.readBarrier();
  t.equal(w.marks.size, 1, 'the read took the next mark');
  t.equal(w.applier.applied, 6, 'and waited for it');
});

t.test('a replicated stream’s answer naming no replicas is asked again', async (t) => {
  // nats-server before 2.10 lists a stream's replicas only while it is the group's raft leader:
  // a thawed leader answering as it steps down names none, with its old last sequence. On the
  // code before, that was taken as a one-copy stream's answer.
  const { passedAt, asked } = await barrier(t, { leader: 'nats1', last: 5, copies: 3 });
  t.ok(passedAt >= 8, `the read waited for the entries the new leader acknowledged (${passedAt})`);
  t.equal(asked.at(-1)!.leader, 'nats2', 'passed on the new leader’s answer');
});
