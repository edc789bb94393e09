/**
 * The order in which a cluster node's queues get a realm's events (src/cluster/log-writer.ts,
 * log-applier.ts; docs/cluster.md "The log and what a node applies"), with NATS played by hand: a
 * batch this node appended whose acknowledgement comes late — the node was frozen (SIGSTOP) with
 * the append unanswered, another node took the realm meanwhile and appended after it, and after
 * the thaw the applier meets both entries before the append is answered — is delivered where the
 * log has it, before the new owner's entries, and once. Seen in test/cluster/faults-node.test.ts
 * ("SIGSTOP of the owner node"): the thawed node's queue got the new owner's messages first.
 */
import t from 'tap';
import type { Entry } from '../../src/cluster/jetstream.js';
import type { ClusterLink } from '../../src/cluster/link.js';
import { LogApplier } from '../../src/cluster/log-applier.js';
import { LogWriter } from '../../src/cluster/log-writer.js';
import type { OutboundEvent } from '../../src/lib/events.js';
import { pack } from '../../src/lib/pack.js';

type Msg = {
  seq: number;
  subject: string;
  data: Uint8Array;
  headers?: { get: (k: string) => string };
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ok: () => boolean, ms = 10_000) {
  for (const deadline = Date.now() + ms; !ok(); await sleep(5))
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
}

const message = (id: number) => ({ type: 'message', message: { id } }) as unknown as OutboundEvent;

/** One node (n1) of realm 1 with a log it writes and reads, and its queues' deliveries. */
function world() {
  const log: Msg[] = [];
  let wake: (() => void) | null = null;
  const append = (m: Omit<Msg, 'seq'>) => {
    log.push({ ...m, seq: log.length + 1 });
    wake?.();
  };
  /** Appends whose acknowledgement is held back: they land in the log when `land` is called. */
  const held: { data: Uint8Array; msgId: string; ack: (a: { seq: number }) => void }[] = [];
  const consumer = (from: number) => {
    let closed = false;
    return {
      close: () => {
        closed = true;
        wake?.();
        return Promise.resolve();
      },
      async *[Symbol.asyncIterator]() {
        for (let seq = from; ; seq++) {
          while (!closed && seq > log.length)
            await new Promise<void>((r) => {
              wake = r;
              setTimeout(r, 20);
            });
          if (closed) return;
          yield log[seq - 1]!;
        }
      },
    };
  };
  const link = {
    opts: { stallMs: 60_000 },
    names: { stream: 'LOG', log: 'confab.log' },
    node: 'n1',
    incarnation: 'i1',
    leaseMs: 3000,
    nc: {},
    checkConnection: () => undefined,
    js: {
      consumers: {
        get: (_stream: string, o: { opt_start_seq?: number }) =>
          Promise.resolve({ consume: () => Promise.resolve(consumer(o.opt_start_seq ?? 1)) }),
      },
      publish: (_subject: string, data: Uint8Array, o: { headers: Map<string, string> }) =>
        new Promise((ack) => held.push({ data, msgId: o.headers.get('Nats-Msg-Id')!, ack })),
    },
    jsm: { streams: { info: () => Promise.resolve({ state: { last_seq: log.length } }) } },
  } as unknown as ClusterLink;
  const delivered: number[] = [];
  const queues = {
    watchRegistrations: () => undefined,
    publish: (_realm: number, events: OutboundEvent[]) => {
      for (const e of events)
        delivered.push((e as unknown as { message: { id: number } }).message.id);
    },
    endSessions: () => undefined,
  };
  const replication = {
    state: () => ({ applied: 0, unacked: 0 }),
    seal: () => [['messages', 'u', [1]]],
    noteUnacked: () => undefined,
    markApplied: () => undefined,
    markAppliedLater: () => undefined,
    apply: () => new Set<string>(),
    flushApplied: () => undefined,
  };
  const died: string[] = [];
  const writer = new LogWriter({
    link,
    store: { transaction: <T>(f: () => T) => f() } as never,
    replication: replication as never,
    ids: { writing: <T>(_w: unknown, f: () => T) => f() } as never,
    keeper: { valid: () => true, term: () => 7 } as never,
    queues: queues as never,
    die: (reason) => void died.push(reason),
    deposed: () => undefined,
  });
  const applier = new LogApplier({
    link,
    replication: replication as never,
    ids: { withoutBlocksSync: <T>(f: () => T) => f() } as never,
    queues: queues as never,
    hooks: {},
    mine: (e) => e.node === 'n1' && e.inc === 'i1',
    mineInLog: (msgId) => writer.inLog(msgId),
    applied: () => undefined,
    die: (reason) => void died.push(reason),
  });
  return {
    writer,
    applier,
    delivered,
    died,
    held,
    /** The held append lands in the log (its acknowledgement still held). */
    land: (h: (typeof held)[number]) =>
      append({
        subject: 'confab.log.1',
        data: h.data,
        headers: { get: (k) => (k === 'Nats-Msg-Id' ? h.msgId : '') },
      }),
    /** Another node's batch of message `id`. */
    foreign: (id: number) => {
      const e: Entry = {
        k: 'batch',
        node: 'n2',
        inc: 'i2',
        term: 8,
        changes: [],
        events: [message(id)],
        ended: [],
      };
      append({ subject: 'confab.log.1', data: pack(e) });
    },
    seqOf: (h: (typeof held)[number]) => log.findIndex((m) => m.data === h.data) + 1,
  };
}

t.test('an own batch acknowledged late is delivered in log order, once', async (t) => {
  const w = world();
  await w.applier.start({ loaded: () => [] } as never);
  t.teardown(() => w.applier.close());
  w.writer.start(1, 0, { close: () => undefined } as never);
  const { settled } = w.writer.commit(1, () => ({ events: [message(100)], ended: [] }));
  await until('the append sent', () => w.held.length === 1);
  const a = w.held[0]!;
  w.land(a); // in the log; its acknowledgement lost to the freeze
  w.foreign(200); // the next owner's entries after it
  w.foreign(201);
  await until('the log applied', () => w.applier.applied === 3);
  t.same(w.delivered, [100, 200, 201], "the queues get the log's order");
  a.ack({ seq: w.seqOf(a) }); // the answer comes at last
  await settled;
  t.same(w.delivered, [100, 200, 201], 'the acknowledgement delivers nothing a second time');
  t.same(w.died, []);
});

t.test('an own batch acknowledged first is delivered at its acknowledgement, once', async (t) => {
  const w = world();
  await w.applier.start({ loaded: () => [] } as never);
  t.teardown(() => w.applier.close());
  w.writer.start(1, 0, { close: () => undefined } as never);
  const { settled } = w.writer.commit(1, () => ({ events: [message(100)], ended: [] }));
  await until('the append sent', () => w.held.length === 1);
  const a = w.held[0]!;
  w.land(a);
  a.ack({ seq: 1 });
  await settled;
  t.same(w.delivered, [100], 'delivered when the log answered');
  await until('the log applied', () => w.applier.applied === 1);
  w.foreign(200);
  await until('the next entry applied', () => w.applier.applied === 2);
  t.same(w.delivered, [100, 200], 'the applier does not deliver it again');
});
