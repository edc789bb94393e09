/**
 * Saved snippets: create, list, edit, delete; limits and empty values; events to the owner only;
 * other users cannot see or touch them; the register snapshot.
 * Reference: zerver/tests/test_saved_snippets.py.
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { eventsSince } from '../helpers/channels.js';
import { register } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';
import { REGISTER_SPEC_EXTRAS } from '../helpers/spec-extras.js';

t.test('saved snippets: the whole life of one, events to the owner only', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!.id;
  const list = async (who: string) => {
    const res = await api.get(who, 'saved_snippets');
    assertMatchesOpenApi(t, '/saved_snippets', 'get', res.body);
    return assertSuccess(t, res).saved_snippets as Record<string, unknown>[];
  };
  t.same(await list('hamlet'), []);

  let from = ts.events.length;
  const res = await api.post('hamlet', 'saved_snippets', {
    title: ' Welcome message ',
    content: '**Welcome** to the organization.',
  });
  assertMatchesOpenApi(t, '/saved_snippets', 'post', res.body);
  const id = assertSuccess(t, res).saved_snippet_id as number;
  const [snippet] = await list('hamlet');
  t.match(snippet, {
    id,
    title: 'Welcome message',
    content: '**Welcome** to the organization.',
    date_created: Number,
  });
  t.same(eventsSince(ts, from), [
    { event: { type: 'saved_snippets', op: 'add', saved_snippet: snippet }, users: [hamlet] },
  ]);
  t.same(await list('othello'), [], 'nobody else sees it');

  from = ts.events.length;
  assertSuccess(t, await api.patch('hamlet', `saved_snippets/${id}`, { title: 'New title' }));
  assertSuccess(t, await api.patch('hamlet', `saved_snippets/${id}`, { content: 'New content' }));
  const edited = { ...snippet, title: 'New title', content: 'New content' };
  t.same(await list('hamlet'), [edited]);
  t.same(
    eventsSince(ts, from).map((e) => [e.event.op, e.users]),
    [
      ['update', [hamlet]],
      ['update', [hamlet]],
    ],
  );
  t.same(eventsSince(ts, from)[1]!.event.saved_snippet, edited);

  const reg = await register(t, api, 'hamlet', { fetch_event_types: ['saved_snippets'] });
  assertMatchesOpenApi(t, '/register', 'post', reg.body, { allowExtra: REGISTER_SPEC_EXTRAS });
  t.same(reg.body.saved_snippets, [edited]);
  const other = await register(t, api, 'othello', { fetch_event_types: ['saved_snippets'] });
  t.same(other.body.saved_snippets, []);

  // Someone else's snippet does not exist for them.
  assertError(
    t,
    await api.patch('othello', `saved_snippets/${id}`, { title: 'x' }),
    'Saved snippet does not exist.',
    { status: 404 },
  );
  assertError(
    t,
    await api.delete('othello', `saved_snippets/${id}`),
    'Saved snippet does not exist.',
    { status: 404 },
  );

  from = ts.events.length;
  assertSuccess(t, await api.delete('hamlet', `saved_snippets/${id}`));
  t.same(await list('hamlet'), []);
  t.same(eventsSince(ts, from), [
    { event: { type: 'saved_snippets', op: 'remove', saved_snippet_id: id }, users: [hamlet] },
  ]);
  assertError(
    t,
    await api.delete('hamlet', `saved_snippets/${id}`),
    'Saved snippet does not exist.',
    { status: 404 },
  );
});

t.test('saved snippets: refusals', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const post = (p: Record<string, unknown>) => api.post('hamlet', 'saved_snippets', p);
  assertError(t, await post({ content: 'x' }), "Missing 'title' argument", {
    code: 'REQUEST_VARIABLE_MISSING',
  });
  assertError(t, await post({ title: 'x' }), "Missing 'content' argument", {
    code: 'REQUEST_VARIABLE_MISSING',
  });
  assertError(
    t,
    await post({ title: 'A'.repeat(120), content: 'x' }),
    'title is too long (limit: 60 characters)',
  );
  assertError(
    t,
    await post({ title: 'x', content: 'y'.repeat(10001) }),
    'content is too long (limit: 10000 characters)',
  );
  assertError(t, await post({ title: '   ', content: 'x' }), 'Title cannot be empty.');
  assertError(t, await post({ title: 'x', content: ' \n ' }), 'Content cannot be empty.');
  const id = assertSuccess(t, await post({ title: 'A'.repeat(60), content: 'y'.repeat(10000) }))
    .saved_snippet_id as number;
  assertError(t, await api.patch('hamlet', `saved_snippets/${id}`, {}), 'No new data is supplied');
  assertError(
    t,
    await api.patch('hamlet', `saved_snippets/${id}`, { title: ' ' }),
    'Title cannot be empty.',
  );
  assertError(
    t,
    await api.patch('hamlet', 'saved_snippets/9999', { content: 'New content' }),
    'Saved snippet does not exist.',
    { status: 404 },
  );
  const left = assertSuccess(t, await api.get('hamlet', 'saved_snippets')).saved_snippets as {
    title: string;
  }[];
  t.same(
    left.map((s) => s.title),
    ['A'.repeat(60)],
    'refused requests changed nothing',
  );
});

t.test(
  'saved snippets: the title and content limits count code points, after trimming',
  async (t) => {
    const ts = await startServer(t);
    const { api } = ts;
    const post = (p: Record<string, unknown>) => api.post('hamlet', 'saved_snippets', p);
    const fox = '\u{1F98A}';
    // The reference's SavedSnippet.MAX_TITLE_LENGTH (60) in Python's len: 60 emoji, 120 units.
    assertError(
      t,
      await post({ title: fox.repeat(61), content: 'x' }),
      'title is too long (limit: 60 characters)',
    );
    const id = assertSuccess(t, await post({ title: fox.repeat(60), content: 'x' }))
      .saved_snippet_id as number;
    // strip_whitespace comes before max_length: what is around the text does not count.
    assertSuccess(
      t,
      await post({ title: `  ${'B'.repeat(60)}\n `, content: ` ${'y'.repeat(10000)}\n` }),
    );
    assertError(
      t,
      await post({ title: ` ${'B'.repeat(61)} `, content: 'x' }),
      'title is too long (limit: 60 characters)',
    );
    assertError(
      t,
      await post({ title: 'x', content: fox.repeat(10001) }),
      'content is too long (limit: 10000 characters)',
    );
    const edit = (p: Record<string, unknown>) => api.patch('hamlet', `saved_snippets/${id}`, p);
    assertError(
      t,
      await edit({ title: fox.repeat(61) }),
      'title is too long (limit: 60 characters)',
    );
    assertSuccess(t, await edit({ title: ` ${'C'.repeat(60)} ` }));
    const kept = assertSuccess(t, await api.get('hamlet', 'saved_snippets')).saved_snippets as {
      title: string;
      content: string;
    }[];
    t.same(
      kept.map((s) => [s.title, s.content.length]),
      [
        ['C'.repeat(60), 1],
        ['B'.repeat(60), 10000],
      ],
      'stored trimmed',
    );
  },
);
