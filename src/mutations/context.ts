/**
 * What a mutation may use. Mutations run only inside the realm actor, one at a time, inside one
 * SQLite transaction; they never await. They validate (check*), write through the Store, emit the
 * events the change causes, and register cache refreshes to run after COMMIT.
 */
import type { OutboundEvent, WireEvent } from '../lib/events.js';
import type { RealmView } from '../queries/realm-view.js';
import type { Store } from '../storage/store.js';

export interface MutationContext {
  readonly store: Store;
  readonly realm: RealmView;
  /** UNIX seconds, fixed for the whole mutation. */
  readonly now: number;
  /**
   * Queue an event for the given users; delivered only if the transaction commits. `delivery`
   * carries what `message`/`update_message` events need per recipient (flags, MessageDelivery;
   * see src/lib/events.ts).
   */
  emit(
    event: WireEvent,
    users: readonly number[],
    delivery?: Pick<OutboundEvent, 'flags' | 'message'>,
  ): void;
  /** Run after COMMIT (not after a rollback): refresh the read model from the store. */
  afterCommit(fn: () => void): void;
  /**
   * After COMMIT and the events: end the sessions of deactivated users (or of every user of the
   * realm, 'realm') — their event queues are deleted, held polls answered, sockets closed.
   */
  endSessions(users: readonly number[] | 'realm'): void;
}

/** A mutation: payload in, data out; throws JsonableError to refuse (which rolls back). */
export type Mutation<P, R> = (ctx: MutationContext, payload: P) => R;
