/**
 * Linkifiers: list, add, update, delete, reorder; who may; the reference's refusals; the
 * realm_linkifiers event; the register snapshot; rendering with them (content and topics).
 * Ported from the reference's zerver/tests/test_realm_linkifiers.py.
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';
import { activeUserIds } from '../helpers/fixtures.js';
import { fetchInitialState, type StateRequest } from '../../src/queries/initial-state.js';

const TRAC = { pattern: '#(?P<id>[123])', url_template: 'https://realm.com/my_realm_filter/{id}' };

t.test('test_list / add: an administrator adds, everyone lists', async (t) => {
  const { api } = await startServer(t);
  const empty = await api.get('hamlet', 'realm/linkifiers');
  t.same(assertSuccess(t, empty).linkifiers, []);
  const added = await api.post('iago', 'realm/filters', TRAC);
  const { id } = assertSuccess(t, added) as { id: number };
  assertMatchesOpenApi(t, '/realm/filters', 'post', added.body);
  t.type(id, 'number');
  for (const who of ['polonius', 'hamlet', 'iago']) {
    const res = await api.get(who, 'realm/linkifiers');
    assertMatchesOpenApi(t, '/realm/linkifiers', 'get', res.body);
    t.same(assertSuccess(t, res).linkifiers, [
      { pattern: TRAC.pattern, url_template: TRAC.url_template, id },
    ]);
  }
});

t.test('test_not_realm_admin: members and moderators are refused', async (t) => {
  const { api } = await startServer(t);
  for (const who of ['hamlet', 'shiva', 'polonius']) {
    assertError(
      t,
      await api.post(who, 'realm/filters', TRAC),
      'Must be an organization administrator',
      { code: 'UNAUTHORIZED_PRINCIPAL' },
    );
    assertError(
      t,
      await api.delete(who, 'realm/filters/15'),
      'Must be an organization administrator',
      { code: 'UNAUTHORIZED_PRINCIPAL' },
    );
    assertError(
      t,
      await api.patch(who, 'realm/filters/15', TRAC),
      'Must be an organization administrator',
      { code: 'UNAUTHORIZED_PRINCIPAL' },
    );
  }
  // The owner is an administrator too.
  assertSuccess(t, await api.post('desdemona', 'realm/filters', TRAC));
});

t.test('test_create: the reference refusals, then accepted forms', async (t) => {
  const { api } = await startServer(t);
  const post = (pattern: string, url_template: string) =>
    api.post('iago', 'realm/filters', { pattern, url_template });
  const refused = async (pattern: string, url_template: string, msg: string, field: string) => {
    const res = await post(pattern, url_template);
    assertError(t, res, msg);
    t.same(res.body.errors, { [field]: [msg] }, `errors for ${pattern}`);
  };
  await refused(
    '',
    'https://realm.com/my_realm_filter/{id}',
    'This field cannot be blank.',
    'pattern',
  );
  await refused(
    '(foo',
    'https://realm.com/my_realm_filter/{id}',
    'Bad regular expression: missing ): (foo',
    '__all__',
  );
  await refused(
    'ZUL-(?P<id>\\d????)',
    'https://realm.com/my_realm_filter/{id}',
    'Bad regular expression: bad repetition operator: ????',
    '__all__',
  );
  await refused(
    'ZUL-(?P<id>\\d+)',
    '$fgfg',
    "Group 'id' in linkifier pattern is not present in URL template.",
    '__all__',
  );
  await refused(
    'ZUL-(?P<id>\\d+)',
    'https://realm.com/my_realm_filter/{hello}',
    "Group 'hello' in URL template is not present in linkifier pattern.",
    '__all__',
  );
  await refused(
    'ZUL-(?P<id>\\d+)-(?P<hello>\\d+)',
    'https://realm.com/my_realm_filter/{hello}',
    "Group 'id' in linkifier pattern is not present in URL template.",
    '__all__',
  );
  await refused('#(?P<id>[123])', '{id', 'Invalid URL template.', 'url_template');
  await refused(
    '#(?P<id>[123])',
    'https://example.com/{bar++}',
    'Invalid URL template.',
    'url_template',
  );
  // Python-only or RE2-refused syntax. (Nested repetition, `(a+)+`, is accepted: RE2 matches it
  // in linear time; test/unit/parsers-property.test.ts.)
  await refused(
    '(?<=x)(?P<id>\\d+)',
    'https://e.com/{id}',
    'Bad regular expression: invalid perl operator: (?<',
    '__all__',
  );
  await refused(
    '(?P<id>a)(?P=id)',
    'https://e.com/{id}',
    'Bad regular expression: invalid named capture group: (?P=',
    '__all__',
  );
  assertError(
    t,
    await api.post('iago', 'realm/filters', { pattern: 'x' }),
    "Missing 'url_template' argument",
    {
      code: 'REQUEST_VARIABLE_MISSING',
    },
  );

  const ok = [
    ['ZUL-(?P<id>\\d+)', 'https://realm.com/my_realm_filter/#hashtag/{id}'],
    ['ZUL2-(?P<id>\\d+)', 'https://realm.com/my_realm_filter/?value={id}'],
    ['_code=(?P<id>[0-9a-zA-Z]+)', 'https://example.com/product/{id}/details'],
    [
      'PR (?P<id>[0-9]+)',
      'https://example.com/~user/web#view_type=type&model=model&action=12345&id={id}',
    ],
    ['!(?P<id>[0-9]+)', 'https://realm.com/index.pl?Action=AgentTicketZoom;TicketNumber={id}'],
    ['ZULZ-(?P<hello>\\d+)-(?P<world>\\d+)', 'https://realm.com/my_realm_filter/{hello}/{world}'],
    ['ZUL-URL-(?P<id>\\d+)', 'https://example.com/%ba/{id}'],
    [
      '(?P<org>[a-zA-Z0-9_-]+)/(?P<repo>[a-zA-Z0-9_-]+)#(?P<id>[0-9]+)',
      'https://github.com/{org}/{repo}/issue/{id}',
    ],
    [
      'FOO_(?P<id>[a-f]{5});(?P<zone>[a-f]);(?P<domain>[a-z]+);(?P<location>[a-z]+);(?P<name>[a-z]{2,8});(?P<chapter>[0-9]{2,3});(?P<fragment>[a-z]{2,8})',
      'https://zone_{zone}{.domain}.net/ticket{/location}{/id}{?name,chapter}{#fragment:5}',
    ],
  ] as const;
  for (const [pattern, url_template] of ok)
    assertSuccess(t, await post(pattern, url_template), pattern);
  const list = assertSuccess(t, await api.get('hamlet', 'realm/linkifiers'))
    .linkifiers as unknown[];
  t.equal(list.length, ok.length);
  // The same pattern twice is refused.
  const dup = await post('ZUL-(?P<id>\\d+)', 'https://other.example.com/{id}');
  assertError(t, dup, 'Realm filter with this Realm and Pattern already exists.');
});

t.test('test_update and test_delete', async (t) => {
  const { api } = await startServer(t);
  const { id } = assertSuccess(t, await api.post('iago', 'realm/filters', TRAC)) as { id: number };
  const upd = await api.patch('iago', `realm/filters/${id}`, {
    pattern: '#(?P<id>[0-9]+)',
    url_template: 'https://realm.com/my_realm_filter/issues/{id}',
  });
  assertSuccess(t, upd);
  assertMatchesOpenApi(t, '/realm/filters/{filter_id}', 'patch', upd.body);
  t.same(assertSuccess(t, await api.get('iago', 'realm/linkifiers')).linkifiers, [
    {
      pattern: '#(?P<id>[0-9]+)',
      url_template: 'https://realm.com/my_realm_filter/issues/{id}',
      id,
    },
  ]);
  assertError(
    t,
    await api.patch('iago', `realm/filters/${id}`, {
      pattern: 'ZUL-(?P<id>\\d????)',
      url_template: 'https://x/{id}',
    }),
    'Bad regular expression: bad repetition operator: ????',
  );
  assertError(t, await api.patch('iago', `realm/filters/${id + 1}`, TRAC), 'Linkifier not found.');
  assertError(
    t,
    await api.patch('iago', `realm/filters/${id}`, { ...TRAC, url_template: '{id' }),
    'Invalid URL template.',
  );
  assertError(t, await api.patch('iago', 'realm/filters/abc', TRAC), 'filter_id is not an integer');

  assertError(t, await api.delete('iago', `realm/filters/${id + 1}`), 'Linkifier not found.');
  const del = await api.delete('iago', `realm/filters/${id}`);
  assertSuccess(t, del);
  assertMatchesOpenApi(t, '/realm/filters/{filter_id}', 'delete', del.body);
  t.same(assertSuccess(t, await api.get('iago', 'realm/linkifiers')).linkifiers, []);
});

t.test('test_reorder_linkifiers: order is kept, new ones go last', async (t) => {
  const { api } = await startServer(t);
  assertSuccess(t, await api.patch('iago', 'realm/linkifiers', { ordered_linkifier_ids: [] }));
  const ids: number[] = [];
  for (const n of [1, 2, 3]) {
    const r = await api.post('iago', 'realm/filters', {
      pattern: `${n}#(?P<id>[123])`,
      url_template: `https://f.com/${n}/{id}`,
    });
    ids.push((assertSuccess(t, r) as { id: number }).id);
  }
  const order = async () =>
    (
      assertSuccess(t, await api.get('hamlet', 'realm/linkifiers')).linkifiers as { id: number }[]
    ).map((l) => l.id);
  t.same(await order(), ids);
  const reversed = [...ids].reverse();
  assertSuccess(
    t,
    await api.patch('iago', 'realm/linkifiers', { ordered_linkifier_ids: reversed }),
  );
  t.same(await order(), reversed);
  const r = await api.post('iago', 'realm/filters', {
    pattern: '3#123',
    url_template: 'https://example.com',
  });
  const newId = (assertSuccess(t, r) as { id: number }).id;
  t.same(await order(), [...reversed, newId]);
  assertError(
    t,
    await api.patch('iago', 'realm/linkifiers', { ordered_linkifier_ids: [ids[0]] }),
    'Invalid order mapping.',
  );
  assertError(
    t,
    await api.patch('iago', 'realm/linkifiers', {
      ordered_linkifier_ids: [...reversed, newId, newId],
    }),
    'Invalid order mapping.',
  );
  assertError(
    t,
    await api.patch('hamlet', 'realm/linkifiers', { ordered_linkifier_ids: reversed }),
    'Must be an organization administrator',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
});

t.test('realm_linkifiers events go to every active user, after each change', async (t) => {
  const { api, fx, events } = await startServer(t);
  events.length = 0;
  const { id } = assertSuccess(t, await api.post('iago', 'realm/filters', TRAC)) as { id: number };
  const everyone = activeUserIds(fx);
  t.equal(events.length, 1);
  t.same(events[0]!.event, {
    type: 'realm_linkifiers',
    realm_linkifiers: [{ pattern: TRAC.pattern, url_template: TRAC.url_template, id }],
  });
  t.same(
    [...events[0]!.users].sort((a, b) => a - b),
    everyone,
  );
  assertSuccess(t, await api.delete('iago', `realm/filters/${id}`));
  t.same(events[1]!.event, { type: 'realm_linkifiers', realm_linkifiers: [] });
  // A refused change emits nothing.
  await api.delete('iago', `realm/filters/${id}`);
  t.equal(events.length, 2);
});

t.test(
  'register snapshot: realm_linkifiers with the capability, realm_filters empty',
  async (t) => {
    const { api, server, fx } = await startServer(t);
    const { id } = assertSuccess(t, await api.post('iago', 'realm/filters', TRAC)) as {
      id: number;
    };
    const { config } = server.context;
    const store = server.store;
    const realm = server.context.realms.get(fx.realmId)!.view;
    const capabilities = {
      notification_settings_null: false,
      bulk_message_deletion: false,
      user_avatar_url_field_optional: false,
      stream_typing_notifications: false,
      user_settings_object: false,
      linkifier_url_template: true,
      user_list_incomplete: false,
      include_deactivated_groups: false,
      archived_channels: false,
      empty_topic_name: false,
      simplified_presence_events: false,
    };
    const req: StateRequest = {
      store,
      config,
      realm,
      user: realm.user(fx.users.hamlet!.id)!,
      fetchEventTypes: new Set(['realm_linkifiers', 'realm_filters']),
      serverGeneration: 1,
      capabilities,
      applyMarkdown: true,
      clientExtAvatar: true,
      includeSubscribers: false,
      slimPresence: false,
      narrow: [],
      dialect: 'spec',
    };
    const state = fetchInitialState(req);
    t.same(state.realm_linkifiers, [
      { pattern: TRAC.pattern, url_template: TRAC.url_template, id },
    ]);
    t.same(state.realm_filters, []);
    const old = fetchInitialState({
      ...req,
      capabilities: { ...capabilities, linkifier_url_template: false },
    });
    t.same(old.realm_linkifiers, [], 'clients without linkifier_url_template get an empty list');
    const only = fetchInitialState({ ...req, fetchEventTypes: new Set(['realm_user']) });
    t.notOk('realm_linkifiers' in only, 'not asked, not filled');
  },
);

t.test(
  'rendering uses the realm linkifiers as soon as they change (test_realm_patterns)',
  async (t) => {
    const { api } = await startServer(t);
    const render = async (content: string) =>
      assertSuccess(t, await api.post('hamlet', 'messages/render', { content })).rendered as string;
    const content =
      'We should fix #224 #336 #446 and #115, but not issue#124 or #1124z or [trac #15](https://trac.example.com/ticket/16) today.';
    t.equal(render.length, 1);
    t.equal(
      await render(content),
      '<p>We should fix #224 #336 #446 and #115, but not issue#124 or #1124z or <a href="https://trac.example.com/ticket/16">trac #15</a> today.</p>',
    );
    const { id } = assertSuccess(
      t,
      await api.post('iago', 'realm/filters', {
        pattern: '#(?P<id>[0-9]{2,8})',
        url_template: 'https://trac.example.com/ticket/{id}',
      }),
    ) as { id: number };
    t.equal(
      await render(content),
      '<p>We should fix <a href="https://trac.example.com/ticket/224">#224</a> <a href="https://trac.example.com/ticket/336">#336</a> <a href="https://trac.example.com/ticket/446">#446</a> and <a href="https://trac.example.com/ticket/115">#115</a>, but not issue#124 or #1124z or <a href="https://trac.example.com/ticket/16">trac #15</a> today.</p>',
    );
    assertSuccess(t, await api.delete('iago', `realm/filters/${id}`));
    t.equal(await render('#224'), '<p>#224</p>');
  },
);
