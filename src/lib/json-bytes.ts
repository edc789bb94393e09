/**
 * JSON written straight into bytes: the UTF-8 of `JSON.stringify(value)`, byte for byte, for the
 * values handlers answer with (plain objects and arrays of strings, numbers, booleans and null),
 * without making the text as a JavaScript string first.
 *
 * Why: JSON.stringify builds its text in pieces and then a flat copy of them (a string to be
 * encoded must be flat), so a 50 KB answer (100 messages) made ~100 KB of short-lived heap, the
 * largest share of a message fetch's allocation, and with it the young-generation collections
 * that set the fetch's p99 (docs/benchmarks.md, issue 31 row 7). Here the bytes go into one
 * scratch buffer that is kept between answers, and the caller copies out what it keeps.
 *
 * Anything else JSON.stringify gives meaning to (a `toJSON`, as Dates and Buffers have; class
 * instances, Maps, boxed primitives, BigInts; nesting deeper than MAX_DEPTH, cycles) is not
 * written: `write` answers false and the caller uses JSON.stringify, which gives it its meaning
 * (or throws, as for a cycle).
 */

/** Deeper than this, `write` gives up (a cycle, or an unusual value JSON.stringify should handle). */
const MAX_DEPTH = 64;

/** The scratch buffer's first size, and the size above which it is not kept after an answer. */
const INITIAL_BYTES = 64 * 1024;
const KEPT_BYTES = 1024 * 1024;

/** Characters a string must have escaped or checked before it is written as UTF-8 as it is. */
// eslint-disable-next-line no-control-regex
const NEEDS_CARE = /[\u0000-\u001f"\\\ud800-\udfff]/;

/** Strings up to this length are written a character at a time (shorter than a native call). */
const SHORT_STRING = 48;

const OBJECT_PROTOTYPE = Object.prototype;
const ARRAY_PROTOTYPE = Array.prototype;

/**
 * An object that writes its own JSON (a `[WRITE_JSON](writer)` method): what it writes must be
 * exactly JSON.stringify's text of it, which its `toJSON` gives (src/queries/message-fetch.ts
 * FetchedMessages: a fetch's messages written from their rows, without an object per message).
 */
export const WRITE_JSON = Symbol('write JSON');

export type JsonWritable = { [WRITE_JSON](writer: JsonWriter): void; toJSON(): unknown };

/** Whether one of `data`'s own fields writes its own JSON (a value the byte path is made for). */
export function hasWritableField(data: object): boolean {
  for (const key in data) {
    const v = (data as Record<string, unknown>)[key];
    if (
      typeof v === 'object' &&
      v !== null &&
      typeof (v as Partial<JsonWritable>)[WRITE_JSON] === 'function'
    )
      return true;
  }
  return false;
}

/** Thrown inside the writer for a value it leaves to JSON.stringify (one object, made once). */
class NotPlain extends Error {}
const NOT_PLAIN = new NotPlain('a value left to JSON.stringify');

/**
 * A reusable writer. `write(value, at)` writes value's JSON into `buf` from byte `at` (the bytes
 * before it are the caller's: a prefix it fills in) and returns whether it could; the JSON ends at
 * `pos`. The buffer is the writer's: what the caller keeps, it copies out before the next write.
 */
export class JsonWriter {
  buf: Buffer = Buffer.allocUnsafe(INITIAL_BYTES);
  pos = 0;

  /** Writes `value`'s JSON from byte `at`; false when it is not a value this writer takes. */
  write(value: unknown, at: number): boolean {
    this.pos = at;
    this.room(0);
    try {
      // JSON.stringify(undefined) and of a function or symbol is no text at all.
      if (value === undefined || typeof value === 'function' || typeof value === 'symbol')
        return false;
      this.value(value, 0);
      return true;
    } catch (err) {
      if (err === NOT_PLAIN) return false;
      throw err;
    }
  }

  /** Copies the bytes from `from` to `pos` into a Buffer of their own, and lets a huge scratch go. */
  take(from: number): Buffer {
    const out = Buffer.allocUnsafe(this.pos - from);
    this.buf.copy(out, 0, from, this.pos);
    if (this.buf.length > KEPT_BYTES) this.buf = Buffer.allocUnsafe(INITIAL_BYTES);
    return out;
  }

  /** Makes room for `n` more bytes after `pos`. */
  private room(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  // ---- for a WRITE_JSON method ----

  /** Any value JSON.stringify would write (not undefined, a function or a symbol). */
  writeValue(v: unknown): void {
    this.value(v, 0);
  }

  /** Text that is JSON as it is and ASCII: punctuation, keys known to need no escaping. */
  writeAscii(s: string): void {
    this.ascii(s);
  }

  /** Writes again the bytes this writer wrote from `start` to `end` (of the value it writes). */
  writeAgain(start: number, end: number): void {
    const n = end - start;
    this.room(n);
    this.buf.copyWithin(this.pos, start, end);
    this.pos += n;
  }

  private value(v: unknown, depth: number): void {
    switch (typeof v) {
      case 'string':
        this.string(v);
        return;
      case 'number':
        this.number(v);
        return;
      case 'boolean':
        this.ascii(v ? 'true' : 'false');
        return;
      case 'object':
        if (v === null) this.ascii('null');
        else if (Array.isArray(v)) this.array(v, depth + 1);
        else this.object(v, depth + 1);
        return;
      default:
        // bigint (JSON.stringify throws), or undefined/function/symbol where the caller did not
        // handle them: not here.
        throw NOT_PLAIN;
    }
  }

  private array(a: unknown[], depth: number): void {
    if (depth > MAX_DEPTH || Object.getPrototypeOf(a) !== ARRAY_PROTOTYPE) throw NOT_PLAIN;
    this.byte(0x5b); // [
    const n = a.length;
    for (let i = 0; i < n; i++) {
      if (i > 0) this.byte(0x2c); // ,
      const item = a[i];
      // In an array, what JSON has no text for is null (holes included).
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol')
        this.ascii('null');
      else this.value(item, depth);
    }
    this.byte(0x5d); // ]
  }

  private object(o: object, depth: number): void {
    const own = (o as Partial<JsonWritable>)[WRITE_JSON];
    if (typeof own === 'function') {
      own.call(o, this);
      return;
    }
    const proto: unknown = Object.getPrototypeOf(o);
    if (depth > MAX_DEPTH || (proto !== OBJECT_PROTOTYPE && proto !== null)) throw NOT_PLAIN;
    if (typeof (o as { toJSON?: unknown }).toJSON === 'function') throw NOT_PLAIN;
    this.byte(0x7b); // {
    let first = true;
    // for…in: own enumerable string keys in JSON.stringify's order (integer-like keys first, then
    // the others as they were added); the prototypes checked above add none.
    for (const key in o) {
      const item = (o as Record<string, unknown>)[key];
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      if (!first) this.byte(0x2c); // ,
      first = false;
      this.string(key);
      this.byte(0x3a); // :
      this.value(item, depth);
    }
    this.byte(0x7d); // }
  }

  private number(n: number): void {
    if (n >= 0 && n <= 0x7fffffff && (n | 0) === n) {
      // A small non-negative integer (ids, timestamps; -0 included: "0", as JSON.stringify
      // writes it): its digits, in int32 arithmetic.
      let x = n | 0;
      let digits = 1;
      for (let t = 10; digits < 10 && x >= t; t *= 10) digits++;
      this.room(digits);
      const b = this.buf;
      let end = this.pos + digits;
      this.pos = end;
      do {
        b[--end] = 0x30 + (x % 10);
        x = (x / 10) | 0;
      } while (x > 0);
      return;
    }
    // Anything else as JavaScript writes numbers, which JSON.stringify does (null if not finite).
    this.ascii(Number.isFinite(n) ? String(n) : 'null');
  }

  /** A string of ASCII characters that need no escaping (literals, number text). */
  private ascii(s: string): void {
    const n = s.length;
    this.room(n);
    const b = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) b[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  private byte(c: number): void {
    if (this.pos >= this.buf.length) this.room(1);
    this.buf[this.pos++] = c;
  }

  private string(s: string): void {
    const n = s.length;
    // The most a UTF-16 unit takes: 6 bytes (an escape \u001f), 3 as UTF-8; and the quotes.
    this.room(6 * n + 2);
    const b = this.buf;
    const start = this.pos;
    let p = start;
    b[p++] = 0x22; // "
    if (n <= SHORT_STRING) {
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c < 0x20 || c === 0x22 || c === 0x5c || c >= 0x80) break;
        b[p++] = c;
      }
      if (i === n) {
        b[p++] = 0x22;
        this.pos = p;
        return;
      }
      p = start + 1; // not plain ASCII: written again below
    }
    if (NEEDS_CARE.test(s)) {
      // Escapes (and lone surrogates, which JSON.stringify writes as \udXXX): its own text.
      this.pos = start + b.write(JSON.stringify(s), start, 'utf8');
      return;
    }
    p += b.write(s, p, 'utf8');
    b[p++] = 0x22;
    this.pos = p;
  }
}

const shared = new JsonWriter();

/**
 * `JSON.stringify(value)` as UTF-8 bytes, written after `prefix` (ASCII), or null when `value` is
 * not one the writer takes (see above): the caller then uses JSON.stringify.
 */
export function jsonBytes(value: unknown, prefix = ''): Buffer | null {
  if (!shared.write(value, prefix.length)) return null;
  shared.buf.write(prefix, 0, 'latin1');
  return shared.take(0);
}

/** The writer shared by the responder (src/http/respond.ts), for callers that fill a prefix. */
export function sharedJsonWriter(): JsonWriter {
  return shared;
}
