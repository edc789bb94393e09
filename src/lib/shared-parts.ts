/**
 * Serialized JSON kept between answers (the presence snapshot, the register's user lists), marked
 * by the caches that keep it: src/http/gzip.ts compresses such a part once and reuses it in every
 * answer carrying it. A Buffer made for one answer (a view of a shared one included) is not marked.
 */

/** Marked parts below this size are not worth compressing apart (they are stored). */
export const SHARED_PART_MIN = 8 * 1024;

const sharedParts = new WeakSet<Buffer>();

/** Marks a Buffer as one many answers will carry as it is; returns it. */
export function markShared(part: Buffer): Buffer {
  if (part.length >= SHARED_PART_MIN) sharedParts.add(part);
  return part;
}

/** Whether `part` was marked (markShared). */
export function isShared(part: Buffer): boolean {
  return sharedParts.has(part);
}
