/**
 * Code playgrounds: administrators add and remove them; values checked as the reference checks
 * them (language characters, URL template with exactly `{code}`, uniqueness); `realm_playgrounds`
 * events to every active user; the register snapshot.
 * Reference: zerver/tests/test_realm_playgrounds.py.
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { eventsSince } from '../helpers/channels.js';
import { register } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';
import { REGISTER_SPEC_EXTRAS } from '../helpers/spec-extras.js';
import { activeUserIds } from '../helpers/fixtures.js';

const python = {
  name: 'Python playground',
  pygments_language: 'Python',
  url_template: 'https://python.example.com?code={code}',
};

t.test('adding and removing playgrounds', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const all = activeUserIds(fx);
  let from = ts.events.length;
  const res = await api.post('iago', 'realm/playgrounds', python);
  assertMatchesOpenApi(t, '/realm/playgrounds', 'post', res.body);
  const id = assertSuccess(t, res).id as number;
  t.same(eventsSince(ts, from), [
    { event: { type: 'realm_playgrounds', realm_playgrounds: [{ id, ...python }] }, users: all },
  ]);
  const id2 = assertSuccess(
    t,
    await api.post('iago', 'realm/playgrounds', {
      name: ' Python playground 2 ',
      pygments_language: 'Python',
      url_template: 'https://python2.example.com/{?code}',
    }),
  ).id as number;
  const reg = await register(t, api, 'polonius', { fetch_event_types: ['realm_playgrounds'] });
  assertMatchesOpenApi(t, '/register', 'post', reg.body, { allowExtra: REGISTER_SPEC_EXTRAS });
  t.same(reg.body.realm_playgrounds, [
    { id, ...python },
    {
      id: id2,
      name: 'Python playground 2',
      pygments_language: 'Python',
      url_template: 'https://python2.example.com/{?code}',
    },
  ]);

  assertError(t, await api.delete('iago', `realm/playgrounds/${id2 + 1}`), 'Invalid playground');
  from = ts.events.length;
  assertSuccess(t, await api.delete('iago', `realm/playgrounds/${id}`));
  t.same(eventsSince(ts, from)[0]!.event.realm_playgrounds, [
    {
      id: id2,
      name: 'Python playground 2',
      pygments_language: 'Python',
      url_template: 'https://python2.example.com/{?code}',
    },
  ]);
});

t.test('only administrators; bad values', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  for (const who of ['hamlet', 'shiva', 'polonius']) {
    assertError(
      t,
      await api.post(who, 'realm/playgrounds', {}),
      'Must be an organization administrator',
      { code: 'UNAUTHORIZED_PRINCIPAL' },
    );
    assertError(
      t,
      await api.delete(who, 'realm/playgrounds/1'),
      'Must be an organization administrator',
      { code: 'UNAUTHORIZED_PRINCIPAL' },
    );
  }
  const add = (p: Record<string, unknown>) => api.post('iago', 'realm/playgrounds', p);
  assertError(
    t,
    await add({ name: 'x', url_template: python.url_template }),
    "Missing 'pygments_language' argument",
    { code: 'REQUEST_VARIABLE_MISSING' },
  );
  assertError(
    t,
    await add({ ...python, pygments_language: 'a$b$c' }),
    'Invalid characters in pygments language',
  );
  assertError(
    t,
    await add({ ...python, url_template: 'https://python.example.com/{code' }),
    'Invalid URL template.',
  );
  assertError(
    t,
    await add({ ...python, url_template: 'https://python.example.com/' }),
    '"code" should be the only variable present in the URL template',
  );
  assertError(
    t,
    await add({ ...python, url_template: 'https://x.example.com/{code}/{lang}' }),
    '"code" should be the only variable present in the URL template',
  );
  assertError(t, await add({ ...python, name: ' ' }), 'This field cannot be blank.');
  assertError(
    t,
    await add({ ...python, pygments_language: 'P'.repeat(41) }),
    'Ensure this value has at most 40 characters (it has 41).',
  );
  const before = ts.events.length;
  assertSuccess(t, await add(python));
  assertError(
    t,
    await add(python),
    'Realm playground with this Realm, Pygments language and Name already exists.',
  );
  t.equal(ts.events.length, before + 1, 'one event: the refused duplicate sent none');
});
