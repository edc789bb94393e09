/**
 * Events on the wire, serialized once. A committed event becomes one SharedEvent per client variant
 * (see ./filter.ts); every queue that receives it holds a QueuedEvent pointing at that shared
 * serialization plus the few bytes that differ per queue (its `id`, and for messages the
 * recipient's `flags`, `recipient_id` and `local_message_id`). Responses are assembled by
 * concatenation, never by re-serializing the event:
 *
 *   JSON:     shared.open + tail + ',"id":' + id + '}'
 *   msgpack:  map header (n + 1) + shared map body + "id" + id        (no per-queue extras)
 *             pack({...event, ...extras, id})                          (message events)
 *
 * `shared.open` is the event's JSON without its closing brace; for `message` events it stops inside
 * the message object, so the per-queue tail can add `recipient_id` and close it.
 *
 * Bodies as bytes (eventsResponseBytes, what sockets and polls are written): the queues a fan-out
 * reached usually hold the same events under the same ids with the same tails (every subscriber
 * registered alike, most with the same flags), so within one turn of the event loop (a flush, the
 * polls that come in) a body is built and encoded to UTF-8 once and its bytes handed to every
 * consumer whose events are the same, instead of a string per consumer that uWS encodes again for
 * each write.
 *
 * Memory: a SharedEvent and a Tail are held once however many queues hold them; each carries a
 * count of the queue entries pointing at it (`refs`) and its estimated size (`size`), which the
 * queues' memory account (./buffer.ts, QueueMemory) adds when the first entry appears
 * and removes when the last one goes.
 */
import { pack, unpack } from '../lib/pack.js';
import type { WireEvent } from '../lib/events.js';

const SUCCESS_EVENTS_PREFIX = '{"result":"success","msg":"","events":[';
/**
 * Bodies a SharedEvent keeps in a turn, one-event strings and byte bodies each (distinct ids,
 * tails and following events among its recipients' queues).
 */
const SINGLE_BODIES_KEPT = 8;
/**
 * Byte bodies longer than this are not kept for the turn (bodyBytes): one that large is a queue's
 * backlog, rarely another's too, and a flush that answers many backlogs must not hold them all.
 */
const KEPT_BODY_BYTES = 64 * 1024;
/**
 * Byte bodies kept in one turn, in all (bodyBytes): a turn may answer a thousand polls (all the
 * connections ready at once), each with a backlog of its own under 64 KiB, which would all be held
 * until the turn is over where before each was garbage after its write. Past this, bodies are
 * built and not kept (a fan-out's shared bodies are a few KiB each: far below it).
 */
const KEPT_TURN_BYTES = 4 * 1024 * 1024;
/** The bytes of the bodies kept in this turn (bodyBytes), back to 0 when it is over. */
let keptThisTurn = 0;
/** Numbers SharedEvents in the byte bodies' keys (bodyBytes). */
let nextSerial = 0;
/**
 * Events holding what was built from them (bodies, the decoded object, the msgpack body), dropped
 * at the end of the event loop's turn (setImmediate): what a queued event keeps is only what
 * QueueMemory counts for it. A turn, not a callback: the held polls a flush answers and the polls
 * answered as they come in (each its own callback) share one body when their events are the same.
 */
const withBodies: SharedEvent[] = [];

function dropBodies(): void {
  for (const e of withBodies) e.dropBodies();
  withBodies.length = 0;
  keptThisTurn = 0;
}

/** Bytes a held string of n characters may take (V8 stores non-Latin-1 text two bytes each). */
export function heldStringBytes(n: number): number {
  return 2 * n;
}

/** The estimated heap cost of an object holding one string, beyond the string itself. */
const OBJECT_OVERHEAD_BYTES = 64;

export class SharedEvent {
  /** Built in this turn (see withBodies): the event decoded, for msgpack frames. */
  private obj: WireEvent | undefined;
  /** Built in this turn: its msgpack map body. */
  private packed: { body: Buffer; count: number } | undefined;
  /** Whole one-event response bodies built in this turn, by `<id>:<tail>` (see `singleBody`). */
  private bodies: Map<string, string> | undefined;
  /** Response bodies as bytes built in this turn, starting with this event (see `bodyBytes`). */
  private bytes: Map<string, Buffer> | undefined;
  /** This event's number among SharedEvents (in bodyBytes' keys). */
  readonly serial = nextSerial++;
  /** Whether this event is among withBodies (until the turn is over). */
  private held = false;
  /** Queue entries holding this event (see QueueMemory). */
  refs = 0;
  /** Estimated bytes held for this event, counted once however many queues hold it. */
  readonly size: number;

  private constructor(
    readonly type: string,
    /** The JSON of the event without its closing brace (`{"type":"x",...`). */
    readonly open: string,
    /** Whether `open` stops inside the `message` object (openMessage). */
    readonly insideMessage = false,
  ) {
    this.size = heldStringBytes(open.length) + OBJECT_OVERHEAD_BYTES;
  }

  /** A whole event; its JSON is closed by the queue's `,"id":N}`. */
  static of(event: WireEvent): SharedEvent {
    const json = JSON.stringify(event);
    return new SharedEvent(event.type, json.slice(0, -1));
  }

  /**
   * A message event `{type: 'message', message}` left open inside `message` (which must not carry
   * `recipient_id`): the queue's tail adds `recipient_id`, closes the message and adds `flags`.
   */
  static openMessage(message: Record<string, unknown>): SharedEvent {
    const json = JSON.stringify({ type: 'message', message });
    return new SharedEvent('message', json.slice(0, -2), true);
  }

  /** From a stored event body (JSON without `id`), as queues saved by an older version are read. */
  static fromJson(json: string): SharedEvent {
    const obj = JSON.parse(json) as WireEvent;
    return new SharedEvent(String(obj.type), json.slice(0, -1), false);
  }

  /** As saved (./persistence.ts): the same fields, checked. */
  static restore(type: unknown, open: unknown, insideMessage: unknown): SharedEvent {
    if (typeof type !== 'string' || typeof open !== 'string' || !open.startsWith('{')) {
      throw new Error('not a saved event');
    }
    return new SharedEvent(type, open, insideMessage === true);
  }

  /** The event as an object, as JSON would decode it (what msgpack frames carry). */
  object(): WireEvent {
    if (this.obj === undefined) {
      this.obj = JSON.parse(this.open + (this.insideMessage ? '}}' : '}')) as WireEvent;
      this.hold();
    }
    return this.obj;
  }

  /** Keeps what was built from this event until the current turn is over, then drops it. */
  private hold(): void {
    if (this.held) return;
    this.held = true;
    if (withBodies.push(this) === 1) setImmediate(dropBodies);
  }

  /**
   * The GET /events (or WebSocket frame) body carrying only this event with this id and tail.
   * Queues that received the same events hold it under the same id, and most recipients of a
   * message share its flags, so one body serves many consumers of a fan-out: built and flattened
   * once, instead of once per socket or poll. A few bodies are kept until the current turn (the
   * flush that writes them) is over, so they add nothing to what queues hold.
   */
  singleBody(id: number, tail: string): string {
    const key = tail === '' ? String(id) : `${id}:${tail}`;
    let body = this.bodies?.get(key);
    if (body === undefined) {
      body = SUCCESS_EVENTS_PREFIX + this.open + tail + ',"id":' + id + '}]}';
      if (!this.bodies) {
        this.bodies = new Map();
        this.hold();
      }
      if (this.bodies.size >= SINGLE_BODIES_KEPT) this.bodies.clear();
      this.bodies.set(key, body);
    }
    return body;
  }

  /**
   * The GET /events (or WebSocket frame) body for `events`, which start with this event, as UTF-8
   * bytes: built once in a turn for every consumer whose queue holds the same events (the same
   * SharedEvents, ids and tails), like `singleBody`. Kept until the current turn is over.
   */
  bodyBytes(events: readonly QueuedEvent[]): Buffer {
    // Tails and the rest are JSON, which never holds a raw NUL: the key reads back one way only.
    let key = `${events[0]!.id}:${events[0]!.tail}`;
    for (let i = 1; i < events.length; i++) {
      const e = events[i]!;
      key += `\0${e.id}:${e.shared.serial}:${e.tail}`;
    }
    let body = this.bytes?.get(key);
    if (body === undefined) {
      body = Buffer.from(eventsResponseJson(events));
      if (body.length > KEPT_BODY_BYTES || keptThisTurn + body.length > KEPT_TURN_BYTES) {
        return body;
      }
      keptThisTurn += body.length;
      if (!this.bytes) {
        this.bytes = new Map();
        this.hold();
      }
      if (this.bytes.size >= SINGLE_BODIES_KEPT) this.bytes.clear();
      this.bytes.set(key, body);
    }
    return body;
  }

  dropBodies(): void {
    this.bodies = undefined;
    this.bytes = undefined;
    this.obj = undefined;
    this.packed = undefined;
    this.held = false;
  }

  /** The msgpack map body of the event (entries without the map header) and its entry count. */
  packedBody(): { body: Buffer; count: number } {
    if (!this.packed) {
      const whole = pack(this.object());
      const { count, headerLength } = readMapHeader(whole);
      this.packed = { body: whole.subarray(headerLength), count };
      this.hold();
    }
    return this.packed;
  }
}

/**
 * What differs per queue besides the id (message flags, `recipient_id`, `local_message_id`), as
 * JSON to append and as values for msgpack frames; shared by every queue whose copy differs the
 * same way.
 */
export class Tail {
  /** Queue entries holding this tail (see QueueMemory). */
  refs = 0;
  readonly size: number;

  constructor(
    /** JSON appended after `shared.open` (e.g. `,"recipient_id":5},"flags":["read"]`). */
    readonly json: string,
    readonly extra: QueueExtra,
  ) {
    this.size = heldStringBytes(json.length) + 4 * OBJECT_OVERHEAD_BYTES;
  }
}

/** One event of one queue, as responses are built from it. */
export type QueuedEvent = {
  id: number;
  shared: SharedEvent;
  /** JSON appended after `shared.open` (e.g. `,"recipient_id":5},"flags":["read"]`), or ''. */
  tail: string;
  /** The same per-queue additions as values (for msgpack frames), or null when there are none. */
  extra: QueueExtra | null;
};

export type QueueExtra = {
  /** Fields set inside `message` (message events). */
  message?: Record<string, unknown>;
  /** Top-level fields added after the shared ones. */
  top: Record<string, unknown>;
};

/** The event's JSON with its id: what GET /events and WebSocket frames carry. */
export function eventJson(e: QueuedEvent): string {
  return e.shared.open + e.tail + ',"id":' + e.id + '}';
}

/** The event's JSON without `id`, as queues are saved on shutdown. */
export function storedEventJson(e: QueuedEvent): string {
  return e.shared.open + e.tail + '}';
}

/** A GET /events (or WebSocket) body for these events, and the queue id when it was just made. */
export function eventsResponseJson(events: readonly QueuedEvent[], queueId?: string): string {
  if (events.length === 1 && queueId === undefined) {
    const e = events[0]!;
    return e.shared.singleBody(e.id, e.tail);
  }
  let out = SUCCESS_EVENTS_PREFIX;
  for (let i = 0; i < events.length; i++) {
    if (i > 0) out += ',';
    out += eventJson(events[i]!);
  }
  out += ']';
  if (queueId !== undefined) out += ',"queue_id":' + JSON.stringify(queueId);
  return out + '}';
}

/**
 * The same body as eventsResponseJson (without a queue id), as UTF-8 bytes shared by every
 * consumer given the same events in this turn (SharedEvent.bodyBytes): what sockets and polls send.
 */
export function eventsResponseBytes(events: readonly QueuedEvent[]): Buffer {
  if (events.length === 0) return Buffer.from(eventsResponseJson(events));
  return events[0]!.shared.bodyBytes(events);
}

// ---- msgpack --------------------------------------------------------------------------------

const MSGPACK_PREFIX = Buffer.concat([
  Buffer.from([0x83]),
  pack('result'),
  pack('success'),
  pack('msg'),
  pack(''),
  pack('events'),
]);
const ID_KEY = pack('id');

/** The same body as eventsResponseJson, as one MessagePack map. */
export function eventsResponsePacked(events: readonly QueuedEvent[]): Buffer {
  const parts: Buffer[] = [MSGPACK_PREFIX, arrayHeader(events.length)];
  for (const e of events) {
    if (e.extra) {
      parts.push(pack(withExtras(e)));
    } else {
      const { body, count } = e.shared.packedBody();
      parts.push(mapHeader(count + 1), body, ID_KEY, packUint(e.id));
    }
  }
  return Buffer.concat(parts);
}

function withExtras(e: QueuedEvent): Record<string, unknown> {
  const base = e.shared.object();
  const extra = e.extra!;
  const out: Record<string, unknown> = { ...base };
  if (extra.message) out.message = { ...(base.message as object), ...extra.message };
  Object.assign(out, extra.top);
  out.id = e.id;
  return out;
}

export function decodePacked<T = unknown>(buf: Buffer | Uint8Array): T {
  return unpack<T>(buf);
}

function readMapHeader(buf: Buffer): { count: number; headerLength: number } {
  const b = buf[0]!;
  if (b >= 0x80 && b <= 0x8f) return { count: b & 0x0f, headerLength: 1 };
  if (b === 0xde) return { count: buf.readUInt16BE(1), headerLength: 3 };
  if (b === 0xdf) return { count: buf.readUInt32BE(1), headerLength: 5 };
  throw new Error(`not a msgpack map (0x${b.toString(16)})`);
}

/** A msgpack map or array header for `n` entries: fix form, then 16- and 32-bit counts. */
function containerHeader(n: number, fix: number, c16: number, c32: number): Buffer {
  if (n < 16) return Buffer.from([fix | n]);
  if (n < 0x10000) {
    const b = Buffer.alloc(3);
    b[0] = c16;
    b.writeUInt16BE(n, 1);
    return b;
  }
  const b = Buffer.alloc(5);
  b[0] = c32;
  b.writeUInt32BE(n, 1);
  return b;
}

const mapHeader = (n: number): Buffer => containerHeader(n, 0x80, 0xde, 0xdf);
const arrayHeader = (n: number): Buffer => containerHeader(n, 0x90, 0xdc, 0xdd);

function packUint(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  if (n < 0x100) return Buffer.from([0xcc, n]);
  if (n < 0x10000) {
    const b = Buffer.alloc(3);
    b[0] = 0xcd;
    b.writeUInt16BE(n, 1);
    return b;
  }
  if (n < 0x100000000) {
    const b = Buffer.alloc(5);
    b[0] = 0xce;
    b.writeUInt32BE(n, 1);
    return b;
  }
  return pack(n);
}
