/**
 * The order in which a cluster node's queues get a realm's events (src/cluster/log-writer.ts,
 * log-applier.ts; docs/cluster.md "The log and what a node applies"), with NATS played by hand: a
 * batch this node appended whose acknowledgement comes late — the node was frozen (SIGSTOP) with
 * the append unanswered, another node took the realm meanwhile and appended after it, and after
 * the thaw the applier meets both entries before the append is answered — is delivered where the
 * log has it, before the new owner's entries, and once. Seen in test/cluster/faults-node.test.ts
 * ("SIGSTOP of the owner node"): the thawed node's queue got the new owner's messages first.
 *
 * And a batch the log refused because another node's lease marker took its place (the owner's NATS
 * server frozen past the lease time, test/cluster/faults-nats-stop.test.ts) is taken back from the
 * node's copy before the new owner's entries are applied, its events never delivered, its command
 * answered with a refusal, and the node goes on (it stopped with exit status 75 before).
 */
import t from 'tap';
import { NotOwnerError, type Entry } from '../../src/cluster/jetstream.js';
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
  const held: {
    data: Uint8Array;
    msgId: string;
    ack: (a: { seq: number }) => void;
    refuse: (err: unknown) => void;
  }[] = [];
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
    // No reconnection here: the connection's status ends at once.
    nc: {
      status: () => (async function* () {})(),
      getServer: () => 'nats1',
      subscribe: () => ({ unsubscribe: () => undefined }),
    },
    checkConnection: () => undefined,
    js: {
      consumers: {
        get: (_stream: string, o: { opt_start_seq?: number }) =>
          Promise.resolve({ consume: () => Promise.resolve(consumer(o.opt_start_seq ?? 1)) }),
      },
      publish: (_subject: string, data: Uint8Array, o: { headers: Map<string, string> }) =>
        new Promise((ack, refuse) =>
          held.push({ data, msgId: o.headers.get('Nats-Msg-Id')!, ack, refuse }),
        ),
    },
    jsm: { streams: { info: () => Promise.resolve({ state: { last_seq: log.length } }) } },
  } as unknown as ClusterLink;
  const delivered: number[] = [];
  /** The queue registrations' watcher (LogWriter's), and the queues deleted. */
  let registered: (rt: { realmId: number; id: string }) => void = () => undefined;
  const removed: string[] = [];
  const queues = {
    watchRegistrations: (f: typeof registered) => void (registered = f),
    remove: (rt: { id: string }) => void removed.push(rt.id),
    publish: (_realm: number, events: OutboundEvent[]) => {
      for (const e of events)
        delivered.push((e as unknown as { message: { id: number } }).message.id);
    },
    endSessions: () => undefined,
  };
  /** The batches taken back (Replication.undo), each by its undo rows. */
  const undone: unknown[][] = [];
  const replication = {
    state: () => ({ applied: 0, unacked: 0 }),
    seal: () => [['messages', 'u', [1]]],
    sealWithUndo: () => ({ changes: [['messages', 'u', [1]]], undo: [['messages', 'd', [1]]] }),
    undo: (batches: { undo: unknown[] }[]) => {
      for (const b of batches) undone.push(b.undo);
      return { touched: new Set(['messages']), restored: [] };
    },
    noteUnacked: () => undefined,
    markApplied: () => undefined,
    markAppliedLater: () => undefined,
    apply: () => new Set<string>(),
    flushApplied: () => undefined,
  };
  const died: string[] = [];
  const deposed: number[] = [];
  const writer = new LogWriter({
    link,
    store: { transaction: <T>(f: () => T) => f() } as never,
    replication: replication as never,
    ids: { writing: <T>(_w: unknown, f: () => T) => f() } as never,
    keeper: { valid: () => true, term: () => 7 } as never,
    queues: queues as never,
    die: (reason) => void died.push(reason),
    deposed: (realmId) => void deposed.push(realmId),
  });
  const applier = new LogApplier({
    link,
    replication: replication as never,
    ids: { withoutBlocksSync: <T>(f: () => T) => f() } as never,
    queues: queues as never,
    hooks: {},
    mine: (e) => e.node === 'n1' && e.inc === 'i1',
    mineInLog: (msgId) => writer.inLog(msgId),
    displaced: (realmId) => writer.displaced(realmId),
    applied: () => undefined,
    die: (reason) => void died.push(reason),
  });
  return {
    writer,
    applier,
    delivered,
    removed,
    register: (id: string) => registered({ realmId: 1, id }),
    died,
    deposed,
    undone,
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
    /** Another node's lease marker (a takeover). */
    marker: () => {
      const e: Entry = { k: 'lease', node: 'n2', inc: 'i2', term: 8 };
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

t.test('an own batch displaced by a takeover marker is taken back; the node goes on', async (t) => {
  const w = world();
  await w.applier.start({ loaded: () => [] } as never);
  t.teardown(() => w.applier.close());
  w.writer.start(1, 0, { close: () => undefined } as never);
  const { settled } = w.writer.commit(1, () => ({ events: [message(100)], ended: [] }));
  const refused = settled.then(
    () => 'success',
    (err: unknown) => (err instanceof NotOwnerError ? 'refused: 503' : String(err)),
  );
  await until('the append sent', () => w.held.length === 1);
  const a = w.held[0]!;
  // Unanswered (its NATS server frozen): another node takes the realm, its marker lands first.
  w.marker();
  w.foreign(200);
  await until('the log applied', () => w.applier.applied === 2);
  t.same(w.undone, [[['messages', 'd', [1]]]], 'the batch is taken back before entry 2 applies');
  t.same(w.delivered, [200], "its events are not delivered; the new owner's are");
  // The append's answer at last: refused, another entry is after the one it expected.
  a.refuse({ api_error: { err_code: 10071 } });
  t.equal(await refused, 'refused: 503', 'its command is refused, never answered "success"');
  t.same(w.deposed, [1], 'the node stops writing the realm');
  t.same(w.died, [], 'and goes on');
  let later: unknown = null;
  try {
    w.writer.commit(1, () => ({ events: [message(101)], ended: [] }));
  } catch (err) {
    later = err;
  }
  t.ok(later instanceof NotOwnerError, 'later batches are refused (rolled back)');
  t.same(w.delivered, [200]);
});

t.test('a queue registered after a batch later taken back is deleted', async (t) => {
  const w = world();
  await w.applier.start({ loaded: () => [] } as never);
  t.teardown(() => w.applier.close());
  w.writer.start(1, 0, { close: () => undefined } as never);
  w.register('before'); // its snapshot does not hold the batch: it would get its events
  const { settled } = w.writer.commit(1, () => ({ events: [message(100)], ended: [] }));
  settled.catch(() => undefined);
  await until('the append sent', () => w.held.length === 1);
  w.register('after'); // registered after the COMMIT: its snapshot holds the batch
  w.marker();
  await until('the marker applied', () => w.applier.applied === 1);
  t.same(w.undone.length, 1, 'the batch is taken back');
  t.same(w.removed, ['after'], 'the queue whose snapshot holds it is deleted; the other stays');
});
