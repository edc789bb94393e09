/**
 * Gzip answers assembled from parts (RFC 1952, one member; RFC 1951 blocks), for the answers
 * `successBody` builds around large shared serialized parts, which their caches mark
 * (src/lib/shared-parts.ts): a large realm's presence snapshot (every client asks for it every
 * minute: tens of megabytes a second at 5,000 users), and the register snapshot's user lists
 * (megabytes at 10,000 users). Clients send `Accept-Encoding: gzip` (the Python bindings, the
 * mobile and web apps, every HTTP library); the reference's own deployments gzip in nginx.
 *
 * A shared part is compressed once, off the main thread (zlib's thread pool), in segments whose
 * compressed blocks are reused by every answer that carries the part or a view of it (a member's
 * register splices their own entry into the lists); the small per-answer parts, and a view's
 * partial segments at either end, go in stored (uncompressed) blocks, so an answer costs no
 * compression at all. Until a shared part's compression is done, answers carrying it go out
 * uncompressed. The member's CRC-32 is combined from the parts' own (crc32Combine), so the shared
 * bytes are not read again per answer.
 *
 * The content coding of every compressed answer (these, ./compress.ts's, the web app's files) is
 * chosen here from the request's Accept-Encoding (chooseEncoding).
 */
import zlib from 'node:zlib';
import { sharedOrigin } from '../lib/shared-parts.js';

/**
 * The content coding to answer with (RFC 9110 §12.5.3, with q-values): br or gzip when `available`
 * and the client weighs it above zero, the heavier one (br on a tie); null for none. A coding named
 * twice counts at its highest weight; a malformed q-value accepts nothing.
 */
export function chooseEncoding(
  acceptEncoding: string,
  available: { br: boolean; gzip: boolean },
): 'br' | 'gzip' | null {
  if (acceptEncoding === '') return null;
  const weights = new Map<string, number>();
  for (const item of acceptEncoding.split(',')) {
    const [name, ...params] = item.split(';');
    const coding = name!.trim().toLowerCase();
    if (coding === '') continue;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*(.*?)\s*$/i.exec(p);
      // A q-value is 0 to 1 with at most three decimals.
      if (m) q = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(m[1]!) ? Number(m[1]) : 0;
    }
    const key = coding === 'x-gzip' ? 'gzip' : coding;
    weights.set(key, Math.max(weights.get(key) ?? 0, q));
  }
  const weight = (c: string) => weights.get(c) ?? weights.get('*') ?? 0;
  const br = available.br ? weight('br') : 0;
  const gzip = available.gzip ? weight('gzip') : 0;
  if (br > 0 && br >= gzip) return 'br';
  if (gzip > 0) return 'gzip';
  return null;
}

const GZIP_ONLY = { br: false, gzip: true };

/** Whether an Accept-Encoding header value accepts gzip. */
export function acceptsGzip(header: string): boolean {
  return chooseEncoding(header, GZIP_ONLY) !== null;
}

// ---- CRC-32 arithmetic (the reflected polynomial 0xedb88320, as gzip's) ----------------------

/** a·b modulo the CRC polynomial, both as reflected 32-bit polynomials. */
function multModP(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = b & 1 ? (b >>> 1) ^ 0xedb88320 : b >>> 1;
  }
  return p >>> 0;
}

/** X_POW_2K[k] = x^(2^k) modulo the polynomial. */
const X_POW_2K: number[] = (() => {
  const table: number[] = [];
  let p = 0x40000000; // x^1
  table.push(p);
  for (let k = 1; k < 32; k++) table.push((p = multModP(p, p)));
  return table;
})();

/** x^(n·2^k) modulo the polynomial. */
function xPowModP(n: number, k: number): number {
  let p = 0x80000000; // x^0
  while (n > 0) {
    if (n & 1) p = multModP(X_POW_2K[k & 31]!, p);
    n = Math.floor(n / 2);
    k++;
  }
  return p;
}

/** The CRC-32 of A followed by B, from crc(A), crc(B) and B's length. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  return (multModP(xPowModP(lengthB, 3), crcA) ^ crcB) >>> 0;
}

// ---- shared parts, compressed once ------------------------------------------------------------

/**
 * A shared part is compressed in segments of this many bytes, each ending in a full flush (no
 * reference to an earlier one), so that an answer carrying only a view of the part (an answer's
 * own splice) reuses every whole segment the view covers and stores just its two partial ends.
 * Deflate's window is 32 KiB, so cutting there costs little of the ratio.
 */
export const SEGMENT = 32 * 1024;

type Segment = { deflated: Buffer; crc: number };
type Compressed = { segments: Segment[] | null };

/** Shared parts (by identity) and their compression, under way (`segments` null) or done. */
const compressedParts = new WeakMap<Buffer, Compressed>();

/** How many parts are being compressed: bounded (each holds its input and zlib's state). */
let compressing = 0;
const MAX_COMPRESSING = 4;

/** The compressed segments of a shared part, or null while they are not ready (started here). */
function compressedPart(part: Buffer): Segment[] | null {
  const known = compressedParts.get(part);
  if (known) return known.segments;
  if (compressing >= MAX_COMPRESSING || typeof zlib.crc32 !== 'function') return null;
  const entry: Compressed = { segments: null };
  compressedParts.set(part, entry);
  compressing++;
  const count = Math.ceil(part.length / SEGMENT);
  const segments: Segment[] = new Array<Segment>(count);
  let pending = count;
  let failed = false;
  for (let i = 0; i < count; i++) {
    const piece = part.subarray(i * SEGMENT, (i + 1) * SEGMENT);
    const crc = zlib.crc32(piece);
    // Full flush: the blocks end on a byte boundary, without the final bit, so that more blocks
    // (the next segment, the answer's next parts) can follow them in the same member.
    zlib.deflateRaw(piece, { level: 6, finishFlush: zlib.constants.Z_FULL_FLUSH }, (err, out) => {
      if (err) failed = true;
      else segments[i] = { deflated: out, crc };
      if (--pending > 0) return;
      compressing--;
      if (failed) compressedParts.delete(part);
      else entry.segments = segments;
    });
  }
  return null;
}

/**
 * A shared part's size once compressed (its segments' deflated bytes), or null until its
 * compression is done (started here if it was not): what the part costs a client taking gzip.
 */
export function compressedSize(part: Buffer): number | null {
  const segments = compressedPart(part);
  return segments === null ? null : segments.reduce((n, s) => n + s.deflated.length, 0);
}

// ---- assembling a member ----------------------------------------------------------------------

/** The member header: deflate, no name or time, unknown OS. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
const MAX_STORED = 0xffff;

/** Stored blocks holding `data` (the last one final when `last`). */
function storedBlocks(data: Buffer, last: boolean, out: Buffer[]): void {
  let offset = 0;
  do {
    const n = Math.min(MAX_STORED, data.length - offset);
    const final = last && offset + n === data.length;
    const head = Buffer.allocUnsafe(5);
    head[0] = final ? 1 : 0; // BFINAL, BTYPE 00 (stored), padded to the byte
    head.writeUInt16LE(n, 1);
    head.writeUInt16LE(~n & 0xffff, 3);
    out.push(head, data.subarray(offset, offset + n));
    offset += n;
  } while (offset < data.length);
}

/** Whether an answer in parts carries a shared part or a view of one (and so may go gzipped). */
export function hasSharedPart(parts: readonly Buffer[]): boolean {
  return parts.some((p) => p.length > 0 && sharedOrigin(p) !== null);
}

/** A part of the answer that lies in a shared part: its compressed segments and where it lies. */
type SharedPiece = { segments: Segment[]; offset: number; size: number };

/**
 * `parts` (an answer's body, in order) as one gzip member, or null when it carries nothing of a
 * shared part (nothing to gain) or a shared part's compression is not ready yet (the answer then
 * goes out as it is). The whole segments of shared parts (src/lib/shared-parts.ts) that the
 * answer carries are the ones compressed once; everything else is stored.
 */
export function gzipParts(parts: readonly Buffer[]): Buffer[] | null {
  const shared: (SharedPiece | null)[] = [];
  let any = false;
  for (const part of parts) {
    const from = part.length > 0 ? sharedOrigin(part) : null;
    if (!from) {
      shared.push(null);
      continue;
    }
    const segments = compressedPart(from.origin);
    if (!segments) return null;
    shared.push({ segments, offset: from.offset, size: from.origin.length });
    any = true;
  }
  if (!any) return null;
  const out: Buffer[] = [GZIP_HEADER];
  let crc = 0;
  let length = 0;
  const stored = (data: Buffer): void => {
    if (data.length === 0) return;
    storedBlocks(data, false, out);
    crc = zlib.crc32(data, crc);
  };
  parts.forEach((part, i) => {
    const piece = shared[i];
    length += part.length;
    if (!piece) {
      stored(part);
      return;
    }
    // The view [offset, end) of its shared part: the segments it covers whole from the compressed
    // ones, the partial ones at either end stored.
    const end = piece.offset + part.length;
    for (let s = Math.floor(piece.offset / SEGMENT); s * SEGMENT < end; s++) {
      const segStart = s * SEGMENT;
      const segEnd = Math.min(segStart + SEGMENT, piece.size);
      const from = Math.max(piece.offset, segStart);
      const to = Math.min(end, segEnd);
      if (from === segStart && to === segEnd) {
        out.push(piece.segments[s]!.deflated);
        crc = crc32Combine(crc, piece.segments[s]!.crc, to - from);
      } else stored(part.subarray(from - piece.offset, to - piece.offset));
    }
  });
  // The final block: empty and stored.
  storedBlocks(Buffer.alloc(0), true, out);
  const trailer = Buffer.allocUnsafe(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(length % 2 ** 32, 4);
  out.push(trailer);
  return out;
}
