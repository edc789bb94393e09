/**
 * Upload slots: how many requests sending files each user may have in progress at once. Received
 * files go to disk as they arrive (DATA_DIR/tmp, up to MAX_FILE_UPLOAD_SIZE each), so without a
 * bound one user with many connections could fill the disk with uploads that never finish. A
 * request beyond is refused 429 before any of its body is read; a slot is given back when its
 * request is over, however it ended (answered, failed, or its client gone).
 */
import type { ServerContext } from '../context.js';
import { RateLimitedError } from '../lib/errors.js';

/** Requests with files one user may have in progress at once. */
export const MAX_UPLOADS_IN_PROGRESS_PER_USER = 8;

const slots = new WeakMap<ServerContext, Map<number, number>>();

/** Takes one of `userId`'s slots; returns its release (idempotent). Throws 429 past the bound. */
export function takeUploadSlot(server: ServerContext, userId: number): () => void {
  let held = slots.get(server);
  if (!held) {
    held = new Map();
    slots.set(server, held);
  }
  const n = held.get(userId) ?? 0;
  if (n >= MAX_UPLOADS_IN_PROGRESS_PER_USER) throw new RateLimitedError(1);
  held.set(userId, n + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (held.get(userId) ?? 1) - 1;
    if (left <= 0) held.delete(userId);
    else held.set(userId, left);
  };
}

/** Slots `userId` holds now (tests). */
export function uploadSlotsHeld(server: ServerContext, userId: number): number {
  return slots.get(server)?.get(userId) ?? 0;
}
