/**
 * What one registered queue accepts, and the form each event takes for it. Pure functions over the
 * queue's registration (event types, narrow, apply_markdown, client_extavatar, slim_presence,
 * all_public_streams, client_capabilities); the fan-out (./fanout.ts) calls them. The
 * rules are listed in src/lib/events.ts; the reference's are in its ClientDescriptor.accepts_event
 * and process_*_event.
 *
 * Variants: queues differ in a few booleans that change payloads. Each queue gets a `bits` number
 * of them; for each event type only some bits matter (VARIANT_MASK), so an event is adapted and
 * serialized once per distinct `bits & mask` — usually once in total.
 */
import { EMPTY_TOPIC_DISPLAY_NAME, type WireEvent } from '../lib/events.js';
import { narrowMatches, type NarrowTerm } from '../lib/narrow.js';
import { EXTRA_EMOJI_TYPE, emojisetOut, reactionTypeOut, type Dialect } from '../lib/wire-names.js';

/** The client_capabilities of POST /register (missing keys are false). */
export type ClientCapabilities = {
  notification_settings_null: boolean;
  bulk_message_deletion: boolean;
  user_avatar_url_field_optional: boolean;
  stream_typing_notifications: boolean;
  user_settings_object: boolean;
  linkifier_url_template: boolean;
  user_list_incomplete: boolean;
  include_deactivated_groups: boolean;
  archived_channels: boolean;
  empty_topic_name: boolean;
  simplified_presence_events: boolean;
};

export const CAPABILITY_NAMES = [
  'notification_settings_null',
  'bulk_message_deletion',
  'user_avatar_url_field_optional',
  'stream_typing_notifications',
  'user_settings_object',
  'linkifier_url_template',
  'user_list_incomplete',
  'include_deactivated_groups',
  'archived_channels',
  'empty_topic_name',
  'simplified_presence_events',
] as const satisfies readonly (keyof ClientCapabilities)[];

export function capabilitiesFrom(raw: Partial<Record<string, boolean>>): ClientCapabilities {
  const out = {} as ClientCapabilities;
  for (const name of CAPABILITY_NAMES) out[name] = raw[name] === true;
  return out;
}

/** A queue's registration, as saved across restarts. */
export type QueueSettings = {
  userId: number;
  realmId: number;
  /** null: every type. */
  eventTypes: string[] | null;
  applyMarkdown: boolean;
  clientExtAvatar: boolean;
  slimPresence: boolean;
  allPublicStreams: boolean;
  narrow: NarrowTerm[];
  capabilities: ClientCapabilities;
  /** Idle lifetime asked for at registration (queue_lifespan_secs), in ms; null: the server's. */
  lifespanMs: number | null;
  /**
   * The registering client's spelling of single-spelling values (src/lib/wire-names.ts), kept
   * for the queue's life, restarts included. Absent in queues saved before it existed: `spec`.
   */
  dialect?: Dialect;
};

export const VARIANT = {
  MARKDOWN: 1,
  EXTAVATAR: 2,
  EMPTY_TOPIC: 4,
  BULK_DELETE: 8,
  SLIM_PRESENCE: 16,
  /** The reference's spelling of reaction types and emoji sets (src/lib/wire-names.ts). */
  REFERENCE: 32,
} as const;

const TOPIC = VARIANT.EMPTY_TOPIC;
/** Which variant bits change each event type's payload (absent: none). */
export const VARIANT_MASK: Readonly<Record<string, number>> = {
  message: VARIANT.MARKDOWN | VARIANT.EXTAVATAR | TOPIC,
  delete_message: TOPIC | VARIANT.BULK_DELETE,
  typing: TOPIC,
  user_topic: TOPIC,
  update_message: TOPIC,
  update_message_flags: TOPIC,
  presence: VARIANT.SLIM_PRESENCE,
  reaction: VARIANT.REFERENCE,
  user_status: VARIANT.REFERENCE,
  user_settings: VARIANT.REFERENCE,
  update_display_settings: VARIANT.REFERENCE,
  realm_user_settings_defaults: VARIANT.REFERENCE,
};

export class QueueFilter {
  readonly types: ReadonlySet<string> | null;
  readonly bits: number;
  readonly narrow: readonly NarrowTerm[];
  readonly caps: ClientCapabilities;
  readonly allPublicStreams: boolean;

  constructor(s: QueueSettings) {
    this.types = s.eventTypes ? new Set(s.eventTypes) : null;
    this.narrow = s.narrow;
    this.caps = s.capabilities;
    this.allPublicStreams = s.allPublicStreams;
    this.bits =
      (s.applyMarkdown ? VARIANT.MARKDOWN : 0) |
      (s.clientExtAvatar ? VARIANT.EXTAVATAR : 0) |
      (s.capabilities.empty_topic_name ? VARIANT.EMPTY_TOPIC : 0) |
      (s.capabilities.bulk_message_deletion ? VARIANT.BULK_DELETE : 0) |
      (s.slimPresence ? VARIANT.SLIM_PRESENCE : 0) |
      (s.dialect === 'reference' ? VARIANT.REFERENCE : 0);
  }

  wantsType(type: string): boolean {
    return this.types === null || this.types.has(type);
  }

  /** Whether the queue wants `message` events at all (before the narrow). */
  get wantsMessages(): boolean {
    return this.wantsType('message');
  }

  /**
   * Whether this queue receives an event (other than `message`, which also goes through the
   * narrow: see messageVariant / narrowMatches).
   */
  accepts(event: WireEvent): boolean {
    const type = event.type;
    if (this.types !== null) {
      if (!this.types.has(type)) return false;
      // A client asking for both gets user_topic only (muted_topics is its legacy twin).
      if (type === 'muted_topics' && this.types.has('user_topic')) return false;
    }
    switch (type) {
      case 'typing':
        if (event.message_type === 'stream' || 'stream_id' in event) {
          return this.caps.stream_typing_notifications;
        }
        return true;
      case 'update_display_settings':
      case 'update_global_notifications':
        return !this.caps.user_settings_object;
      case 'realm_linkifiers':
        return this.caps.linkifier_url_template;
      case 'realm_user':
        return !(
          event.op === 'add' &&
          event.inaccessible_user === true &&
          this.caps.user_list_incomplete
        );
      case 'user_group':
        if (event.op === 'remove') return !this.caps.include_deactivated_groups;
        if (
          event.op === 'update' &&
          ((isObject(event.data) && 'deactivated' in event.data) || event.deactivated === true)
        ) {
          return this.caps.include_deactivated_groups;
        }
        return true;
      case 'stream':
        // Archiving and unarchiving: clients that know archived channels see the channel change
        // (`update` of `is_archived`); the others see it disappear and come back.
        if (event.op === 'update' && event.property === 'is_archived') {
          return this.caps.archived_channels;
        }
        if (event.op === 'delete' && event.for_archiving === true) {
          return !this.caps.archived_channels;
        }
        if (event.op === 'create' && event.for_unarchiving === true) {
          return !this.caps.archived_channels;
        }
        return true;
      default:
        return true;
    }
  }

  narrowAccepts(message: Record<string, unknown>, flags: readonly string[]): boolean {
    return (
      this.narrow.length === 0 || narrowMatches(this.narrow, message as { type: string }, flags)
    );
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

function displayTopic(topic: unknown, bits: number): unknown {
  return topic === '' && (bits & VARIANT.EMPTY_TOPIC) === 0 ? EMPTY_TOPIC_DISPLAY_NAME : topic;
}

/**
 * The wire events (zero, one or several) a non-message event becomes for queues of variant `bits`
 * (already masked with VARIANT_MASK of its type). Never mutates `event`.
 */
export function adaptEvent(event: WireEvent, bits: number): WireEvent[] {
  switch (event.type) {
    case 'delete_message': {
      const base: WireEvent =
        'topic' in event ? { ...event, topic: displayTopic(event.topic, bits) } : event;
      if (bits & VARIANT.BULK_DELETE) return [base];
      const ids = Array.isArray(base.message_ids) ? (base.message_ids as unknown[]) : [];
      return ids.map((id) => {
        const { message_ids: _ids, ...rest } = base;
        return { ...rest, message_id: id };
      });
    }
    case 'typing':
      return ['topic' in event ? { ...event, topic: displayTopic(event.topic, bits) } : event];
    case 'user_topic':
      return [{ ...event, topic_name: displayTopic(event.topic_name, bits) }];
    case 'update_message': {
      const out: WireEvent = { ...event };
      if ('subject' in out) out.subject = displayTopic(out.subject, bits);
      if ('orig_subject' in out) out.orig_subject = displayTopic(out.orig_subject, bits);
      return [out];
    }
    case 'update_message_flags': {
      if (!isObject(event.message_details) || bits & VARIANT.EMPTY_TOPIC) return [event];
      const details: Record<string, unknown> = {};
      for (const [id, d] of Object.entries(event.message_details)) {
        details[id] =
          isObject(d) && d.type === 'stream' && d.topic === ''
            ? { ...d, topic: EMPTY_TOPIC_DISPLAY_NAME }
            : d;
      }
      return [{ ...event, message_details: details }];
    }
    case 'reaction':
    case 'user_status':
      if (bits & VARIANT.REFERENCE && event.reaction_type === EXTRA_EMOJI_TYPE) {
        return [{ ...event, reaction_type: reactionTypeOut(EXTRA_EMOJI_TYPE, 'reference') }];
      }
      return [event];
    case 'user_settings':
    case 'realm_user_settings_defaults':
      if (bits & VARIANT.REFERENCE && event.property === 'emojiset') {
        return [{ ...event, value: emojisetOut(String(event.value), 'reference') }];
      }
      return [event];
    case 'update_display_settings':
      if (bits & VARIANT.REFERENCE && event.setting_name === 'emojiset') {
        return [{ ...event, setting: emojisetOut(String(event.setting), 'reference') }];
      }
      return [event];
    case 'presence': {
      if (!(bits & VARIANT.SLIM_PRESENCE)) return [event];
      const { email: _email, ...slim } = event;
      return [slim];
    }
    case 'realm_user': {
      if (!('inaccessible_user' in event)) return [event];
      const { inaccessible_user: _marker, ...rest } = event;
      return [rest];
    }
    case 'stream': {
      if (!('for_archiving' in event) && !('for_unarchiving' in event)) return [event];
      const { for_archiving: _a, for_unarchiving: _u, ...rest } = event;
      return [rest];
    }
    case 'user_group': {
      if (!('deactivated' in event)) return [event];
      const { deactivated: _marker, ...rest } = event;
      return [rest];
    }
    default:
      return [event];
  }
}

/**
 * A message object as queues of variant `bits` see it (see MessageDelivery in events.ts), without
 * `recipient_id` (added per queue).
 */
export function messageVariant(
  message: Record<string, unknown>,
  bits: number,
  rawContent: string,
  senderAvatarIsExternal: boolean,
): Record<string, unknown> {
  const { recipient_id: _r, ...out } = message;
  if (!(bits & VARIANT.MARKDOWN)) {
    out.content = rawContent;
    out.content_type = 'text/x-markdown';
  }
  if (bits & VARIANT.EXTAVATAR && senderAvatarIsExternal) out.avatar_url = null;
  if (out.type === 'stream') out.subject = displayTopic(out.subject, bits);
  return out;
}
