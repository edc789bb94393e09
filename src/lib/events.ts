/**
 * Events as mutations produce them: the contract between every area that changes state and the
 * event delivery (src/delivery, its publisher: src/delivery/publisher.ts) that reaches clients.
 *
 * A mutation never talks to queues: it emits OutboundEvents (`ctx.emit`) naming who may see each
 * one, and the realm actor hands them to the EventPublisher only after its transaction has
 * committed (never before, never on rollback). The publisher turns each OutboundEvent into wire
 * JSON once per client variant (below), and appends it to every queue of every listed user whose
 * registration accepts it (`event_types`, `narrow`, capabilities).
 *
 * PRIVACY IS DECIDED HERE, BY THE EMITTER. `users` is the complete list of user ids allowed to
 * receive the event; the publisher never widens it, with exactly one exception that the emitter
 * also controls: a `message` event whose `message.publicChannel` is true also reaches the realm's
 * queues registered with `all_public_streams` (see MessageDelivery). Anything about a private
 * channel, a direct message or a draft must list only the users who may see it.
 *
 * EMIT THE MODERN FORM. Clients registered without a capability get an older form, made by the
 * publisher from the modern one (src/delivery/filter.ts); the emitter never emits per-capability
 * copies except the legacy settings events noted below:
 *
 * | event                                | what the publisher does per queue                        |
 * | ------------------------------------ | -------------------------------------------------------- |
 * | `message`                            | see MessageDelivery: per-recipient `flags`, `apply_markdown`, `client_extavatar`, `local_message_id`, `narrow`, `all_public_streams` |
 * | `delete_message` (emit `message_ids`) | without `bulk_message_deletion`: one event per id, with `message_id` |
 * | `typing` with `message_type: "stream"` | only to queues with `stream_typing_notifications`     |
 * | `user_settings` (op `update`)        | always delivered (when its type is wanted)                |
 * | `update_display_settings`, `update_global_notifications` | emit these legacy twins too; dropped for queues with `user_settings_object` |
 * | `realm_linkifiers`                   | only to queues with `linkifier_url_template` (do not emit `realm_filters`) |
 * | `realm_user` op `add` with `inaccessible_user: true` | the marker is removed; skipped for `user_list_incomplete` queues |
 * | `user_group` op `remove`             | only to queues without `include_deactivated_groups`       |
 * | `user_group` op `update` whose `data` has `deactivated` | only to queues with `include_deactivated_groups` |
 * | `user_group` op `update` marked `deactivated: true` (a change to a deactivated group) | the marker is removed; only to queues with `include_deactivated_groups` |
 * | `stream` op `update`, `property: "is_archived"` | only to queues with `archived_channels`      |
 * | `stream` op `delete` marked `for_archiving: true` | the marker is removed; only to queues without `archived_channels` |
 * | `stream` op `create` marked `for_unarchiving: true` | the marker is removed; only to queues without `archived_channels` |
 * | `presence`                           | `email` removed for `slim_presence` queues                |
 * | any event naming a topic (`message.subject`, `delete_message.topic`, `typing.topic`, `user_topic.topic_name`, `update_message.subject`/`orig_subject`, `update_message_flags.message_details[].topic`) | `""` becomes `realm_empty_topic_display_name` for queues without `empty_topic_name` |
 *
 * `update_message` events carry per-recipient `flags` through OutboundEvent.flags, as `message`
 * events do.
 */

export type WireEvent = { type: string; [field: string]: unknown };

export type OutboundEvent = {
  /** The wire payload without `id` (each queue numbers its own events). */
  event: WireEvent;
  /** Every user allowed to receive it (see PRIVACY above). */
  users: readonly number[];
  /**
   * `message` and `update_message` only: each recipient's message flags (`read`, `mentioned`,
   * `starred`, ...), added to that recipient's copy as `flags`. A listed user without an entry
   * gets `[]`.
   */
  flags?: Readonly<Record<number, readonly string[]>>;
  /** `message` only: the delivery facts of a new message. */
  message?: MessageDelivery;
};

/**
 * How a new message reaches queues. The emitter (message sending) builds ONE `message` event and
 * emits it once, with every recipient, their flags and these facts:
 *
 *   ctx.emit({ type: 'message', message: <the message object> },     // no `flags`, no `id`
 *            recipientIds, { flags: { [userId]: [...] }, message: <MessageDelivery> });
 *
 * where the message object is as the API shows it to a client registered with
 * `apply_markdown: true`, `client_extavatar: false` and the `empty_topic_name` capability: `content`
 * is the rendered HTML with `content_type: "text/html"`, `avatar_url` is the sender's full avatar
 * URL, `subject` is the topic as stored (possibly ""), and `recipient_id` is as the sender sees it.
 * The publisher derives each queue's copy from it:
 *
 *   - `flags`: OutboundEvent.flags[user] (the per-recipient UserMessage flags);
 *   - `apply_markdown: false` → `content` = `rawContent`, `content_type` = "text/x-markdown";
 *   - `client_extavatar: true` and `senderAvatarIsExternal` → `avatar_url` = null;
 *   - no `empty_topic_name` capability and `subject` "" → the empty-topic display name;
 *   - `recipientIdFor[user]` replaces `recipient_id` (1:1 direct messages differ per side);
 *   - the queue `senderQueueId` (the sending client's own queue) gets `local_message_id: localId`;
 *   - the register `narrow` of a queue filters message events (and only them);
 *   - `publicChannel`: a message to a public (not invite-only) channel also reaches queues
 *     registered with `all_public_streams` in the same realm whose user is not in `users`, with
 *     flags `[]` — never a private channel's or a direct message's.
 */
export type MessageDelivery = {
  rawContent: string;
  senderAvatarIsExternal: boolean;
  publicChannel: boolean;
  recipientIdFor?: Readonly<Record<number, number>>;
  senderQueueId?: string;
  localId?: string;
};

/** The seam between the realm actor and the event-queue system. */
export interface EventPublisher {
  publish(realmId: number, events: readonly OutboundEvent[]): void;
  /**
   * Resolves once what was published so far has left this process for the queues it does not
   * hold (a cluster node: flushed to NATS, which relays it to the other nodes in order); absent
   * where every queue is local. Endpoints publishing outside the log (typing) answer after it, so
   * a client told "done" polls a queue on another node after the event is on its way there.
   */
  delivered?(): Promise<void>;
  /**
   * After a deactivation committed and its events were published: ends the sessions (event
   * queues, held polls, sockets) of these users of the realm, or of all of them (null).
   */
  endSessions?(realmId: number, userIds: readonly number[] | null): void;
}

/** What clients without the `empty_topic_name` capability see instead of the empty topic. */
export const EMPTY_TOPIC_DISPLAY_NAME = 'general chat';

/**
 * An endpoint's answer (empty unless given), given once the events it published are on their way
 * to every queue (EventPublisher.delivered); at once where every queue is local. Delivery stays
 * best-effort: a failed flush still answers success, as the events were published.
 */
export function answered<T = Record<string, never>>(
  p: EventPublisher,
  answer: T = {} as T,
): T | Promise<T> {
  if (!p.delivered) return answer;
  return p.delivered().then(
    () => answer,
    () => answer,
  );
}
