/**
 * The one duplicate window of forwarded writes (docs/cluster.md "Writes on any node"): an owner
 * receives a forwarded command and runs it, its "received" and its answer are lost (its NATS
 * server froze under its replies), and within the second the forwarding node keeps sending the
 * command again it hands the realm over: a repeat reaches the new owner, which kept no record of
 * the command's id (ForwardOutcomes are per process) and ran it a second time.
 *
 * Now the log entry of a batch names the forwarded commands that ran in it, with their results
 * (`fw`), every node learns them as it applies the log, and a new owner, which serves the realm
 * only once it has applied its takeover marker (after every entry of the owner before it), answers
 * a repeat with what the command came to. Each part is played here: the realm actor puts a
 * forwarded command's id and result in its batch's effects (refused ones not), the log writer
 * puts them in the entry, another node's applier hands them on, and the forwarding node's repeat
 * to the new owner is answered from them, run once (on the code before, run twice).
 */
import t from 'tap';
import { RealmRuntime } from '../../actors/registry.js';
import type { BatchEffects } from '../../actors/realm.machine.js';
import type { Entry } from '../../src/cluster/jetstream.js';
import type { ClusterLink } from '../../src/cluster/link.js';
import { LogApplier } from '../../src/cluster/log-applier.js';
import { LogWriter } from '../../src/cluster/log-writer.js';
import {
  answerForwarded,
  FORWARD_KEEP_MOST,
  Forwarder,
  ForwardOutcomes,
} from '../../src/cluster/forwarding.js';
import { JsonableError } from '../../src/lib/errors.js';
import type { MutationContext } from '../../src/mutations/context.js';
import { doCreateRealm } from '../../src/mutations/realms.js';
import { unpack } from '../../src/lib/pack.js';
import { Store } from '../../src/storage/store.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ok: () => boolean, ms = 10_000) {
  for (const deadline = Date.now() + ms; !ok(); await sleep(5))
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
}

t.test('the realm actor: a forwarded command that ran is in its batch’s effects', async (t) => {
  const store = Store.open(t.testdir());
  t.teardown(() => store.close());
  const { realm_id } = doCreateRealm(store, {
    name: 'R',
    string_id: '',
    owner_email: 'o@x.com',
    owner_full_name: 'O',
    owner_password_hash: null,
    owner_can_create_users: false,
    now: 0,
  });
  let n = 0;
  const commands = {
    add: (ctx: MutationContext) => {
      ctx.store.realms.updateSettings(ctx.realm.id, JSON.stringify({ value: ++n }));
      return { value: n };
    },
    refuse: () => {
      throw new JsonableError('no');
    },
  };
  const batches: BatchEffects[] = [];
  const placement = {
    commit: {
      commit: (_realmId: number, body: () => BatchEffects) => {
        batches.push(store.transaction(body));
        return { settled: Promise.resolve() };
      },
    },
    owns: () => true,
    forward: () => Promise.reject(new Error('owner here')),
    addRealm: () => Promise.reject(new Error('not here')),
  };
  const rt = new RealmRuntime(
    store,
    realm_id,
    { publish: () => undefined },
    commands,
    Date.now,
    new Set(),
    placement,
  );
  t.same(await rt.askHere('add', {}, 'f1.1'), { value: 1 });
  await t.rejects(rt.askHere('refuse', {}, 'f1.2'));
  t.same(await rt.askHere('add', {}), { value: 2 });
  t.same(
    batches.map((b) => b.forwarded),
    [[['f1.1', { value: 1 }]], [], []],
    'only the forwarded command that ran, with its result',
  );
});

/** A log that node n1 writes (LogWriter) and node n2 applies (LogApplier). */
function twoNodes(ran: (seq: number, r: [string, unknown][]) => void) {
  const log: { seq: number; subject: string; data: Uint8Array; msgId: string }[] = [];
  let wake: (() => void) | null = null;
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
          const m = log[seq - 1]!;
          yield { ...m, headers: { get: (k: string) => (k === 'Nats-Msg-Id' ? m.msgId : '') } };
        }
      },
    };
  };
  const link = (node: string) =>
    ({
      opts: { stallMs: 60_000 },
      names: { stream: 'LOG', log: 'confab.log' },
      node,
      incarnation: `${node}i`,
      leaseMs: 3000,
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
        publish: (subject: string, data: Uint8Array, o: { headers: Map<string, string> }) => {
          log.push({ seq: log.length + 1, subject, data, msgId: o.headers.get('Nats-Msg-Id')! });
          wake?.();
          return Promise.resolve({ seq: log.length });
        },
      },
      jsm: { streams: { info: () => Promise.resolve({ state: { last_seq: log.length } }) } },
    }) as unknown as ClusterLink;
  const replication = {
    state: () => ({ applied: 0, unacked: 0 }),
    sealWithUndo: () => ({ changes: [['messages', 'u', [1]]], undo: [] }),
    undo: () => ({ touched: new Set<string>(), restored: [] }),
    noteUnacked: () => undefined,
    markApplied: () => undefined,
    markAppliedLater: () => undefined,
    apply: () => new Set<string>(),
    flushApplied: () => undefined,
  };
  const queues = {
    watchRegistrations: () => undefined,
    publish: () => undefined,
    endSessions: () => undefined,
  };
  const writer = new LogWriter({
    link: link('n1'),
    store: { transaction: <T>(f: () => T) => f() } as never,
    replication: replication as never,
    ids: { writing: <T>(_w: unknown, f: () => T) => f() } as never,
    keeper: { valid: () => true, term: () => 7 } as never,
    queues: queues as never,
    die: () => undefined,
    deposed: () => undefined,
  });
  const applier = new LogApplier({
    link: link('n2'),
    replication: replication as never,
    ids: { withoutBlocksSync: <T>(f: () => T) => f() } as never,
    queues: queues as never,
    hooks: {},
    mine: () => false,
    mineInLog: () => undefined,
    displaced: () => null,
    applied: () => undefined,
    forwardsRan: ran,
    die: () => undefined,
  });
  return { log, writer, applier };
}

t.test('the log: the entry names them, and another node applying it learns them', async (t) => {
  const learned: [number, [string, unknown][]][] = [];
  const w = twoNodes((seq, r) => learned.push([seq, r]));
  await w.applier.start({ loaded: () => [] } as never);
  t.teardown(() => w.applier.close());
  w.writer.start(1, 0, { close: () => undefined } as never);
  const { settled } = w.writer.commit(1, () => ({
    events: [],
    ended: [],
    forwarded: [['f1.7', { id: 42 }]],
  }));
  await settled;
  t.same((unpack<Entry>(w.log[0]!.data) as { fw?: unknown }).fw, [['f1.7', { id: 42 }]]);
  await until('applied on n2', () => w.applier.applied === 1);
  t.same(learned, [[1, [['f1.7', { id: 42 }]]]], 'n2 learned it, at its position');
});

type Callback = (err: unknown, msg: { data: Uint8Array; headers?: { code: number } }) => void;

t.test('a repeat reaching the next owner after a handover: answered, not run again', async (t) => {
  // The log as the owners append to it: each forwarded command run, by id, with its result.
  const logged: [string, unknown][] = [];
  type Owner = { runs: number; heard: boolean; outcomes: ForwardOutcomes };
  const a: Owner = { runs: 0, heard: false, outcomes: new ForwardOutcomes() };
  const b: Owner = { runs: 0, heard: true, outcomes: new ForwardOutcomes() };
  const inboxes = new Map<string, Callback>();
  let serving: Owner | null = a;
  const deliver = (reply: string, msg: { data: Uint8Array; headers?: { code: number } }) =>
    setTimeout(() => inboxes.get(reply)?.(null, msg), 2);
  const link = {
    node: 'n3',
    names: { cmd: 'confab.cmd', queues: 'confab.queue' },
    nc: {
      status: () => (async function* () {})(),
      subscribe: (subject: string, o: { callback: Callback }) => {
        inboxes.set(subject, o.callback);
        return { unsubscribe: () => inboxes.delete(subject) };
      },
      publish: (_subject: string, body: Uint8Array, o: { reply: string }) => {
        const to = serving;
        if (to === null) {
          deliver(o.reply, { data: new Uint8Array(0), headers: { code: 503 } });
          return;
        }
        setTimeout(() => {
          if (to === a && a.runs === 0) {
            // The first owner hands the realm over right after it receives the command; the next
            // owner serves at once, having applied the log up to its marker, so every entry of
            // the first owner's (its applier: Forwarder.ranInLog).
            setTimeout(() => {
              // (Called only if there: the code before had no such record, and ran it again.)
              const learn = (b.outcomes as Partial<ForwardOutcomes>).logged?.bind(b.outcomes);
              for (const [id, data] of logged) learn?.(id, data, 9);
              serving = b;
            }, 30);
          }
          void answerForwarded(
            body,
            (_type, _payload, id) => {
              to.runs++;
              const result = { id: (to === a ? 100 : 200) + to.runs };
              // Its batch's entry names it (written before the handover).
              if (id !== undefined) logged.push([id, result]);
              return Promise.resolve({ data: result, seq: 9 });
            },
            (d) => {
              if (to.heard) deliver(o.reply, { data: d });
            },
            to.outcomes,
          );
        }, 2);
      },
    },
  } as unknown as ClusterLink;
  const f = new Forwarder({
    link,
    queues: {} as never,
    owns: () => false,
    runHere: () => Promise.reject(new Error('not the owner')),
    position: () => 0,
    waitApplied: () => Promise.resolve(),
  });
  const data = await f.forward(1, 'send', { content: 'once' });
  t.equal(a.runs, 1, 'the first owner ran it');
  t.equal(b.runs, 0, 'the next owner did not run it again');
  t.same(data, { id: 101 }, 'answered with what it came to on the first owner (from the log)');
});

t.test('what a node learns from the log never pushes out the commands it received', async (t) => {
  // Every node learns every forwarded write of the cluster from the log: at a high rate of them
  // (FORWARD_KEEP_MOST within the keeping time), an owner's own outcome, under way or done, must
  // still answer its repeat; the learned ones have a bound of their own.
  let now = 1_000_000;
  const outcomes = new ForwardOutcomes(() => now);
  let finish: (r: { ok: true; data: unknown; seq: number }) => void = () => {};
  outcomes.add('mine.1', new Promise((resolve) => (finish = resolve)));
  outcomes.add('mine.2', Promise.resolve({ ok: true, data: { id: 2 }, seq: 3 }));
  for (let i = 0; i < FORWARD_KEEP_MOST + 10; i++) {
    if (i % 1000 === 0) now += 100; // 2,000 forwarded writes a second across the cluster
    outcomes.logged(`other.${i}`, { id: i }, 10 + i);
  }
  const underWay = outcomes.get('mine.1');
  t.ok(underWay, 'a received command still under way is still known');
  finish({ ok: true, data: { id: 1 }, seq: 2 });
  t.same(await underWay, { ok: true, data: { id: 1 }, seq: 2 });
  t.same(await outcomes.get('mine.2'), { ok: true, data: { id: 2 }, seq: 3 }, 'a done one too');
  t.same(
    await outcomes.get(`other.${FORWARD_KEEP_MOST + 9}`),
    { ok: true, data: { id: FORWARD_KEEP_MOST + 9 }, seq: FORWARD_KEEP_MOST + 19 },
    'the newest learned one is known',
  );
  t.equal(outcomes.get('other.0'), undefined, 'the oldest learned ones went, past their bound');
  // A learned id is not learned twice, and an id this node received is not replaced by the log's.
  outcomes.logged('mine.2', { id: 'other' }, 99);
  t.same(await outcomes.get('mine.2'), { ok: true, data: { id: 2 }, seq: 3 });
  // Both kinds still go after FORWARD_KEEP_MS.
  now += 31_000;
  outcomes.add('mine.3', Promise.resolve({ ok: true, data: null, seq: 4 }));
  outcomes.logged('other.late', null, 5);
  t.equal(outcomes.get('mine.2'), undefined, 'a received one past the keeping time went');
  t.equal(outcomes.get(`other.${FORWARD_KEEP_MOST + 9}`), undefined, 'a learned one too');
});
