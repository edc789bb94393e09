/**
 * The realm actor: one xstate machine per realm, through which every change to the realm's data
 * passes. xstate's mailbox processes one event completely before the next, and each command runs
 * synchronously, so mutations of a realm are applied strictly one at a time, in arrival order,
 * each inside one SQLite transaction — no locks needed.
 *
 *   open.idle       COMMAND, batchable        → open.batching (enqueue)
 *                   COMMAND, other            → open.idle     (run it)
 *                   CLOSE                     → closed
 *   open.batching   COMMAND, batchable        → open.batching (enqueue; the FULL_BATCH-th:
 *                                                               re-entered, due at the end of turn)
 *                   COMMAND, other            → open.idle     (commit the batch, then run it)
 *                   after endOfTurn, held     → open.batching (wait again)
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
 * every recipient's part of user_messages and its indexes: ~126 pages of 4 KiB for 50 recipients,
 * nearly all of them the same pages for the next message), so N sends in one commit cost far
 * less than N commits.
 *
 * Commit spacing (`commitSpacingMs`; the server's is COMMIT_SPACING_MS, src/config.ts): a batch
 * commits at the end of the turn only if the realm's previous batch began at least that long ago;
 * otherwise it waits until then, gathering the sends that arrive meanwhile. A realm that sends
 * now and then pays nothing; one sending steadily (hundreds a second) commits at most every
 * `commitSpacingMs`, several sends a commit, instead of writing the same ~126 pages to the WAL for
 * every send (which, at a few hundred sends a second, is the disk's whole bandwidth and the
 * send-to-delivery tail: docs/benchmarks.md, `messages`). A batch that has gathered FULL_BATCH
 * sends has what the wait was for and commits at the end of its turn: waiting longer would only
 * delay them (and, with clients that wait for each answer before sending again, cap a realm's
 * sends at their number per spacing).
 *
 * Commit hold (`commitHold`; the server's is the store's, src/storage/checkpointer.ts "Restarting
 * the WAL"): while the background checkpointer copies the last frames of the WAL so that it can
 * start afresh, a batch due to commit waits, polling every HOLD_POLL_MS, for at most the hold's
 * own bound (src/storage/wal-restart.ts MAX_HOLD_MS). Only batches wait: a command that is not
 * batchable, and closing, commit at once as always.
 *
 * Discipline: `assign` only computes the next context (the batch is an immutable list, newest
 * first); running commands, publishing and replying are named actions (runOne, commitBatch,
 * refuse), which catch everything and always reply — xstate v5 stops an actor for good, silently,
 * when an action throws.
 */
import { observeCommit } from '../src/observability/metrics.js';
import { log } from '../src/observability/log.js';
import { assign, setup } from 'xstate';
import { auditEntryFor, auditOriginOf } from '../src/lib/audit.js';
import { JsonableError } from '../src/lib/errors.js';
import { auditRow, logAudit } from '../src/mutations/audit.js';
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
  /**
   * A command forwarded from another cluster node: its id there (src/cluster/forwarding.ts). The
   * log entry of its batch names it, with its result, so that a later owner never runs it again.
   */
  forward?: string;
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
  /**
   * The least time (ms) between the starts of two batches' commits (commit spacing, above);
   * absent or 0: every batch commits at the end of its turn.
   */
  commitSpacingMs?: number;
  /**
   * How long (ms) batches should wait before committing, asked when one is due (commit hold,
   * above); absent or 0: no wait.
   */
  commitHold?: () => number;
  /** The server's "now" (ms), as mutations see it. */
  clock: () => number;
  /** Outgoing mail (docs/mail.md); absent: the server sends none. */
  mail?: MailDeps;
  /** Outgoing-webhook bots (docs/integrations.md); absent: none are called. */
  serviceBots?: ServiceBotDeps;
  /**
   * Cluster deployment only (src/cluster): how each transaction is committed and its effects
   * delivered. Absent: the single process's commit, events published right after it.
   */
  commit?: CommitStrategy;
};

/** What a transaction's commands produced, in command order: their events and ended sessions. */
export type BatchEffects = {
  events: OutboundEvent[];
  /** Sessions to end after the events are published (deactivations): users, or null: all. */
  ended: (readonly number[] | null)[];
  /** The forwarded commands that ran (not refused), by their id, with their results. */
  forwarded?: [id: string, data: unknown][];
};

/**
 * How a realm's transactions are committed in the cluster deployment (docs/cluster.md; the
 * replicated log: src/cluster/log-writer.ts). `commit` runs `body` (the batch's commands, each in
 * its savepoint) inside one transaction, sends what it wrote to the log just before the COMMIT (so
 * that the log's round trip overlaps the COMMIT and the read-model refresh), and commits; it
 * throws, having committed nothing, when the transaction or its COMMIT fails or this process may
 * not write the realm. The machine then refreshes the read model at once and answers the commands
 * when `settled` resolves: once the log holds the batch and its events have reached this process's
 * queues (never before: no client sees an event of a write the log might refuse). `settled`
 * rejects, with what to answer every command, when the log does not take it.
 */
export interface CommitStrategy {
  commit(realmId: number, body: () => BatchEffects): Committed;
}

/**
 * What `commit` throws, having committed nothing, when what the batch wrote is too large for the
 * strategy to take in one piece (a cluster's log entry larger than NATS's largest message): the
 * batch's commands run again in two halves, each committed on its own; a command that alone is
 * too large is refused with it (400).
 */
export class BatchTooLargeError extends JsonableError {
  constructor(bytes: number, most: number) {
    super(`This change is too large to be replicated (${bytes} bytes; at most ${most})`, {
      code: 'BAD_REQUEST',
      status: 400,
    });
  }
}

export type Committed = {
  /** Resolves once the batch is in the log and its events were delivered here. */
  readonly settled: Promise<void>;
};

/** The commands waiting for the end of the turn: an immutable list, newest first, and its length. */
export type Pending = {
  readonly env: Envelope;
  readonly prev: Pending | null;
  readonly size: number;
};

export type RealmMachineContext = {
  deps: RealmDeps;
  pending: Pending | null;
  /** When (performance.now()) the last batch began to commit; -Infinity before the first. */
  lastBatchAt: number;
  /** Commands received so far; diagnostic. */
  applied: number;
};

/** Most commands one group commit runs (a bound on the transaction); more run in the next. */
export const MAX_BATCH = 64;

/**
 * Sends in a batch from which commit spacing no longer makes it wait: a commit of one send to 50
 * recipients writes ~129 WAL pages, of eight ~200 (25 a send, docs/benchmarks.md "What a send
 * writes"); past that, waiting buys little and costs every send in the batch its wait.
 */
export const FULL_BATCH = 8;

/**
 * The delay before a batch of `size` commands that starts now commits: 0 (end of turn) unless
 * spacing says wait, and never once the batch is full (FULL_BATCH).
 */
export function batchDelay(spacingMs: number, lastBatchAt: number, now: number, size = 1): number {
  if (!(spacingMs > 0) || size >= FULL_BATCH) return 0;
  return Math.max(0, Math.min(spacingMs, lastBatchAt + spacingMs - now));
}

/** How often (ms) a batch held by the commit hold looks again (the hold ends unannounced). */
export const HOLD_POLL_MS = 1;

/** The delay before a batch due now commits, given the spacing's delay and the commit hold. */
export function heldDelay(spacingDelay: number, holdMs: number): number {
  return holdMs > 0 ? Math.max(spacingDelay, Math.min(holdMs, HOLD_POLL_MS)) : spacingDelay;
}

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
  env: Envelope,
  { events, afterCommit, ended }: Omit<Outcome, 'env' | 'reply'>,
): MutationContext {
  const now = Math.floor(ctx.clock() / 1000);
  return {
    store: ctx.store,
    realm: ctx.view,
    now,
    emit: (event: WireEvent, users: readonly number[], delivery) =>
      void events.push(delivery ? { event, users, ...delivery } : { event, users }),
    afterCommit: (fn) => void afterCommit.push(fn),
    endSessions: (users) => void ended.push(users === 'realm' ? null : users),
    mail: ctx.mail ?? null,
    serviceBots: ctx.serviceBots ?? null,
    audit: (entry) => {
      const row = auditRow(ctx.view.id, now, auditOriginOf(env.payload), entry);
      ctx.store.audit.insert(row);
      afterCommit.push(() => logAudit(row));
    },
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
    const data = ctx.store.transaction(() => {
      const mc = mutationContext(ctx, env, effects);
      const result = mutation(mc, env.payload);
      // An administrative action's audit row, in its own transaction (src/lib/audit.ts).
      const entry = auditEntryFor(env.command, env.payload, result);
      if (entry !== null) mc.audit(entry);
      return result;
    });
    return { env, reply: { ok: true, data }, ...effects };
  } catch (error) {
    return { env, reply: { ok: false, error }, events: [], afterCommit: [], ended: [] };
  }
}

/** The commands' events and ended sessions, in command order (and the forwarded ones that ran). */
function effectsOf(outcomes: readonly Outcome[]): Required<BatchEffects> {
  const events: OutboundEvent[] = [];
  const ended: (readonly number[] | null)[] = [];
  const forwarded: [string, unknown][] = [];
  for (const o of outcomes) {
    for (const e of o.events) events.push(e);
    for (const u of o.ended) ended.push(u);
    if (o.env.forward !== undefined && o.reply.ok) forwarded.push([o.env.forward, o.reply.data]);
  }
  return { events, ended, forwarded };
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
function finish(ctx: RealmDeps, outcomes: readonly Outcome[]): void {
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
  replyAll(ctx, outcomes, null);
}

/** Answers every command: with its own outcome, or with `failure` when the batch failed. */
function replyAll(ctx: RealmDeps, outcomes: readonly Outcome[], failure: unknown): void {
  for (const o of outcomes) {
    try {
      o.env.reply(failure === null ? o.reply : { ok: false, error: failure });
    } catch (err) {
      log.error({ err, realmId: ctx.view.id, command: o.env.command }, 'reply failed');
    }
    letGo(o.env);
  }
}

/** What a replied envelope's `reply` becomes. */
const REPLIED = (): void => {};

/**
 * A replied envelope lets go of its command: V8 allocates many envelopes straight into the old
 * generation (the allocation site is pretenured), where a dead one stays until the next
 * old-generation collection and keeps what it points to (the payload, the reply and through it
 * the request's promise) alive through every young collection meanwhile, into the old generation
 * too (docs/benchmarks.md "What a send leaves in the old generation").
 */
function letGo(env: Envelope): void {
  env.payload = undefined;
  env.reply = REPLIED;
}

/** Applies one command in one transaction; delivers its events after COMMIT; always replies. */
function runCommand(ctx: RealmDeps, env: Envelope): void {
  if (ctx.commit) return runCommitted(ctx, ctx.commit, [env]);
  const started = performance.now();
  const outcome = applyOne(ctx, env);
  observeCommit(1, performance.now() - started);
  finish(ctx, [outcome]);
}

/** The commands' outcomes when their transaction failed: each answered with its failure. */
function allFailed(envs: readonly Envelope[], error: unknown): Outcome[] {
  return envs.map((env) => ({
    env,
    reply: { ok: false, error },
    events: [],
    afterCommit: [],
    ended: [],
  }));
}

/**
 * Runs a batch (group commit), MAX_BATCH commands per transaction, one savepoint per command,
 * events and replies after each COMMIT. Always replies to every command.
 */
function runBatch(ctx: RealmDeps, all: readonly Envelope[]): void {
  for (let i = 0; i < all.length; i += MAX_BATCH) {
    const envs = all.slice(i, i + MAX_BATCH);
    if (ctx.commit) {
      runCommitted(ctx, ctx.commit, envs);
      continue;
    }
    let outcomes: Outcome[] = [];
    const started = performance.now();
    try {
      ctx.store.transaction(() => {
        outcomes = envs.map((env) => applyOne(ctx, env));
      });
    } catch (error) {
      // The COMMIT failed: nothing of it was written.
      outcomes = allFailed(envs, error);
    }
    observeCommit(envs.length, performance.now() - started);
    finish(ctx, outcomes);
  }
}

/**
 * One transaction through the commit strategy (cluster): refreshes the read model after its
 * COMMIT, answers once the strategy says the batch is settled (its events delivered).
 */
function runCommitted(ctx: RealmDeps, strategy: CommitStrategy, envs: readonly Envelope[]): void {
  let outcomes: Outcome[] = [];
  const started = performance.now();
  let committed: Committed;
  try {
    committed = strategy.commit(ctx.view.id, () => {
      outcomes = envs.map((env) => applyOne(ctx, env));
      return effectsOf(outcomes);
    });
  } catch (error) {
    if (error instanceof BatchTooLargeError && envs.length > 1) {
      // Nothing was written: the commands run again, half of them in each of two transactions.
      const half = Math.ceil(envs.length / 2);
      runCommitted(ctx, strategy, envs.slice(0, half));
      runCommitted(ctx, strategy, envs.slice(half));
      return;
    }
    // Not committed (its COMMIT failed, or the realm was not this node's to write).
    observeCommit(envs.length, performance.now() - started);
    replyAll(ctx, allFailed(envs, error), null);
    return;
  }
  observeCommit(envs.length, performance.now() - started);
  refreshAll(ctx, outcomes);
  committed.settled.then(
    () => replyAll(ctx, outcomes, null),
    (err: unknown) => replyAll(ctx, outcomes, err),
  );
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
    /**
     * After the current turn of the event loop (the clock runs a delay of 0 in setImmediate), or
     * later under commit spacing.
     */
    endOfTurn: ({ context }) =>
      heldDelay(
        batchDelay(
          context.deps.commitSpacingMs ?? 0,
          context.lastBatchAt,
          performance.now(),
          context.pending?.size ?? 0,
        ),
        context.deps.commitHold?.() ?? 0,
      ),
  },
  guards: {
    held: ({ context }) => (context.deps.commitHold?.() ?? 0) > 0,
    batchable: ({ context, event }) =>
      event.type === 'COMMAND' && context.deps.batchable.has(event.envelope.command),
    /** A batchable command that makes the waiting batch full (FULL_BATCH): due now, not later. */
    fills: ({ context, event }) =>
      event.type === 'COMMAND' &&
      context.deps.batchable.has(event.envelope.command) &&
      (context.pending?.size ?? 0) + 1 === FULL_BATCH &&
      (context.deps.commitSpacingMs ?? 0) > 0,
  },
  actions: {
    count: assign(({ context }) => ({ applied: context.applied + 1 })),
    enqueue: assign(({ context, event }) =>
      event.type === 'COMMAND'
        ? {
            pending: {
              env: event.envelope,
              prev: context.pending,
              size: (context.pending?.size ?? 0) + 1,
            },
          }
        : {},
    ),
    clearBatch: assign({ pending: null }),
    markBatch: assign({ lastBatchAt: () => performance.now() }),
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
  context: ({ input }) => ({ deps: input, pending: null, lastBatchAt: -Infinity, applied: 0 }),
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
            endOfTurn: [
              { guard: 'held', target: 'batching', reenter: true },
              { target: 'idle', actions: ['markBatch', 'commitBatch', 'clearBatch'] },
            ],
          },
          on: {
            COMMAND: [
              // Re-entered: its delay (endOfTurn) is computed again, for a full batch.
              { guard: 'fills', target: 'batching', reenter: true, actions: ['count', 'enqueue'] },
              { guard: 'batchable', actions: ['count', 'enqueue'] },
              {
                target: 'idle',
                actions: ['count', 'markBatch', 'commitBatch', 'clearBatch', 'runOne'],
              },
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
