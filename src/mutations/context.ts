/**
 * What a mutation may use. Mutations run only inside the realm actor, one at a time, inside one
 * SQLite transaction; they never await. They validate (check*), write through the Store, emit the
 * events the change causes, and register cache refreshes to run after COMMIT.
 */
import type { AuditEntry } from '../lib/audit.js';
import { AccountDeactivatedError } from '../lib/errors.js';
import type { OutboundEvent, WireEvent } from '../lib/events.js';
import type { MailDeps } from '../lib/mail.js';
import type { ServiceBotDeps } from '../lib/bots.js';
import type { RealmView } from '../queries/realm-view.js';
import type { Store } from '../storage/store.js';
import type { UserRow } from '../storage/users.js';

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
  /** Outgoing mail (src/mutations/mail.ts enqueueMail); null: this server sends no mail. */
  readonly mail: MailDeps | null;
  /** Outgoing-webhook bots to call after the commit; null: none are called. */
  readonly serviceBots: ServiceBotDeps | null;
  /**
   * Records an administrative action in the audit log, in this transaction, with the command's
   * origin (src/lib/audit.ts). The commands of AUDITED_COMMANDS are recorded without asking;
   * a mutation calls this for what their table cannot say (the channels a subscription created).
   */
  audit(entry: Pick<AuditEntry, 'event_type'> & Partial<AuditEntry>): void;
}

/** A mutation: payload in, data out; throws JsonableError to refuse (which rolls back). */
export type Mutation<P, R> = (ctx: MutationContext, payload: P) => R;

/**
 * A mutation in its two halves, the reference's check_ and do_ split: `check` refuses (it only reads
 * the read model, the store and the command, and returns what the change needs), then `change`
 * writes and emits. A `do*` function throws only on a broken invariant (a bug), never to refuse.
 */
export function checkThenDo<P, V, R>(
  check: (ctx: MutationContext, payload: P) => V,
  change: (ctx: MutationContext, checked: V) => R,
): Mutation<P, R> {
  return (ctx, payload) => change(ctx, check(ctx, payload));
}

/** The acting user, who must be an active user of this realm (endpoints guarantee it). */
export function actingUser(realm: RealmView, userId: number): UserRow {
  const u = realm.user(userId);
  if (!u || !u.is_active) throw new AccountDeactivatedError();
  return u;
}
