/**
 * Serialized JSON kept between answers (the presence snapshot, the register's user lists), marked
 * by the caches that keep it: src/http/gzip.ts compresses such a part once, in segments, and reuses
 * them in every answer carrying the part or a view of it (an answer splices its own entry into a
 * shared list: the views before and after it are still mostly shared segments). A Buffer made for
 * one answer is not marked.
 */

/** Marked parts below this size are not worth compressing apart (they are stored). */
export const SHARED_PART_MIN = 8 * 1024;

const sharedParts = new WeakSet<Buffer>();
/** A marked part by the memory it lies in, to find the part that a view was cut from. */
const byMemory = new WeakMap<ArrayBufferLike, Buffer>();

/** Marks a Buffer as one many answers will carry as it is; returns it. */
export function markShared(part: Buffer): Buffer {
  if (part.length >= SHARED_PART_MIN) {
    sharedParts.add(part);
    byMemory.set(part.buffer, part);
  }
  return part;
}

/** Whether `part` was marked (markShared). */
export function isShared(part: Buffer): boolean {
  return sharedParts.has(part);
}

/** The marked part that `part` is (offset 0) or is a view of, with the view's offset in it. */
export function sharedOrigin(part: Buffer): { origin: Buffer; offset: number } | null {
  if (sharedParts.has(part)) return { origin: part, offset: 0 };
  const origin = byMemory.get(part.buffer);
  if (!origin) return null;
  const offset = part.byteOffset - origin.byteOffset;
  return offset >= 0 && offset + part.length <= origin.length ? { origin, offset } : null;
}
