/**
 * Bot storage (GET/PUT/DELETE /bot_storage), sent as the Python bot framework sends it
 * (zulip_bots' StateHandler through the `zulip` client's update_storage / get_storage): `storage`
 * a JSON object of strings in a form body, `keys` a JSON list in the query or the body. The
 * framework's incrementor, virtual_fs and game bots stop at their first message without it.
 * Reference: views/storage.py, lib/bot_storage.py; zerver/tests/test_bots.py's storage cases.
 */
import t, { type Test } from 'tap';
import { assertError, assertSuccess, type ApiClient } from '../helpers/api.js';
import { startServer } from '../helpers/server.js';

type Bot = { email: string; api_key: string };

async function createBot(t: Test, api: ApiClient, shortName: string): Promise<Bot> {
  const made = assertSuccess(
    t,
    await api.post('hamlet', 'bots', { full_name: `Bot ${shortName}`, short_name: shortName }),
  );
  const user = assertSuccess(t, await api.get('hamlet', `users/${String(made.user_id)}`)).user as {
    email: string;
  };
  return { email: user.email, api_key: String(made.api_key) };
}

const put = (api: ApiClient, who: Bot | string, storage: unknown) =>
  api.request('PUT', who, 'bot_storage', { storage });

t.test('the framework: put one key, read it back by key, read all', async (t) => {
  const { api } = await startServer(t);
  const bot = await createBot(t, api, 'counter');
  // StateHandler.put marshals each value with json.dumps, so the values are JSON texts.
  assertSuccess(t, await put(api, bot, { number: '0' }));
  assertSuccess(t, await put(api, bot, { message_id: 'null' }));
  assertSuccess(t, await put(api, bot, { number: '1' }), 'a key is replaced');
  t.same(assertSuccess(t, await api.get(bot, 'bot_storage', { keys: ['number'] })).storage, {
    number: '1',
  });
  t.same(assertSuccess(t, await api.get(bot, 'bot_storage')).storage, {
    message_id: 'null',
    number: '1',
  });
  t.same(
    assertSuccess(t, await api.get(bot, 'bot_storage', { keys: [] })).storage,
    { message_id: 'null', number: '1' },
    'an empty list of keys means every key',
  );
  t.same(
    assertSuccess(t, await api.get('hamlet', 'bot_storage')).storage,
    {},
    "storage is per user: the bot's owner has none of it",
  );
  assertSuccess(t, await put(api, 'hamlet', { mine: 'yes' }), 'any user may keep storage');
  t.same(assertSuccess(t, await api.get('hamlet', 'bot_storage')).storage, { mine: 'yes' });
  t.same(assertSuccess(t, await api.get(bot, 'bot_storage')).storage, {
    message_id: 'null',
    number: '1',
  });
});

t.test('a key not stored: "Key does not exist.", and nothing removed', async (t) => {
  const { api } = await startServer(t);
  const bot = await createBot(t, api, 'keys');
  assertSuccess(t, await put(api, bot, { a: 'x', b: 'y', c: 'z' }));
  assertError(t, await api.get(bot, 'bot_storage', { keys: ['a', 'nope'] }), 'Key does not exist.');
  assertError(
    t,
    await api.delete(bot, 'bot_storage', { keys: ['a', 'nope'] }),
    'Key does not exist.',
  );
  t.same(assertSuccess(t, await api.get(bot, 'bot_storage')).storage, { a: 'x', b: 'y', c: 'z' });
  assertSuccess(t, await api.delete(bot, 'bot_storage', { keys: ['a'] }));
  t.same(assertSuccess(t, await api.get(bot, 'bot_storage')).storage, { b: 'y', c: 'z' });
  assertSuccess(t, await api.delete(bot, 'bot_storage'), 'no keys: every key');
  t.same(assertSuccess(t, await api.get(bot, 'bot_storage')).storage, {});
  assertSuccess(t, await api.delete(bot, 'bot_storage'), 'removing nothing from nothing');
});

t.test('bad input: 400 in the API error format', async (t) => {
  const { api } = await startServer(t);
  const bot = await createBot(t, api, 'bad');
  assertError(t, await api.request('PUT', bot, 'bot_storage', {}), "Missing 'storage' argument", {
    code: 'REQUEST_VARIABLE_MISSING',
  });
  assertError(t, await put(api, bot, ['a']), 'storage is not a dict');
  assertError(t, await put(api, bot, { a: 1 }), 'storage["a"] is not a string');
  assertError(t, await put(api, bot, 'not json{'), 'storage is not valid JSON', {
    code: 'INVALID_JSON',
  });
  assertError(t, await api.get(bot, 'bot_storage', { keys: 'a' }), 'keys is not valid JSON', {
    code: 'INVALID_JSON',
  });
  assertError(t, await api.get(bot, 'bot_storage', { keys: [1] }), 'keys[0] is not a string');
  t.same(assertSuccess(t, await api.get(bot, 'bot_storage')).storage, {}, 'nothing stored');
});

t.test('the size limit: 10,000,000 characters of keys and values, all or none', async (t) => {
  const { api } = await startServer(t);
  const bot = await createBot(t, api, 'big');
  const fourMillion = 'v'.repeat(4_000_000);
  assertSuccess(t, await put(api, bot, { a: fourMillion }));
  assertSuccess(t, await put(api, bot, { b: fourMillion }));
  // 4,000,001 + 4,000,001 + (1 + 1,999,997) + (1 + 2) = 10,000,003: characters are code points
  // (an emoji outside the BMP is one, not its two UTF-16 units).
  assertError(
    t,
    await put(api, bot, { c: 'v'.repeat(1_999_997), d: '😀😀' }),
    'Request exceeds storage limit by 3 characters. The limit is 10000000 characters.',
  );
  t.same(
    Object.keys(assertSuccess(t, await api.get(bot, 'bot_storage')).storage as object),
    ['a', 'b'],
    'nothing of the refused request was stored',
  );
  // Replacing a value counts the difference: a shrinks by 4,000,000 in the same request.
  assertSuccess(t, await put(api, bot, { a: '', c: 'v'.repeat(1_999_997), d: '😀😀' }));
  const stored = assertSuccess(t, await api.get(bot, 'bot_storage', { keys: ['a', 'c'] }))
    .storage as Record<string, string>;
  t.equal(stored.a, '');
  t.equal(stored.c?.length, 1_999_997);
});
