/**
 * Bot storage: the string values a bot keeps under string keys between runs (the Python bot
 * framework's `bot_handler.storage`, used by its game bots, incrementor, virtual_fs ...).
 * Reference: views/storage.py (update_storage, get_storage, remove_storage) and
 * lib/bot_storage.py. Any user may call these; each keeps storage of their own.
 *
 * - PUT `storage` (a JSON object of strings) stores each entry, all or none (size limit:
 *   src/mutations/bot-storage.ts).
 * - GET `keys` (a JSON list of strings) answers `{"storage": {key: value, ...}}`; without keys (or
 *   with an empty list) every stored entry. A key not stored fails the request: "Key does not
 *   exist."
 * - DELETE `keys` removes those keys, or every key without them; a key not stored fails the
 *   request and removes nothing.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { json } from '../lib/params.js';
import { botStorageEntries } from '../queries/bot-storage.js';

const keyList = () =>
  json(
    z.array(z.string({ error: '{var} is not a string' }), { error: '{var} is not a list' }),
  ).optional();

/** GET /api/v1/bot_storage */
export const getBotStorage = endpoint({
  method: 'GET',
  path: '/api/v1/bot_storage',
  params: z.object({ keys: keyList() }),
  handle: ({ server, user }, p) => ({ storage: botStorageEntries(server.store, user.id, p.keys) }),
});

/** PUT /api/v1/bot_storage */
export const updateBotStorage = endpoint({
  method: 'PUT',
  path: '/api/v1/bot_storage',
  params: z.object({
    storage: json(
      z.record(z.string(), z.string({ error: '{var} is not a string' }), {
        error: '{var} is not a dict',
      }),
    ),
  }),
  handle: ({ realm, user }, p) =>
    realm.ask('bot_storage.put', { user_id: user.id, storage: p.storage }),
});

/** DELETE /api/v1/bot_storage */
export const removeBotStorage = endpoint({
  method: 'DELETE',
  path: '/api/v1/bot_storage',
  params: z.object({ keys: keyList() }),
  handle: ({ realm, user }, p) =>
    realm.ask('bot_storage.remove', { user_id: user.id, keys: p.keys ?? null }),
});
