/**
 * The realm machine on its own (actors/realm.machine.ts), on xstate's SimulatedClock and a store
 * that only records transactions: its states as the diagram says, group commit at the end of the
 * turn, arrival order across batchable and other commands, MAX_BATCH, closing, and that a command
 * which throws never stops the actor. (Rollback and savepoints against a real database:
 * test/unit/realm-actor.test.ts.)
 */
import t, { type Test } from 'tap';
import { createActor, SimulatedClock } from 'xstate';
import {
  HOLD_POLL_MS,
  MAX_BATCH,
  batchDelay,
  FULL_BATCH,
  heldDelay,
  realmMachine,
  type CommitStrategy,
  type Envelope,
  type RealmDeps,
  type Reply,
} from '../../actors/realm.machine.js';
import type { OutboundEvent } from '../../src/lib/events.js';
import type { MutationContext } from '../../src/mutations/context.js';
import type { RealmView } from '../../src/queries/realm-view.js';
import type { Store } from '../../src/storage/store.js';

type FakeStore = { transaction<T>(fn: () => T): T };

function setup(
  t: Test,
  opts: {
    commit?: (log: string[], store: FakeStore) => CommitStrategy;
    commitSpacingMs?: number;
    commitHold?: () => number;
  } = {},
) {
  const clock = new SimulatedClock();
  const log: string[] = [];
  let depth = 0;
  /** Set, the next COMMIT fails (a full disk, say). */
  let failCommit = false;
  const store = {
    transaction<T>(fn: () => T): T {
      if (depth === 0) log.push('BEGIN');
      depth++;
      let ok = false;
      try {
        const result = fn();
        ok = true;
        return result;
      } finally {
        depth--;
        if (depth === 0 && ok && failCommit) {
          failCommit = false;
          log.push('COMMIT failed');
          // eslint-disable-next-line no-unsafe-finally
          throw new Error('database or disk is full');
        }
        if (depth === 0) log.push(ok ? 'COMMIT' : 'ROLLBACK');
      }
    },
  };
  const published: OutboundEvent[][] = [];
  const effects: string[] = [];
  const deps: RealmDeps = {
    store: store as unknown as Store,
    view: { id: 7 } as RealmView,
    publisher: {
      publish: (_realm, events) => {
        published.push([...events]);
        effects.push('publish');
      },
      endSessions: (_realm, users) => void effects.push(`end ${JSON.stringify(users)}`),
    },
    commands: {
      send: (ctx: MutationContext, p: { n: number }) => {
        log.push(`send ${p.n}`);
        ctx.emit({ type: 'sent', n: p.n }, [1]);
        return p.n;
      },
      other: (ctx: MutationContext, p: { n: number }) => {
        log.push(`other ${p.n}`);
        return p.n;
      },
      deactivate: (ctx: MutationContext) => {
        ctx.emit({ type: 'bye' }, [1]);
        ctx.endSessions([1]);
        return null;
      },
      crash: () => {
        throw new Error('a bug');
      },
      refreshing: (ctx: MutationContext) => {
        ctx.emit({ type: 'refreshed' }, [1]);
        ctx.afterCommit(() => void log.push('refresh'));
        return null;
      },
    },
    batchable: new Set(['send']),
    clock: () => clock.now(),
    ...(opts.commit ? { commit: opts.commit(log, store) } : {}),
    ...(opts.commitSpacingMs !== undefined ? { commitSpacingMs: opts.commitSpacingMs } : {}),
    ...(opts.commitHold ? { commitHold: opts.commitHold } : {}),
  };
  const actor = createActor(realmMachine, { input: deps, clock });
  actor.start();
  t.teardown(() => actor.stop());
  const replies: [string, Reply][] = [];
  const ask = (command: string, payload: unknown = {}) => {
    const envelope: Envelope = {
      command,
      payload,
      reply: (r) => void replies.push([`${command} ${JSON.stringify(payload)}`, r]),
    };
    actor.send({ type: 'COMMAND', envelope });
  };
  const state = () => actor.getSnapshot().value;
  const failNextCommit = () => void (failCommit = true);
  return { clock, actor, ask, state, log, published, effects, replies, failNextCommit };
}

/**
 * A commit strategy as the cluster's log writer is to the machine: runs the transaction, records
 * where it seals the batch, and settles a batch when the test says so.
 */
function recordingStrategy(log: string[], store: FakeStore, refuse = false) {
  const acks: (() => void)[] = [];
  const failed: unknown[] = [];
  const strategy: CommitStrategy = {
    commit: (_realm, body) => {
      let settled: Promise<void> | null = null;
      try {
        store.transaction(() => {
          const { events } = body();
          if (refuse) throw new Error('not the owner');
          log.push(`seal ${events.map((e) => e.event.type).join(',')}`);
          settled = new Promise<void>((resolve) => acks.push(resolve));
        });
      } catch (err) {
        if (settled !== null) failed.push(settled);
        throw err;
      }
      return { settled: settled! };
    },
  };
  return { strategy, acks, failed };
}

t.test(
  'with a commit strategy: sealed before COMMIT, refreshed after, answered once settled',
  async (t) => {
    let rec!: ReturnType<typeof recordingStrategy>;
    const m = setup(t, { commit: (log, store) => (rec = recordingStrategy(log, store)).strategy });
    m.ask('refreshing');
    t.same(m.log, ['BEGIN', 'seal refreshed', 'COMMIT', 'refresh']);
    t.same(m.published, [], 'no events through the publisher: the strategy delivers them');
    await Promise.resolve();
    t.equal(m.replies.length, 0, 'no answer before the batch is settled');
    rec.acks[0]!();
    await new Promise((r) => setImmediate(r));
    t.same(
      m.replies.map(([, r]) => r),
      [{ ok: true, data: null }],
    );
    t.same(rec.failed, [], 'no failed commit');
    t.end();
  },
);

t.test('with a commit strategy: a COMMIT that fails after the seal is answered', (t) => {
  let rec!: ReturnType<typeof recordingStrategy>;
  const m = setup(t, { commit: (log, store) => (rec = recordingStrategy(log, store)).strategy });
  m.failNextCommit();
  m.ask('refreshing');
  t.same(m.log, ['BEGIN', 'seal refreshed', 'COMMIT failed'], 'no refresh');
  t.equal(rec.failed.length, 1, 'the strategy saw its sealed batch fail');
  t.match(m.replies, [[/refreshing/, { ok: false, error: /disk is full/ }]]);
  t.end();
});

t.test('with a commit strategy: a seal refused (not the owner) rolls the transaction back', (t) => {
  let rec!: ReturnType<typeof recordingStrategy>;
  const m = setup(t, {
    commit: (log, store) => (rec = recordingStrategy(log, store, true)).strategy,
  });
  m.ask('refreshing');
  t.same(m.log, ['BEGIN', 'ROLLBACK'], 'nothing committed, nothing refreshed');
  t.same(rec.failed, [], 'nothing was sealed');
  t.match(m.replies, [[/refreshing/, { ok: false, error: /not the owner/ }]]);
  t.end();
});

t.test(
  'with a commit strategy: a batch the log refuses is answered with its refusal',
  async (t) => {
    const m = setup(t, {
      commit: (log, store) => ({
        commit: (_realm, body) => {
          store.transaction(() => body());
          return { settled: Promise.reject(new Error('the log refused it')) };
        },
      }),
    });
    m.ask('send', { n: 1 });
    m.ask('send', { n: 2 });
    m.clock.increment(0);
    await new Promise((r) => setImmediate(r));
    t.match(m.replies, [
      [/send/, { ok: false, error: /refused/ }],
      [/send/, { ok: false, error: /refused/ }],
    ]);
    t.same(m.published, [], 'no event published');
    t.end();
  },
);

t.test('batchable commands wait for the end of the turn and commit together', (t) => {
  const m = setup(t);
  t.same(m.state(), { open: 'idle' });
  m.ask('send', { n: 1 });
  m.ask('send', { n: 2 });
  t.same(m.state(), { open: 'batching' });
  t.same(m.log, [], 'nothing runs before the end of the turn');
  t.equal(m.replies.length, 0);
  m.clock.increment(0);
  t.same(m.state(), { open: 'idle' });
  t.same(m.log, ['BEGIN', 'send 1', 'send 2', 'COMMIT'], 'one transaction');
  t.equal(m.published.length, 1, 'one publish for the batch');
  t.same(
    m.published[0]!.map((e) => e.event.n),
    [1, 2],
  );
  t.same(
    m.replies.map(([, r]) => r),
    [
      { ok: true, data: 1 },
      { ok: true, data: 2 },
    ],
  );
  t.equal(m.actor.getSnapshot().context.pending, null, 'the batch is cleared');
  t.equal(m.actor.getSnapshot().context.applied, 2);
  t.end();
});

t.test(
  'batchDelay: the end of the turn, unless the last batch began under the spacing ago',
  (t) => {
    t.equal(batchDelay(0, 100, 101), 0, 'no spacing');
    t.equal(batchDelay(5, -Infinity, 3), 0, 'no batch yet');
    t.equal(batchDelay(5, 100, 102), 3, 'the rest of the spacing');
    t.equal(batchDelay(5, 100, 105), 0);
    t.equal(batchDelay(5, 100, 400), 0, 'long ago');
    t.equal(batchDelay(5, 200, 100), 5, 'never more than the spacing (a clock step back)');
    t.equal(batchDelay(5, 100, 102, FULL_BATCH - 1), 3, 'a batch not yet full waits');
    t.equal(batchDelay(5, 100, 102, FULL_BATCH), 0, 'a full batch does not');
    t.end();
  },
);

t.test('commit spacing: a batch soon after another waits for the spacing, gathering sends', (t) => {
  const spacing = 60_000; // far longer than the test takes in real time, however loaded
  const m = setup(t, { commitSpacingMs: spacing });
  m.ask('send', { n: 1 });
  m.clock.increment(0);
  t.same(m.log, ['BEGIN', 'send 1', 'COMMIT'], 'the first batch commits at the end of its turn');
  m.ask('send', { n: 2 });
  m.clock.increment(0);
  m.ask('send', { n: 3 });
  m.clock.increment(1);
  t.same(m.state(), { open: 'batching' }, 'the next one waits');
  t.same(m.log.length, 3);
  t.equal(m.replies.length, 1, 'unanswered while waiting');
  m.clock.increment(spacing);
  t.same(m.log.slice(3), ['BEGIN', 'send 2', 'send 3', 'COMMIT'], 'then commits both at once');
  t.equal(m.replies.length, 3);
  m.ask('send', { n: 4 });
  m.ask('other', { n: 5 });
  t.same(
    m.log.slice(7),
    ['BEGIN', 'send 4', 'COMMIT', 'BEGIN', 'other 5', 'COMMIT'],
    'a command that is not batchable still commits the waiting batch first',
  );
  t.same(m.state(), { open: 'idle' });
  t.end();
});

t.test('commit spacing: a batch that fills up commits at the end of its turn', (t) => {
  const spacing = 60_000; // far longer than the test takes in real time, however loaded
  const m = setup(t, { commitSpacingMs: spacing });
  m.ask('send', { n: 0 });
  m.clock.increment(0);
  t.same(m.log, ['BEGIN', 'send 0', 'COMMIT'], 'the first batch commits at the end of its turn');
  for (let n = 1; n < FULL_BATCH; n++) m.ask('send', { n });
  m.clock.increment(1);
  t.same(m.state(), { open: 'batching' }, 'one short of full, the next batch waits');
  t.equal(m.log.length, 3, 'nothing more committed');
  m.ask('send', { n: FULL_BATCH });
  m.ask('send', { n: FULL_BATCH + 1 });
  t.equal(m.log.length, 3, 'a full batch still waits for the end of the turn');
  m.clock.increment(0);
  t.same(m.state(), { open: 'idle' }, 'full: committed without the rest of the spacing');
  t.same(
    m.log.slice(3),
    ['BEGIN', ...Array.from({ length: FULL_BATCH + 1 }, (_, i) => `send ${i + 1}`), 'COMMIT'],
    'every send of the turn in one transaction, in order',
  );
  t.equal(m.replies.length, FULL_BATCH + 2, 'all answered');
  m.ask('send', { n: 99 });
  m.clock.increment(1);
  t.same(m.state(), { open: 'batching' }, 'and the next batch waits for the spacing again');
  t.end();
});

t.test('heldDelay: the spacing, or a poll while the commit hold lasts', (t) => {
  t.equal(heldDelay(0, 0), 0, 'no hold: the end of the turn');
  t.equal(heldDelay(3, 0), 3, 'no hold: the spacing');
  t.equal(heldDelay(0, 40), HOLD_POLL_MS, 'held: look again soon (the hold ends unannounced)');
  t.equal(heldDelay(0, 0.25), 0.25, 'never past the hold');
  t.equal(heldDelay(5, 40), 5, 'the spacing when it is longer');
  t.end();
});

t.test('commit hold: a due batch waits while held, then commits; others do not wait', (t) => {
  let hold = 0;
  const m = setup(t, { commitHold: () => hold });
  m.ask('send', { n: 1 });
  m.clock.increment(0);
  t.same(m.log, ['BEGIN', 'send 1', 'COMMIT'], 'no hold: the end of the turn');

  hold = 30;
  m.ask('send', { n: 2 });
  m.clock.increment(0);
  m.ask('send', { n: 3 });
  for (let i = 0; i < 10; i++) m.clock.increment(HOLD_POLL_MS);
  t.same(m.state(), { open: 'batching' }, 'held: the batch waits, polling');
  t.equal(m.log.length, 3, 'nothing committed while held');
  t.equal(m.replies.length, 1, 'unanswered while held');

  hold = 0; // the checkpointer clears the hold
  m.clock.increment(HOLD_POLL_MS);
  t.same(m.state(), { open: 'idle' });
  t.same(m.log.slice(3), ['BEGIN', 'send 2', 'send 3', 'COMMIT'], 'then one commit for both');
  t.equal(m.replies.length, 3, 'and both answered');

  hold = 30;
  m.ask('send', { n: 4 });
  m.ask('other', { n: 5 });
  t.same(
    m.log.slice(7),
    ['BEGIN', 'send 4', 'COMMIT', 'BEGIN', 'other 5', 'COMMIT'],
    'a command that is not batchable is not held, and commits the pending batch first',
  );
  m.ask('send', { n: 6 });
  m.actor.send({ type: 'CLOSE' });
  t.same(m.log.slice(13), ['BEGIN', 'send 6', 'COMMIT'], 'closing commits a held batch at once');
  t.end();
});

t.test('a command that is not batchable commits what is pending first, then runs', (t) => {
  const m = setup(t);
  m.ask('send', { n: 1 });
  m.ask('other', { n: 2 });
  t.same(m.state(), { open: 'idle' }, 'no batch left waiting');
  t.same(m.log, ['BEGIN', 'send 1', 'COMMIT', 'BEGIN', 'other 2', 'COMMIT']);
  m.clock.increment(0);
  t.equal(m.log.length, 6, 'the end of the turn finds nothing to do');
  m.ask('other', { n: 3 });
  t.same(m.log.slice(6), ['BEGIN', 'other 3', 'COMMIT'], 'alone, it runs at once');
  t.end();
});

t.test('more than MAX_BATCH pending commands commit in several transactions, in order', (t) => {
  const m = setup(t);
  const n = MAX_BATCH * 2 + 1;
  for (let i = 0; i < n; i++) m.ask('send', { n: i });
  m.clock.increment(0);
  t.equal(m.log.filter((l) => l === 'BEGIN').length, 3);
  t.same(
    m.log.filter((l) => l.startsWith('send')),
    Array.from({ length: n }, (_, i) => `send ${i}`),
  );
  t.equal(m.replies.length, n);
  t.end();
});

t.test('closing commits what is pending; a closed realm refuses with 503', (t) => {
  const m = setup(t);
  m.ask('send', { n: 1 });
  m.actor.send({ type: 'CLOSE' });
  t.equal(m.state(), 'closed');
  t.same(m.log, ['BEGIN', 'send 1', 'COMMIT']);
  m.ask('send', { n: 2 });
  m.ask('other', { n: 3 });
  m.clock.increment(0);
  t.equal(m.log.length, 3, 'nothing runs once closed');
  t.match(m.replies.slice(1), [
    ['send {"n":2}', { ok: false, error: { message: 'Server is shutting down', httpStatus: 503 } }],
    ['other {"n":3}', { ok: false, error: { httpStatus: 503 } }],
  ]);
  t.end();
});

t.test('a command that throws is answered with its error; the actor goes on', (t) => {
  const m = setup(t);
  m.ask('crash');
  m.ask('nothing');
  m.ask('other', { n: 1 });
  t.match(m.replies, [
    ['crash {}', { ok: false, error: { message: 'a bug' } }],
    ['nothing {}', { ok: false, error: { message: /unknown realm command/ } }],
    ['other {"n":1}', { ok: true, data: 1 }],
  ]);
  t.equal(m.actor.getSnapshot().status, 'active');
  t.end();
});

t.test('sessions a command ends are ended after its events are published', (t) => {
  const m = setup(t);
  m.ask('deactivate');
  t.same(m.effects, ['publish', 'end [1]']);
  t.end();
});
