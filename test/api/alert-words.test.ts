/**
 * Alert words: list, add, remove; case-insensitive uniqueness; the 100-character limit; the
 * `alert_words` event to the user only; the register field; and the renderer's alert-word context
 * (what the message layer turns into the `has_alert_word` flag). Ported from the reference's
 * zerver/tests/test_alert_words.py.
 */
import t, { type Test } from 'tap';
import { assertError, assertSuccess, type ApiClient } from '../helpers/api.js';
import { events as pollEvents, register } from '../helpers/events.js';
import { createChannel } from '../helpers/channels.js';
import { fetchNarrow, sendChannelMessage } from '../helpers/messages.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { renderMarkdown } from '../../src/lib/markdown/index.js';
import { renderContextFor } from '../../src/queries/render-context.js';

async function words(t: Test, api: ApiClient, who: string): Promise<string[]> {
  const res = await api.get(who, 'users/me/alert_words');
  assertMatchesOpenApi(t, '/users/me/alert_words', 'get', res.body);
  return assertSuccess(t, res).alert_words as string[];
}

async function add(t: Test, api: ApiClient, who: string, list: unknown): Promise<string[]> {
  const res = await api.post(who, 'users/me/alert_words', { alert_words: list });
  assertMatchesOpenApi(t, '/users/me/alert_words', 'post', res.body);
  return assertSuccess(t, res).alert_words as string[];
}

async function remove(t: Test, api: ApiClient, who: string, list: unknown): Promise<string[]> {
  const res = await api.delete(who, 'users/me/alert_words', { alert_words: list });
  assertMatchesOpenApi(t, '/users/me/alert_words', 'delete', res.body);
  return assertSuccess(t, res).alert_words as string[];
}

t.test('test_json_list_default / add / remove', async (t) => {
  const { api } = await startServer(t);
  t.same(await words(t, api, 'hamlet'), []);
  t.same(await add(t, api, 'hamlet', ['one ', '\n two', 'three']), ['one', 'two', 'three']);
  t.same(await words(t, api, 'hamlet'), ['one', 'two', 'three']);
  t.same(await remove(t, api, 'hamlet', ['one']), ['two', 'three']);
  t.same(await words(t, api, 'othello'), [], 'words are per user');
});

t.test(
  'case-insensitive: no duplicates, the last new spelling kept, removal in any case',
  async (t) => {
    const { api } = await startServer(t);
    t.same(await add(t, api, 'hamlet', ['Apple', 'banana']), ['Apple', 'banana']);
    t.same(await add(t, api, 'hamlet', ['apple', 'BANANA', 'Cherry', 'cherry', '  ', '']), [
      'Apple',
      'banana',
      'cherry',
    ]);
    t.same(
      await remove(t, api, 'hamlet', ['APPLE', 'nothing', 'Cherry ']),
      ['banana', 'cherry'],
      'removal ignores case but not surrounding spaces',
    );
    t.same(await remove(t, api, 'hamlet', ['CHERRY', 'Banana']), []);
  },
);

t.test('validation: a list of strings, each at most 100 characters when added', async (t) => {
  const { api } = await startServer(t);
  const res = await api.post('hamlet', 'users/me/alert_words', {
    alert_words: ['ok', 'x'.repeat(101)],
  });
  assertError(t, res, 'alert_words[1] is too long (limit: 100 characters)');
  assertMatchesOpenApi(t, '/users/me/alert_words', 'post', res.body, { status: '400' });
  t.same(await add(t, api, 'hamlet', ['é'.repeat(100)]), ['é'.repeat(100)], '100 characters');
  assertError(
    t,
    await api.post('hamlet', 'users/me/alert_words', {}),
    "Missing 'alert_words' argument",
    {
      code: 'REQUEST_VARIABLE_MISSING',
    },
  );
  assertError(
    t,
    await api.post('hamlet', 'users/me/alert_words', { alert_words: 'word' }),
    'alert_words is not valid JSON',
    {
      code: 'INVALID_JSON',
    },
  );
  assertError(
    t,
    await api.post('hamlet', 'users/me/alert_words', { alert_words: '"word"' }),
    'alert_words is not a list',
  );
  assertError(
    t,
    await api.delete('hamlet', 'users/me/alert_words', { alert_words: [1] }),
    'alert_words[0] is not a string',
  );
  // Long words can still be removed (the limit is on adding).
  t.same(await remove(t, api, 'hamlet', ['x'.repeat(101)]), ['é'.repeat(100)]);
});

t.test('alert_words events go to the user only, after every request', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const mine = await register(t, api, 'hamlet', { event_types: ['alert_words'] });
  const theirs = await register(t, api, 'othello', {});
  const admin = await register(t, api, 'iago', {});
  await add(t, api, 'hamlet', ['one', 'two']);
  await add(t, api, 'hamlet', ['ONE']); // nothing new: still announced, as the reference
  await remove(t, api, 'hamlet', ['two']);
  const got = await api.get('hamlet', 'events', {
    queue_id: mine.queue_id,
    last_event_id: mine.last_event_id,
    dont_block: true,
  });
  assertMatchesOpenApi(t, '/events', 'get', got.body);
  t.same(
    (assertSuccess(t, got).events as Record<string, unknown>[]).map(({ id: _id, ...e }) => e),
    [
      { type: 'alert_words', alert_words: ['one', 'two'] },
      { type: 'alert_words', alert_words: ['one', 'two'] },
      { type: 'alert_words', alert_words: ['one'] },
    ],
  );
  for (const [who, q] of [
    ['othello', theirs],
    ['iago', admin],
  ] as const) {
    const evs = await pollEvents(t, api, who, q.queue_id, q.last_event_id, true);
    t.same(
      evs.filter((e) => e.type === 'alert_words'),
      [],
      `${who} gets nothing`,
    );
  }
  const tapped = ts.events.filter((e) => e.event.type === 'alert_words');
  t.ok(tapped.every((e) => e.users.length === 1 && e.users[0] === ts.fx.users.hamlet!.id));
  // A refused request sends nothing.
  const before = ts.events.length;
  assertError(
    t,
    await api.post('hamlet', 'users/me/alert_words', { alert_words: [5] }),
    'alert_words[0] is not a string',
  );
  t.equal(ts.events.length, before);
});

t.test('register: alert_words', async (t) => {
  const { api } = await startServer(t);
  await add(t, api, 'hamlet', ['natural', 'illustrious']);
  const q = await register(t, api, 'hamlet', { fetch_event_types: ['alert_words'] });
  assertMatchesOpenApi(t, '/register', 'post', q.body);
  t.same(q.body.alert_words, ['natural', 'illustrious']);
  const other = await register(t, api, 'othello', { fetch_event_types: ['alert_words'] });
  t.same(other.body.alert_words, []);
});

function context(ts: TestServer) {
  const { config, realms } = ts.server.context;
  const store = ts.server.store;
  return renderContextFor(config, store, realms.get(ts.fx.realmId)!.view);
}

t.test('the render context carries every active user’s words and changes with them', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!.id;
  const othello = fx.users.othello!.id;
  const prospero = fx.users.prospero!.id;
  const empty = context(ts);
  t.same(empty.alert_words, []);
  t.equal(context(ts), empty, 'cached while nothing changes');

  await add(t, api, 'hamlet', ['Kingdom', 'to be']);
  await add(t, api, 'othello', ['kingdom']);
  await add(t, api, 'prospero', ['tempest']);
  const full = context(ts);
  t.not(full.version, empty.version, 'a new version after a change');
  t.same(
    [...full.alert_words].sort((a, b) => a.user_id - b.user_id || a.word.localeCompare(b.word)),
    [
      { user_id: hamlet, word: 'Kingdom' },
      { user_id: hamlet, word: 'to be' },
      { user_id: othello, word: 'kingdom' },
      { user_id: prospero, word: 'tempest' },
    ].sort((a, b) => a.user_id - b.user_id || a.word.localeCompare(b.word)),
  );
  const alerted = (content: string) =>
    renderMarkdown(content, context(ts)).user_ids_with_alert_words;
  t.same(
    alerted('My KINGDOM for a horse!'),
    [hamlet, othello].sort((a, b) => a - b),
  );
  t.same(alerted('To be, or not to be'), [hamlet]);
  t.same(alerted('kingdoms fall'), [], 'whole words only');
  t.same(alerted('the tempest.'), [prospero]);

  // Removing a word, and deactivating a user, take their words out.
  await remove(t, api, 'hamlet', ['kingdom']);
  assertSuccess(t, await api.delete('iago', `users/${prospero}`));
  t.same(alerted('kingdom tempest'), [othello]);
  t.same(alerted('to be'), [hamlet]);
});

t.test(
  'a sent message carries has_alert_word for exactly the users whose words it holds',
  async (t) => {
    const ts = await startServer(t);
    const { api } = ts;
    await add(t, api, 'hamlet', ['kingdom']);
    await add(t, api, 'othello', ['horse']);
    const ids = ['hamlet', 'othello', 'cordelia'].map((n) => ts.fx.users[n]!.id);
    await createChannel(api, 'cordelia', 'Verona', { principals: ids });
    const qHamlet = await register(t, api, 'hamlet', { event_types: ['message'] });
    const qOthello = await register(t, api, 'othello', { event_types: ['message'] });
    const id = await sendChannelMessage(
      api,
      'cordelia',
      'Verona',
      'kings',
      'My kingdom for a KINGDOM',
    );
    const flagsOf = async (who: string, q: { queue_id: string }) => {
      const evs = await pollEvents(t, api, who, q.queue_id, -1);
      const ev = evs.find((e) => e.type === 'message')!;
      t.equal((ev.message as { id: number }).id, id);
      return ev.flags as string[];
    };
    t.ok((await flagsOf('hamlet', qHamlet)).includes('has_alert_word'), 'in hamlet’s event');
    t.notOk((await flagsOf('othello', qOthello)).includes('has_alert_word'), 'not othello’s');
    t.same((await fetchNarrow(api, 'hamlet', [['is', 'alerted']])).ids, [id], 'is:alerted');
    t.same((await fetchNarrow(api, 'othello', [['is', 'alerted']])).ids, []);
    // Words added later do not reach back to messages already sent.
    await add(t, api, 'othello', ['kingdom']);
    t.same((await fetchNarrow(api, 'othello', [['is', 'alerted']])).ids, []);
  },
);
