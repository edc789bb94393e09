/**
 * The event WebSocket's frames (protocol in docs/events.md), apart from any socket: the
 * subprotocol a client's offer selects, the frame carrying events (a GET /events body, JSON or
 * MessagePack: ./wire.ts), and the acknowledgement frames a client sends, `{"last_event_id": N}`,
 * with the error frame answering a bad one. The socket itself is src/http/socket.ts.
 */
import { z } from 'zod';
import { JsonableError } from '../lib/errors.js';
import { pack } from '../lib/pack.js';
import {
  decodePacked,
  eventsResponseBytes,
  eventsResponsePacked,
  type QueuedEvent,
} from './wire.js';

/** How a socket's frames are encoded: JSON text frames, or MessagePack binary frames. */
export type FrameFormat = 'json' | 'msgpack';

/** Picks the subprotocol from the client's offer: msgpack, else json, else none (JSON frames). */
export function chooseSubprotocol(offer: string): FrameFormat | '' | null {
  const offered = offer
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (offered.length === 0) return '';
  if (offered.includes('msgpack')) return 'msgpack';
  if (offered.includes('json')) return 'json';
  return null;
}

/**
 * The frame carrying these events, in the socket's format (JSON: the bytes every socket given the
 * same events in this turn shares, sent as a text frame).
 */
export function eventsFrame(format: FrameFormat, events: readonly QueuedEvent[]): Buffer {
  return format === 'msgpack' ? eventsResponsePacked(events) : eventsResponseBytes(events);
}

const AckFrame = z.object({ last_event_id: z.number().int() });

/**
 * The id a client's frame acknowledges (every frame is an acknowledgement). The plain JSON form is
 * read without a parser; anything else goes through the full validation, which throws a
 * JsonableError for a frame that is not one.
 */
export function readAck(message: Uint8Array, isBinary: boolean, format: FrameFormat): number {
  const plain = isBinary ? null : plainAck(message);
  if (plain !== null) return plain;
  const parsed = AckFrame.safeParse(parseFrame(message, isBinary, format));
  if (!parsed.success) {
    throw new JsonableError('An acknowledgement frame is {"last_event_id": <integer>}');
  }
  return parsed.data.last_event_id;
}

/** The frame answering a frame that was refused (readAck, or the acknowledgement itself). */
export function errorFrame(format: FrameFormat, err: unknown): string | Buffer {
  const body =
    err instanceof JsonableError
      ? err.toBody()
      : { result: 'error', msg: 'Invalid frame', code: 'BAD_REQUEST' };
  return format === 'msgpack' ? pack(body) : JSON.stringify(body);
}

const ACK_KEY = Buffer.from('"last_event_id"');
const isSpace = (b: number | undefined) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/**
 * The id of a text frame that is exactly `{"last_event_id": N}` (JSON whitespace allowed, N an
 * integer of at most 15 digits), else null. Read from uWS's bytes in place: no copy, no string.
 */
export function plainAck(b: Uint8Array): number | null {
  const n = b.byteLength;
  if (n > 64) return null;
  let i = 0;
  while (isSpace(b[i])) i++;
  if (b[i++] !== 0x7b) return null; // {
  while (isSpace(b[i])) i++;
  for (let k = 0; k < ACK_KEY.length; k++) if (b[i++] !== ACK_KEY[k]) return null;
  while (isSpace(b[i])) i++;
  if (b[i++] !== 0x3a) return null; // :
  while (isSpace(b[i])) i++;
  const negative = b[i] === 0x2d; // -
  if (negative) i++;
  let value = 0;
  let digits = 0;
  for (let c = b[i]; c !== undefined && c >= 0x30 && c <= 0x39; c = b[++i]) {
    value = value * 10 + (c - 0x30);
    digits++;
  }
  if (digits === 0 || digits > 15) return null;
  while (isSpace(b[i])) i++;
  if (b[i++] !== 0x7d) return null; // }
  while (isSpace(b[i])) i++;
  if (i !== n) return null;
  return negative ? -value : value;
}

function parseFrame(message: Uint8Array, isBinary: boolean, format: FrameFormat): unknown {
  const bytes = Buffer.from(message); // copy: uWS reuses `message`
  if (format === 'msgpack' && isBinary) {
    try {
      return decodePacked(bytes);
    } catch {
      throw new JsonableError('Invalid MessagePack frame');
    }
  }
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    throw new JsonableError('Invalid JSON frame');
  }
}
