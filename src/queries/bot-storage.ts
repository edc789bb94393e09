/** Reading a user's bot storage (GET /bot_storage; src/endpoints/bot-storage.ts). */
import { BotStorageKeyMissingError } from '../lib/errors.js';
import type { ReadStore } from '../storage/store.js';

/**
 * The user's entries under `keys`, or all of them when `keys` is missing or empty (as the
 * reference's `keys or get_keys_in_bot_storage(...)`). A key not stored fails the whole read.
 */
export function botStorageEntries(
  store: ReadStore,
  userId: number,
  keys: readonly string[] | undefined,
): Record<string, string> {
  const bots = store.bots;
  const wanted = keys !== undefined && keys.length > 0 ? keys : bots.storageKeys(userId);
  const storage: Record<string, string> = {};
  for (const key of wanted) {
    const value = bots.storageGet(userId, key);
    if (value === undefined) throw new BotStorageKeyMissingError();
    storage[key] = value;
  }
  return storage;
}
