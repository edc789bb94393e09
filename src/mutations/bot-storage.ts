/**
 * Bot storage: setting and removing a user's stored values. Reference: lib/bot_storage.py
 * (set_bot_storage, remove_bot_storage), views/storage.py. No event is sent: the storage is read
 * only by the bot that keeps it, through GET /bot_storage.
 */
import { BotStorageKeyMissingError, JsonableError } from '../lib/errors.js';
import type { MutationContext } from './context.js';

/** Characters (keys and values together) one user may store: the reference's USER_STATE_SIZE_LIMIT. */
export const BOT_STORAGE_LIMIT = 10_000_000;

export type PutBotStorageCommand = { user_id: number; storage: Record<string, string> };
export type RemoveBotStorageCommand = { user_id: number; keys: string[] | null };

/** Code points, as the reference's len() and SQLite's length() count. */
function chars(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * Stores each entry, replacing a key's old value; all or none: when the user's storage would pass
 * BOT_STORAGE_LIMIT characters, nothing is written.
 */
export function doPutBotStorage(ctx: MutationContext, cmd: PutBotStorageCommand): object {
  const bots = ctx.store.bots;
  const entries = Object.entries(cmd.storage);
  let difference = 0;
  for (const [key, value] of entries) {
    const old = bots.storageGet(cmd.user_id, key);
    difference += chars(key) + chars(value) - (old === undefined ? 0 : chars(key) + chars(old));
  }
  const size = bots.storageSize(cmd.user_id) + difference;
  if (size > BOT_STORAGE_LIMIT)
    throw new JsonableError(
      `Request exceeds storage limit by ${size - BOT_STORAGE_LIMIT} characters. ` +
        `The limit is ${BOT_STORAGE_LIMIT} characters.`,
    );
  for (const [key, value] of entries) bots.storagePut(cmd.user_id, key, value);
  return {};
}

/**
 * Removes the listed keys (all the user's keys when `keys` is null or empty); all or none: a key
 * the user has not stored (or one listed twice, as the reference counts) fails the request.
 */
export function doRemoveBotStorage(ctx: MutationContext, cmd: RemoveBotStorageCommand): object {
  const bots = ctx.store.bots;
  const keys = cmd.keys !== null && cmd.keys.length > 0 ? cmd.keys : bots.storageKeys(cmd.user_id);
  const present = new Set(keys.filter((k) => bots.storageGet(cmd.user_id, k) !== undefined));
  if (present.size < keys.length) throw new BotStorageKeyMissingError();
  for (const key of present) bots.storageRemove(cmd.user_id, key);
  return {};
}
