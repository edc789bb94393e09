/**
 * The realm actor: one xstate machine per realm, through which every change to the realm's data
 * passes. xstate's mailbox processes one event completely before the next, and `runCommand` is
 * synchronous, so mutations of a realm are applied strictly one at a time, in arrival order, each
 * inside one SQLite transaction — no locks needed.
 *
 * States: `open` runs commands; `closed` (after shutdown or realm removal) refuses them.
 *
 * Discipline (xstate v5 stops an actor for good, silently, when an action throws): runCommand
 * catches everything and always replies.
 */
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
  clock: () => number;
  /** Commands applied so far; diagnostic. */
  applied: number;
};

export class RealmClosedError extends JsonableError {
  constructor() {
    super('Server is shutting down', { code: 'BAD_REQUEST', status: 503 });
  }
}

/** Applies one command in one transaction; delivers its events after COMMIT; always replies. */
export function runCommand(ctx: RealmMachineContext, env: Envelope): void {
  const mutation = ctx.commands[env.command] as
    ((c: MutationContext, p: unknown) => unknown) | undefined;
  if (!mutation) {
    env.reply({ ok: false, error: new Error(`unknown realm command ${env.command}`) });
    return;
  }
  const events: OutboundEvent[] = [];
  const afterCommit: (() => void)[] = [];
  const mctx: MutationContext = {
    store: ctx.store,
    realm: ctx.view,
    now: Math.floor(ctx.clock() / 1000),
    emit: (event: WireEvent, users: readonly number[], delivery) =>
      void events.push(delivery ? { event, users, ...delivery } : { event, users }),
    afterCommit: (fn) => void afterCommit.push(fn),
  };
  let reply: Reply;
  try {
    const data = ctx.store.transaction(() => mutation(mctx, env.payload));
    reply = { ok: true, data };
  } catch (error) {
    events.length = 0;
    afterCommit.length = 0;
    reply = { ok: false, error };
  }
  for (const fn of afterCommit) {
    try {
      fn();
    } catch (err) {
      console.error(`realm ${ctx.view.id}: read-model refresh after ${env.command} failed`, err);
    }
  }
  if (events.length > 0) {
    try {
      ctx.publisher.publish(ctx.view.id, events);
    } catch (err) {
      console.error(`realm ${ctx.view.id}: publishing events of ${env.command} failed`, err);
    }
  }
  try {
    env.reply(reply);
  } catch (err) {
    console.error(`realm ${ctx.view.id}: reply to ${env.command} failed`, err);
  }
}

export const realmMachine = setup({
  types: {
    context: {} as RealmMachineContext,
    events: {} as RealmMachineEvent,
    input: {} as Omit<RealmMachineContext, 'applied'>,
  },
  actions: {
    run: assign(({ context, event }) => {
      if (event.type === 'COMMAND') runCommand(context, event.envelope);
      return { applied: context.applied + 1 };
    }),
    refuse: ({ event }) => {
      if (event.type === 'COMMAND')
        event.envelope.reply({ ok: false, error: new RealmClosedError() });
    },
  },
}).createMachine({
  id: 'realm',
  context: ({ input }) => ({ ...input, applied: 0 }),
  initial: 'open',
  states: {
    open: {
      on: {
        COMMAND: { actions: 'run' },
        CLOSE: { target: 'closed' },
      },
    },
    closed: {
      on: {
        COMMAND: { actions: 'refuse' },
      },
    },
  },
});
