/**
 * Events as mutations produce them. A mutation never talks to queues: it emits OutboundEvents
 * (`ctx.emit`) naming who may see each one, and the realm actor hands them to the EventPublisher
 * only after its transaction has committed (never before, never on rollback).
 *
 * `event` is the wire payload without `id` (each queue numbers its own events). `users` is the
 * complete list of user ids allowed to receive it; privacy is decided here, by the mutation,
 * which has the facts — the publisher only narrows further (event_types, narrow, capabilities).
 */

export type WireEvent = { type: string; [field: string]: unknown };

export type OutboundEvent = {
  event: WireEvent;
  users: readonly number[];
};

/** The seam between the realm actor and the event-queue system. */
export interface EventPublisher {
  publish(realmId: number, events: readonly OutboundEvent[]): void;
}
