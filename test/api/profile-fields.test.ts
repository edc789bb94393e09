/**
 * Custom profile fields and users' values over HTTP: what administrators may define, the checks
 * per field type, rendering of text values, the events (`custom_profile_fields` with the whole
 * list, `realm_user` updates for values) through real queues, and a client's snapshot kept equal
 * to a fresh one. Reference tests: zerver/tests/test_custom_profile_data.py.
 */
import t, { type Test } from 'tap';
import { assertError, assertSuccess, type ApiClient } from '../helpers/api.js';
import { applyEvents } from '../helpers/apply-events.js';
import { register } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { kind, Listener } from '../helpers/queues.js';
import { startServer } from '../helpers/server.js';
import { REGISTER_SPEC_EXTRAS, USER_SPEC_EXTRAS } from '../helpers/spec-extras.js';

async function createField(
  t: Test,
  api: ApiClient,
  params: Record<string, unknown>,
): Promise<number> {
  const body = assertSuccess(t, await api.post('iago', 'realm/profile_fields', params));
  assertMatchesOpenApi(t, '/realm/profile_fields', 'post', body);
  return body.id as number;
}

t.test('administrators define fields; everyone learns the whole list', async (t) => {
  const { api } = await startServer(t);
  const hamlet = await Listener.open(t, api, 'hamlet');
  assertError(
    t,
    await api.post('hamlet', 'realm/profile_fields', { name: 'Phone', field_type: 1 }),
    'Must be an organization administrator',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  const phone = await createField(t, api, { name: ' Phone ', hint: 'Work phone', field_type: 1 });
  const editor = await createField(t, api, {
    name: 'Editor',
    field_type: 3,
    field_data: { vim: { text: 'Vim', order: '1' }, emacs: { text: 'Emacs', order: '2' } },
    display_in_profile_summary: true,
  });
  const github = await createField(t, api, {
    field_type: 7,
    field_data: { subtype: 'github' },
    required: true,
    editable_by_user: false,
  });
  const listed = assertSuccess(t, await api.get('othello', 'realm/profile_fields'));
  assertMatchesOpenApi(t, '/realm/profile_fields', 'get', listed);
  t.match(listed.custom_fields, [
    {
      id: phone,
      name: 'Phone',
      type: 1,
      hint: 'Work phone',
      field_data: '',
      order: phone,
      required: false,
      editable_by_user: true,
    },
    { id: editor, name: 'Editor', type: 3, display_in_profile_summary: true },
    {
      id: github,
      name: 'GitHub',
      hint: 'Enter your GitHub username',
      field_data: '{"subtype":"github"}',
      required: true,
      editable_by_user: false,
    },
  ]);
  t.notOk('display_in_profile_summary' in (listed.custom_fields as object[])[0]!);
  const evs = await hamlet.drain(t);
  t.same(evs.map(kind), Array(3).fill('custom_profile_fields'));
  t.same(evs[2]!.fields, listed.custom_fields, 'the event carries the whole list');

  const refusals: [Record<string, unknown>, string, string?][] = [
    [{ name: 'X' }, "Missing 'field_type' argument", 'REQUEST_VARIABLE_MISSING'],
    [{ name: '  ', field_type: 1 }, 'Label cannot be blank.'],
    [{ name: 'x'.repeat(41), field_type: 1 }, 'name is too long (limit: 40 characters)'],
    [{ name: 'X', hint: 'h'.repeat(81), field_type: 1 }, 'hint is too long (limit: 80 characters)'],
    // Characters are code points, as the reference counts: an emoji is one.
    [{ name: '\u{1F4DE}'.repeat(41), field_type: 1 }, 'name is too long (limit: 40 characters)'],
    [
      { name: 'X', hint: '\u{1F4DE}'.repeat(81), field_type: 1 },
      'hint is too long (limit: 80 characters)',
    ],
    [{ name: 'X', field_type: 9 }, 'Invalid field type.'],
    [{ name: 'Phone', field_type: 2 }, 'A field with that label already exists.'],
    [{ name: 'X', field_type: 3, field_data: {} }, 'Field must have at least one choice.'],
    [
      {
        name: 'X',
        field_type: 3,
        field_data: { a: { text: 'A', order: '1' }, b: { text: 'A', order: '2' } },
      },
      'Field must not have duplicate choices.',
    ],
    [
      { name: 'X', field_type: 3, field_data: { a: { text: '', order: '1' } } },
      'field_data["text"] cannot be blank.',
    ],
    [{ name: 'X', field_type: 3, field_data: [1] }, 'field_data is not a dict'],
    [
      { name: 'X', field_type: 7, field_data: { subtype: 'myspace' } },
      'Invalid external account type',
    ],
    [
      { name: 'X', field_type: 7, field_data: { subtype: 'custom' } },
      'Custom external account must define URL pattern',
    ],
    [
      { name: 'X', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'https://x.y/z' } },
      "URL pattern must contain '%(username)s'.",
    ],
    [
      { name: 'X', field_type: 2, display_in_profile_summary: true },
      'Field type not supported for display in profile summary.',
    ],
  ];
  for (const [params, msg, code] of refusals) {
    assertError(
      t,
      await api.post('iago', 'realm/profile_fields', params),
      msg,
      code ? { code } : {},
    );
  }
  // A default external account field exists once.
  assertError(
    t,
    await api.post('iago', 'realm/profile_fields', {
      field_type: 7,
      field_data: { subtype: 'github' },
    }),
    'A field with that label already exists.',
  );
  // At most two fields in profile summaries.
  await createField(t, api, { name: 'Pronouns', field_type: 8, display_in_profile_summary: true });
  assertError(
    t,
    await api.post('iago', 'realm/profile_fields', {
      name: 'Website',
      field_type: 5,
      display_in_profile_summary: true,
    }),
    'Only 2 custom profile fields can be displayed in the profile summary.',
  );
  await hamlet.drain(t);

  // Update, reorder, delete.
  assertSuccess(
    t,
    await api.patch('iago', `realm/profile_fields/${phone}`, {
      name: '\u{1F4DE}'.repeat(40),
      hint: '\u{1F4DE}'.repeat(80),
    }),
    'the limits in emoji: 40 and 80 characters (twice as many UTF-16 units)',
  );
  await hamlet.drain(t);
  assertSuccess(
    t,
    await api.patch('iago', `realm/profile_fields/${phone}`, { name: 'Telephone', hint: '' }),
  );
  assertError(
    t,
    await api.patch('iago', `realm/profile_fields/${phone}`, { name: 'Editor' }),
    'A field with that label already exists.',
  );
  assertError(
    t,
    await api.patch('iago', `realm/profile_fields/${github}`, { name: 'My GitHub' }),
    'Default custom field cannot be updated.',
  );
  assertSuccess(
    t,
    await api.patch('iago', `realm/profile_fields/${github}`, { required: false }),
    'a default field may change what is not its definition',
  );
  assertError(
    t,
    await api.patch('iago', 'realm/profile_fields/9999', { name: 'Nope' }),
    'Field id 9999 not found.',
  );
  assertError(
    t,
    await api.patch('hamlet', `realm/profile_fields/${phone}`, { name: 'Mine' }),
    'Must be an organization administrator',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  const ids = (
    assertSuccess(t, await api.get('iago', 'realm/profile_fields')).custom_fields as {
      id: number;
    }[]
  ).map((f) => f.id);
  assertError(
    t,
    await api.patch('iago', 'realm/profile_fields', { order: ids.slice(1) }),
    'Invalid order mapping.',
  );
  assertSuccess(t, await api.patch('iago', 'realm/profile_fields', { order: [...ids].reverse() }));
  const reordered = assertSuccess(t, await api.get('iago', 'realm/profile_fields'))
    .custom_fields as { id: number; order: number; name: string }[];
  t.same(
    reordered.map((f) => f.id),
    [...ids].reverse(),
    'listed in the new order',
  );
  t.same(
    reordered.map((f) => f.order),
    ids.map((_, i) => i),
  );
  t.equal(reordered.find((f) => f.id === phone)?.name, 'Telephone');
  assertSuccess(t, await api.delete('iago', `realm/profile_fields/${editor}`));
  assertError(
    t,
    await api.delete('iago', `realm/profile_fields/${editor}`),
    `Field id ${editor} not found.`,
  );
  t.same((await hamlet.drain(t)).map(kind), Array(4).fill('custom_profile_fields'));

  const state = structuredClone(hamlet.snapshot);
  applyEvents(state, hamlet.got);
  const fresh = (await register(t, api, 'hamlet')).body;
  t.same(state.custom_profile_fields, fresh.custom_profile_fields, 'snapshot kept by the events');
});

t.test('values: checked per type, rendered, announced; unchanged values are not', async (t) => {
  const { api, fx } = await startServer(t);
  const f = {
    short: await createField(t, api, { name: 'Motto', field_type: 1 }),
    long: await createField(t, api, { name: 'Bio', field_type: 2 }),
    select: await createField(t, api, {
      name: 'Editor',
      field_type: 3,
      field_data: { '0': { text: 'Vim', order: '1' }, '1': { text: 'Emacs', order: '2' } },
    }),
    date: await createField(t, api, { name: 'Birthday', field_type: 4 }),
    url: await createField(t, api, { name: 'Website', field_type: 5 }),
    user: await createField(t, api, { name: 'Mentor', field_type: 6 }),
    external: await createField(t, api, { field_type: 7, field_data: { subtype: 'github' } }),
    pronouns: await createField(t, api, { name: 'Pronouns', field_type: 8 }),
    locked: await createField(t, api, { name: 'Badge', field_type: 1, editable_by_user: false }),
  };
  const hamletId = fx.users.hamlet!.id;
  const watcher = await Listener.open(t, api, 'othello', {}, { allowExtra: USER_SPEC_EXTRAS });
  const data = [
    { id: f.short, value: 'To **be**' },
    { id: f.long, value: 'Line one\n\n* a list' },
    { id: f.select, value: '1' },
    { id: f.date, value: '1600-02-29' },
    { id: f.url, value: 'https://elsinore.dk/' },
    { id: f.user, value: [fx.users.othello!.id] },
    { id: f.external, value: 'hamlet-dk' },
    { id: f.pronouns, value: 'he/him' },
  ];
  assertSuccess(t, await api.patch('hamlet', 'users/me/profile_data', { data }));
  const evs = await watcher.drain(t);
  t.equal(evs.length, data.length, 'one realm_user update per value');
  const byField = new Map(
    evs.map((e) => {
      const c = (e.person as { custom_profile_field: { id: number } }).custom_profile_field;
      return [c.id, c];
    }),
  );
  t.same(byField.get(f.short), {
    id: f.short,
    value: 'To **be**',
    rendered_value: '<p>To <strong>be</strong></p>',
  });
  t.match(byField.get(f.long), { rendered_value: /<ul>\n<li>a list<\/li>\n<\/ul>/ });
  t.same(byField.get(f.user), { id: f.user, value: `[${fx.users.othello!.id}]` });
  t.same(byField.get(f.select), { id: f.select, value: '1' }, 'no rendering outside text fields');

  const user = assertSuccess(
    t,
    await api.get('cordelia', `users/${hamletId}`, { include_custom_profile_fields: true }),
  ).user as { profile_data: Record<string, unknown> };
  t.match(user.profile_data[String(f.short)], {
    value: 'To **be**',
    rendered_value: '<p>To <strong>be</strong></p>',
  });
  t.same(user.profile_data[String(f.date)], { value: '1600-02-29' });

  // The same values again: nothing changes, nobody is told.
  assertSuccess(t, await api.patch('hamlet', 'users/me/profile_data', { data }));
  t.same(await watcher.drain(t), []);

  assertSuccess(t, await api.delete('iago', `users/${fx.users.prospero!.id}`));
  await watcher.drain(t);
  const refusals: [unknown, string][] = [
    [[{ id: f.short, value: 'x'.repeat(51) }], 'Motto is too long (limit: 50 characters)'],
    [[{ id: f.long, value: 'x'.repeat(501) }], 'Bio is too long (limit: 500 characters)'],
    [[{ id: f.short, value: '\u{1F451}'.repeat(51) }], 'Motto is too long (limit: 50 characters)'],
    [[{ id: f.date, value: '1601-02-29' }], 'Birthday is not a date'],
    [[{ id: f.date, value: '29/02/1600' }], 'Birthday is not a date'],
    [[{ id: f.url, value: 'elsinore' }], 'Website is not a URL'],
    [[{ id: f.url, value: 'javascript:alert(1)' }], 'Website is not a URL'],
    [[{ id: f.select, value: '7' }], "'7' is not a valid choice for 'Editor'."],
    [[{ id: f.user, value: [9999] }], 'Invalid user IDs: 9999'],
    [
      [{ id: f.user, value: [fx.users.prospero!.id] }],
      `User with ID ${fx.users.prospero!.id} is deactivated`,
    ],
    [[{ id: f.user, value: 'othello' }], 'User IDs is not a list'],
    [[{ id: f.short, value: [1] }], 'Motto is not a string'],
    [[{ id: 9999, value: 'x' }], 'Field id 9999 not found.'],
    [
      [{ id: f.locked, value: 'gold' }],
      'You are not allowed to change this field. Contact an administrator to update it.',
    ],
    [
      [
        { id: f.short, value: 'ok' },
        { id: f.date, value: 'never' },
      ],
      'Birthday is not a date',
    ],
    [[{ id: f.short, value: 1 }], 'data[0]["value"] is not an allowed_type'],
    [[{ id: f.short, value: 'x', extra: 1 }], 'Argument "extra" at data[0] is unexpected'],
    [{ id: f.short }, 'data is not a list'],
  ];
  for (const [d, msg] of refusals) {
    assertError(t, await api.patch('hamlet', 'users/me/profile_data', { data: d }), msg);
  }
  t.same(await watcher.drain(t), [], 'a refused request changes nothing (all or nothing)');
  assertSuccess(
    t,
    await api.patch('hamlet', 'users/me/profile_data', {
      data: [{ id: f.short, value: '\u{1F451}'.repeat(50) }],
    }),
    '50 emoji are 50 characters',
  );
  await watcher.drain(t);

  // Administrators may set fields users may not.
  assertSuccess(
    t,
    await api.patch('iago', 'users/me/profile_data', { data: [{ id: f.locked, value: 'gold' }] }),
  );
  t.match(await watcher.drain(t), [
    {
      person: { user_id: fx.users.iago!.id, custom_profile_field: { id: f.locked, value: 'gold' } },
    },
  ]);

  // Removing values: null values are announced; a field without a value is no change.
  assertError(
    t,
    await api.delete('hamlet', 'users/me/profile_data', { data: [f.short, f.locked] }),
    'You are not allowed to change this field. Contact an administrator to update it.',
  );
  assertSuccess(
    t,
    await api.delete('hamlet', 'users/me/profile_data', { data: [f.short, f.url, f.short] }),
  );
  const removed = await watcher.drain(t);
  t.same(
    removed.map((e) => (e.person as { custom_profile_field: unknown }).custom_profile_field),
    [
      { id: f.short, value: null },
      { id: f.url, value: null },
    ],
  );
  assertError(
    t,
    await api.delete('hamlet', 'users/me/profile_data', { data: [9999] }),
    'Field id 9999 not found.',
  );

  // Removing an option of a list field removes the values that chose it.
  assertSuccess(
    t,
    await api.patch('iago', `realm/profile_fields/${f.select}`, {
      field_data: { '0': { text: 'Vim', order: '1' } },
    }),
  );
  const after = assertSuccess(
    t,
    await api.get('cordelia', `users/${hamletId}`, { include_custom_profile_fields: true }),
  ).user as { profile_data: Record<string, unknown> };
  t.notOk(String(f.select) in after.profile_data);
  t.same(
    (await watcher.drain(t)).map(kind),
    ['realm_user update', 'custom_profile_fields'],
    'the users who lose their choice are announced, then the field',
  );

  // Deleting a field deletes the values.
  assertSuccess(t, await api.delete('iago', `realm/profile_fields/${f.long}`));
  const last = assertSuccess(
    t,
    await api.get('cordelia', `users/${hamletId}`, { include_custom_profile_fields: true }),
  ).user as { profile_data: Record<string, unknown> };
  t.notOk(String(f.long) in last.profile_data);

  await watcher.drain(t);
  const state = structuredClone(watcher.snapshot);
  applyEvents(state, watcher.got);
  const fresh = (await register(t, api, 'othello')).body;
  assertMatchesOpenApi(t, '/register', 'post', fresh, { allowExtra: REGISTER_SPEC_EXTRAS });
  const profileOf = (s: Record<string, unknown>, id: number) =>
    (s.realm_users as { user_id: number; profile_data: unknown }[]).find((u) => u.user_id === id)
      ?.profile_data;
  t.same(state.custom_profile_fields, fresh.custom_profile_fields);
  for (const id of [fx.users.iago!.id, hamletId])
    t.same(profileOf(state, id), profileOf(fresh, id), `profile_data of ${id}`);
});
