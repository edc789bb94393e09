/**
 * The realm actor: one xstate machine per realm, through which every change to the realm's data
 * passes. xstate's mailbox processes one event completely before the next, and each command runs
 * synchronously, so mutations of a realm are applied strictly one at a time, in arrival order,
 * each inside one SQLite transaction — no locks needed.
 *
 *   open.idle       COMMAND, batchable        → open.batching (enqueue)
 *                   COMMAND, other            → open.idle     (run it)
 *                   CLOSE                     → closed
 *   open.batching   COMMAND, batchable        → open.batching (enqueue)
 *                   COMMAND, other            → open.idle     (commit the batch, then run it)
 *                   after endOfTurn           → open.idle     (commit the batch)
 *                   CLOSE                     → closed        (commit the batch)
 *   closed          COMMAND                   → closed        (refuse: 503)
 *
 * Group commit (earned by `npm run bench -- messages`, docs/benchmarks.md): commands named in the
 * table's `batchable` set (message sends) do not run at once; they wait in the context until the
 * end of the current turn of the event loop (`endOfTurn`, a delay of 0: setImmediate on the
 * actor's clock, actors/clock.ts), and every one queued by then runs in ONE transaction, each
 * inside its own savepoint. The guarantees stay those of one transaction per command:
 * - arrival order: a command that is not batchable first commits the pending batch, then runs;
 * - all-or-nothing per command: a command that throws rolls back to its savepoint only, and its
 *   events and read-model refreshes are dropped;
 * - events only after COMMIT: the batch's events are published, in command order, after the one
 *   COMMIT; if the COMMIT itself fails, every command of the batch fails.
 * A batchable command must not depend on another's afterCommit refresh of the read model (sends
 * register none). The cost of a commit is mostly the pages it writes (each message adds a row to
 * every recipient's part of user_messages and its indexes), so N sends in one commit cost far
 * less than N commits.
 *
 * Discipline: `assign` only computes the next context (the batch is an immutable list, newest
 * first); running commands, publishing and replying are named actions (runOne, commitBatch,
 * refuse), which catch everything and always reply — xstate v5 stops an actor for good, silently,
 * when an action throws.
 */
import { observeCommit } from '../src/observability/metrics.js';
import { log } from '../src/observability/log.js';
import { assign, setup } from 'xstate';
import { JsonableError } from '../src/lib/errors.js';
import type { EventPublisher, OutboundEvent, WireEvent } from '../src/lib/events.js';
import type { MailDeps } from '../src/lib/mail.js';
import type { ServiceBotDeps } from '../src/lib/bots.js';
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

/** What the realm actor works with; fixed for its life. */
export type RealmDeps = {
  store: Store;
  view: RealmView;
  publisher: EventPublisher;
  commands: CommandTable;
  /** Commands that may share a transaction with others (group commit). */
  batchable: ReadonlySet<string>;
  /** The server's "now" (ms), as mutations see it. */
  clock: () => number;
  /** Cluster deployment only (src/cluster): the replicated log every commit goes to. */
  log?: CommitLog;
  /** Outgoing mail (docs/mail.md); absent: the server sends none. */
  mail?: MailDeps;
  /** Outgoing-webhook bots (docs/integrations.md); absent: none are called. */
  serviceBots?: ServiceBotDeps;
};

/**
 * The seam to the cluster deployment (docs/cluster.md). With a log, each transaction's captured
 * rows, with its commands' events, are sealed just before its COMMIT and sent to the realm's
 * replicated log from there, so that the log's round trip overlaps the COMMIT and the read-model
 * refresh; the replies wait until the log has acknowledged the batch (`append` resolves, in
 * order), or fail if it refused. The events reach other nodes' queues from the log, this node's
 * right after the COMMIT (`append`).
 */
export interface CommitLog {
  /**
   * Runs the transaction's body as a write of the realm: new rows get their ids from the realm's
   * own blocks (src/cluster/id-blocks.ts).
   */
  writing<T>(realmId: number, body: () => T): T;
  /**
   * Inside the transaction, just before COMMIT: takes what it wrote and sends it to the log with
   * these events. Throws (the transaction is rolled back) when this node may not write the realm.
   */
  seal(realmId: number, events: OutboundEvent[], ended: (readonly number[] | null)[]): unknown;
  /**
   * After COMMIT: this node's queues get the batch's events; resolves when the log holds the
   * batch, rejects when it does not.
   */
  append(realmId: number, sealed: unknown): Promise<void>;
  /** The COMMIT failed after `seal`: the batch must not stay in the log without this copy. */
  commitFailed(realmId: number, sealed: unknown): void;
}

/** The commands waiting for the end of the turn: an immutable list, newest first. */
export type Pending = { readonly env: Envelope; readonly prev: Pending | null };

export type RealmMachineContext = {
  deps: RealmDeps;
  pending: Pending | null;
  /** Commands received so far; diagnostic. */
  applied: number;
};

/** Most commands one group commit runs (a bound on the transaction); more run in the next. */
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
  /** Sessions to end after the events are published (deactivations): users, or null: all. */
  ended: (readonly number[] | null)[];
};

function mutationContext(
  ctx: RealmDeps,
  { events, afterCommit, ended }: Omit<Outcome, 'env' | 'reply'>,
): MutationContext {
  return {
    store: ctx.store,
    realm: ctx.view,
    now: Math.floor(ctx.clock() / 1000),
    emit: (event: WireEvent, users: readonly number[], delivery) =>
      void events.push(delivery ? { event, users, ...delivery } : { event, users }),
    afterCommit: (fn) => void afterCommit.push(fn),
    endSessions: (users) => void ended.push(users === 'realm' ? null : users),
    mail: ctx.mail ?? null,
    serviceBots: ctx.serviceBots ?? null,
  };
}

/** Runs one mutation inside the current transaction (or a savepoint of it); never throws. */
function applyOne(ctx: RealmDeps, env: Envelope): Outcome {
  const mutation = ctx.commands[env.command] as
    ((c: MutationContext, p: unknown) => unknown) | undefined;
  const effects: Omit<Outcome, 'env' | 'reply'> = { events: [], afterCommit: [], ended: [] };
  if (!mutation) {
    const error = new Error(`unknown realm command ${env.command}`);
    return { env, reply: { ok: false, error }, ...effects };
  }
  try {
    // Nested inside a batch's transaction, this is a savepoint: a refusal undoes only this command.
    const data = ctx.store.transaction(() => mutation(mutationContext(ctx, effects), env.payload));
    return { env, reply: { ok: true, data }, ...effects };
  } catch (error) {
    return { env, reply: { ok: false, error }, events: [], afterCommit: [], ended: [] };
  }
}

/** The commands' events and ended sessions, in command order. */
function effectsOf(outcomes: readonly Outcome[]): {
  events: OutboundEvent[];
  ended: (readonly number[] | null)[];
} {
  const events: OutboundEvent[] = [];
  const ended: (readonly number[] | null)[] = [];
  for (const o of outcomes) {
    for (const e of o.events) events.push(e);
    for (const u of o.ended) ended.push(u);
  }
  return { events, ended };
}

/** After COMMIT: each command's read-model refreshes, in order. */
function refreshAll(ctx: RealmDeps, outcomes: readonly Outcome[]): void {
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
  }
}

/** After COMMIT: read-model refreshes, then the events (in command order), then the replies. */
function finish(ctx: RealmDeps, outcomes: readonly Outcome[], sealed?: unknown): void {
  if (ctx.log && sealed !== undefined) return finishLogged(ctx, ctx.log, outcomes, sealed);
  refreshAll(ctx, outcomes);
  const { events, ended } = effectsOf(outcomes);
  if (events.length > 0) {
    try {
      ctx.publisher.publish(ctx.view.id, events);
    } catch (err) {
      log.error({ err, realmId: ctx.view.id }, 'publishing events failed');
    }
  }
  for (const users of ended) {
    try {
      ctx.publisher.endSessions?.(ctx.view.id, users);
    } catch (err) {
      log.error({ err, realmId: ctx.view.id }, 'ending sessions failed');
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

/** Cluster: refresh now; events (here now, from the log elsewhere) and replies once appended. */
function finishLogged(
  ctx: RealmDeps,
  commitLog: CommitLog,
  outcomes: readonly Outcome[],
  sealed: unknown,
): void {
  refreshAll(ctx, outcomes);
  const replyAll = (failure: unknown) => {
    for (const o of outcomes) {
      try {
        o.env.reply(failure === null ? o.reply : { ok: false, error: failure });
      } catch (err) {
        log.error({ err, realmId: ctx.view.id, command: o.env.command }, 'reply failed');
      }
    }
  };
  commitLog.append(ctx.view.id, sealed).then(
    () => replyAll(null),
    (err: unknown) => replyAll(err),
  );
}

/** Applies one command in one transaction; delivers its events after COMMIT; always replies. */
function runCommand(ctx: RealmDeps, env: Envelope): void {
  if (ctx.log) return runBatch(ctx, [env]);
  const started = performance.now();
  const outcome = applyOne(ctx, env);
  observeCommit(1, performance.now() - started);
  finish(ctx, [outcome]);
}

/**
 * Runs a batch (group commit), MAX_BATCH commands per transaction, one savepoint per command,
 * events and replies after each COMMIT. Always replies to every command.
 */
function runBatch(ctx: RealmDeps, all: readonly Envelope[]): void {
  for (let i = 0; i < all.length; i += MAX_BATCH) {
    const envs = all.slice(i, i + MAX_BATCH);
    let outcomes: Outcome[] = [];
    const started = performance.now();
    let sealed: unknown;
    try {
      ctx.store.transaction(() => {
        const body = () => {
          outcomes = envs.map((env) => applyOne(ctx, env));
          if (ctx.log) {
            const { events, ended } = effectsOf(outcomes);
            sealed = ctx.log.seal(ctx.view.id, events, ended);
          }
        };
        if (ctx.log) ctx.log.writing(ctx.view.id, body);
        else body();
      });
    } catch (error) {
      if (sealed !== undefined) ctx.log?.commitFailed(ctx.view.id, sealed);
      // The COMMIT failed (or the realm was not this node's to write): nothing of it was written.
      outcomes = envs.map((env) => ({
        env,
        reply: { ok: false, error },
        events: [],
        afterCommit: [],
        ended: [],
      }));
      sealed = undefined;
    }
    observeCommit(envs.length, performance.now() - started);
    finish(ctx, outcomes, sealed);
  }
}

/** The pending commands in arrival order. */
function inArrivalOrder(pending: Pending | null): Envelope[] {
  const out: Envelope[] = [];
  for (let p = pending; p !== null; p = p.prev) out.push(p.env);
  return out.reverse();
}

export const realmMachine = setup({
  types: {
    context: {} as RealmMachineContext,
    events: {} as RealmMachineEvent,
    input: {} as RealmDeps,
  },
  delays: {
    /** After the current turn of the event loop (the clock runs a delay of 0 in setImmediate). */
    endOfTurn: 0,
  },
  guards: {
    batchable: ({ context, event }) =>
      event.type === 'COMMAND' && context.deps.batchable.has(event.envelope.command),
  },
  actions: {
    count: assign(({ context }) => ({ applied: context.applied + 1 })),
    enqueue: assign(({ context, event }) =>
      event.type === 'COMMAND' ? { pending: { env: event.envelope, prev: context.pending } } : {},
    ),
    clearBatch: assign({ pending: null }),
    runOne: ({ context, event }) => {
      if (event.type === 'COMMAND') runCommand(context.deps, event.envelope);
    },
    commitBatch: ({ context }) => {
      try {
        runBatch(context.deps, inArrivalOrder(context.pending));
      } catch (err) {
        log.error({ err, realmId: context.deps.view.id }, 'group commit failed');
      }
    },
    refuse: ({ event }) => {
      if (event.type === 'COMMAND')
        event.envelope.reply({ ok: false, error: new RealmClosedError() });
    },
  },
}).createMachine({
  id: 'realm',
  context: ({ input }) => ({ deps: input, pending: null, applied: 0 }),
  initial: 'open',
  states: {
    open: {
      initial: 'idle',
      states: {
        idle: {
          on: {
            COMMAND: [
              { guard: 'batchable', target: 'batching', actions: ['count', 'enqueue'] },
              { actions: ['count', 'runOne'] },
            ],
            CLOSE: { target: '#realm.closed' },
          },
        },
        batching: {
          after: {
            endOfTurn: { target: 'idle', actions: ['commitBatch', 'clearBatch'] },
          },
          on: {
            COMMAND: [
              { guard: 'batchable', actions: ['count', 'enqueue'] },
              { target: 'idle', actions: ['count', 'commitBatch', 'clearBatch', 'runOne'] },
            ],
            CLOSE: { target: '#realm.closed', actions: ['commitBatch', 'clearBatch'] },
          },
        },
      },
    },
    closed: {
      on: {
        COMMAND: { actions: 'refuse' },
      },
    },
  },
});
