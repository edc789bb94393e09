/**
 * The realm actor: one xstate machine per realm, through which every change to the realm's data
 * passes. xstate's mailbox processes one event completely before the next, and `runCommand` is
 * synchronous, so mutations of a realm are applied strictly one at a time, in arrival order, each
 * inside one SQLite transaction — no locks needed.
 *
 * Group commit (earned by `npm run bench -- messages`, docs/benchmarks.md): commands named in the table's
 * `batchable` set (message sends) do not run at once; they wait for the end of the current turn
 * of the event loop (setImmediate), and every one queued by then runs in ONE transaction, each
 * inside its own savepoint. The guarantees stay those of one transaction per command:
 * - arrival order: a command that is not batchable first runs the pending batch, then itself;
 * - all-or-nothing per command: a command that throws rolls back to its savepoint only, and its
 *   events and read-model refreshes are dropped;
 * - events only after COMMIT: the batch's events are published, in command order, after the one
 *   COMMIT; if the COMMIT itself fails, every command of the batch fails.
 * A batchable command must not depend on another's afterCommit refresh of the read model (sends
 * register none). The cost of a commit is mostly the pages it writes (each message adds a row to
 * every recipient's part of user_messages and its indexes), so N sends in one commit cost far
 * less than N commits.
 *
 * States: `open` runs commands; `closed` (after shutdown or realm removal) refuses them.
 *
 * Discipline (xstate v5 stops an actor for good, silently, when an action throws): runCommand and
 * runBatch catch everything and always reply.
 */
import { observeCommit } from '../src/observability/metrics.js';
import { log } from '../src/observability/log.js';
import { assign, setup } from 'xstate';
import { JsonableError } from '../src/lib/errors.js';
import type { EventPublisher, OutboundEvent, WireEvent } from '../src/lib/events.js';
import type { MutationContext } from '../src/mutations/context.js';
import type { RealmView } from '../src/queries/realm-view.js';
import type { Store } from '../src/storage/store.js';
import type { CommandTable } from './realm.commands.js';

export type Reply = { ok: true; data: unknown } | { ok: false; error: unknown };

export type Envelope = {
  command: string;
  payload: unknown;
  reply: (r: Reply) => void;
};

export type RealmMachineEvent = { type: 'COMMAND'; envelope: Envelope } | { type: 'CLOSE' };

export type RealmMachineContext = {
  store: Store;
  view: RealmView;
  publisher: EventPublisher;
  commands: CommandTable;
  /** Commands that may share a transaction with others (group commit). */
  batchable: ReadonlySet<string>;
  clock: () => number;
  /** Batchable commands waiting for the end of the event loop's turn. */
  batch: Batch;
  /** Commands applied so far; diagnostic. */
  applied: number;
};

/** The pending group commit of a realm (mutable; owned by the machine's context). */
export type Batch = { pending: Envelope[]; scheduled: boolean; closed: boolean };

/** Most commands one group commit runs (a bound on the transaction); more wait for the next. */
export const MAX_BATCH = 64;

export class RealmClosedError extends JsonableError {
  constructor() {
    super('Server is shutting down', { code: 'BAD_REQUEST', status: 503 });
  }
}

type Outcome = {
  env: Envelope;
  reply: Reply;
  events: OutboundEvent[];
  afterCommit: (() => void)[];
};

function mutationContext(
  ctx: RealmMachineContext,
  events: OutboundEvent[],
  afterCommit: (() => void)[],
): MutationContext {
  return {
    store: ctx.store,
    realm: ctx.view,
    now: Math.floor(ctx.clock() / 1000),
    emit: (event: WireEvent, users: readonly number[], delivery) =>
      void events.push(delivery ? { event, users, ...delivery } : { event, users }),
    afterCommit: (fn) => void afterCommit.push(fn),
  };
}

/** Runs one mutation inside the current transaction (or a savepoint of it); never throws. */
function applyOne(ctx: RealmMachineContext, env: Envelope): Outcome {
  const mutation = ctx.commands[env.command] as
    ((c: MutationContext, p: unknown) => unknown) | undefined;
  const events: OutboundEvent[] = [];
  const afterCommit: (() => void)[] = [];
  if (!mutation) {
    const error = new Error(`unknown realm command ${env.command}`);
    return { env, reply: { ok: false, error }, events, afterCommit };
  }
  try {
    // Nested inside a batch's transaction, this is a savepoint: a refusal undoes only this command.
    const data = ctx.store.transaction(() =>
      mutation(mutationContext(ctx, events, afterCommit), env.payload),
    );
    return { env, reply: { ok: true, data }, events, afterCommit };
  } catch (error) {
    return { env, reply: { ok: false, error }, events: [], afterCommit: [] };
  }
}

/** After COMMIT: read-model refreshes, then the events (in command order), then the replies. */
function finish(ctx: RealmMachineContext, outcomes: readonly Outcome[]): void {
  const events: OutboundEvent[] = [];
  for (const o of outcomes) {
    for (const fn of o.afterCommit) {
      try {
        fn();
      } catch (err) {
        log.error(
          { err, realmId: ctx.view.id, command: o.env.command },
          'read-model refresh failed',
        );
      }
    }
    for (const e of o.events) events.push(e);
  }
  if (events.length > 0) {
    try {
      ctx.publisher.publish(ctx.view.id, events);
    } catch (err) {
      log.error({ err, realmId: ctx.view.id }, 'publishing events failed');
    }
  }
  for (const o of outcomes) {
    try {
      o.env.reply(o.reply);
    } catch (err) {
      log.error({ err, realmId: ctx.view.id, command: o.env.command }, 'reply failed');
    }
  }
}

/** Applies one command in one transaction; delivers its events after COMMIT; always replies. */
export function runCommand(ctx: RealmMachineContext, env: Envelope): void {
  const started = performance.now();
  const outcome = applyOne(ctx, env);
  observeCommit(1, performance.now() - started);
  finish(ctx, [outcome]);
}

/**
 * Runs the pending batch (group commit): one transaction, one savepoint per command, events and
 * replies after the COMMIT. Always replies to every command.
 */
export function runBatch(ctx: RealmMachineContext): void {
  const batch = ctx.batch;
  while (batch.pending.length > 0) {
    const envs = batch.pending.splice(0, MAX_BATCH);
    let outcomes: Outcome[] = [];
    const started = performance.now();
    try {
      ctx.store.transaction(() => {
        outcomes = envs.map((env) => applyOne(ctx, env));
      });
    } catch (error) {
      // The COMMIT failed: nothing of the batch was written.
      outcomes = envs.map((env) => ({
        env,
        reply: { ok: false, error },
        events: [],
        afterCommit: [],
      }));
    }
    observeCommit(envs.length, performance.now() - started);
    finish(ctx, outcomes);
  }
}

function enqueue(ctx: RealmMachineContext, env: Envelope): void {
  const batch = ctx.batch;
  batch.pending.push(env);
  if (batch.scheduled) return;
  batch.scheduled = true;
  setImmediate(() => {
    batch.scheduled = false;
    if (batch.closed) {
      for (const e of batch.pending.splice(0))
        e.reply({ ok: false, error: new RealmClosedError() });
      return;
    }
    try {
      runBatch(ctx);
    } catch (err) {
      log.error({ err, realmId: ctx.view.id }, 'group commit failed');
    }
  });
}

export const realmMachine = setup({
  types: {
    context: {} as RealmMachineContext,
    events: {} as RealmMachineEvent,
    input: {} as Omit<RealmMachineContext, 'applied' | 'batch'>,
  },
  actions: {
    run: assign(({ context, event }) => {
      if (event.type !== 'COMMAND') return {};
      const env = event.envelope;
      if (context.batchable.has(env.command)) {
        enqueue(context, env);
      } else {
        // Arrival order: whatever is pending committed first.
        if (context.batch.pending.length > 0) runBatch(context);
        runCommand(context, env);
      }
      return { applied: context.applied + 1 };
    }),
    flush: ({ context }) => {
      try {
        runBatch(context);
      } catch (err) {
        log.error({ err, realmId: context.view.id }, 'group commit failed');
      }
      context.batch.closed = true;
    },
    refuse: ({ event }) => {
      if (event.type === 'COMMAND')
        event.envelope.reply({ ok: false, error: new RealmClosedError() });
    },
  },
}).createMachine({
  id: 'realm',
  context: ({ input }) => ({
    ...input,
    batch: { pending: [], scheduled: false, closed: false },
    applied: 0,
  }),
  initial: 'open',
  states: {
    open: {
      on: {
        COMMAND: { actions: 'run' },
        CLOSE: { target: 'closed', actions: 'flush' },
      },
    },
    closed: {
      on: {
        COMMAND: { actions: 'refuse' },
      },
    },
  },
});
