/**
 * POST /messages/render: the preview of a message, rendered with the realm's users and groups,
 * inline for short content and in the worker pool for long content (same HTML either way).
 */
import t from 'tap';
import { sendChannelMessage } from '../helpers/messages.js';
import { assertError, assertSuccess } from '../helpers/api.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';

t.test('renders markdown with mentions of the realm users', async (t) => {
  const { api, fx } = await startServer(t);
  const res = await api.post('hamlet', 'messages/render', {
    content: '**foo** @**Othello** @_**Cordelia** @**nobody**',
  });
  assertSuccess(t, res);
  assertMatchesOpenApi(t, '/messages/render', 'post', res.body);
  t.equal(
    res.body.rendered,
    `<p><strong>foo</strong> <span class="user-mention" data-user-id="${fx.users.othello!.id}">@Othello</span> <span class="user-mention silent" data-user-id="${fx.users.cordelia!.id}">Cordelia</span> @<strong>nobody</strong></p>`,
  );
  // System groups are named groups: they resolve as the reference resolves them.
  const group = await api.post(
    'hamlet',
    'messages/render',
    { content: '@*role:members*' },
    { encoding: 'multipart' },
  );
  t.match(
    assertSuccess(t, group).rendered,
    /^<p><span class="user-group-mention" data-user-group-id="\d+">@Members<\/span><\/p>$/,
  );
});

t.test('a user created later is mentionable at once', async (t) => {
  const { api } = await startServer(t);
  t.equal(
    assertSuccess(t, await api.post('hamlet', 'messages/render', { content: '@**Newbie**' }))
      .rendered,
    '<p>@<strong>Newbie</strong></p>',
  );
  const created = assertSuccess(
    t,
    await api.post('iago', 'users', {
      email: 'newbie@zulip.com',
      password: 'pw-123456',
      full_name: 'Newbie',
    }),
  );
  t.equal(
    assertSuccess(t, await api.post('hamlet', 'messages/render', { content: '@**Newbie**' }))
      .rendered,
    `<p><span class="user-mention" data-user-id="${String(created.user_id)}">@Newbie</span></p>`,
  );
});

t.test('long content goes through the worker pool and renders the same', async (t) => {
  const { api, server } = await startServer(t);
  const threshold = server.context.renderer.inlineThreshold;
  const para = 'Some *emphasis*, a :smile:, a link https://example.com/x and `code`.\n\n';
  const long = para.repeat(Math.ceil((threshold * 2) / para.length));
  t.ok(long.length >= threshold, 'over the inline threshold');
  const viaPool = assertSuccess(t, await api.post('othello', 'messages/render', { content: long }))
    .rendered as string;
  const inline = server.context.renderer;
  const { renderContextFor } = await import('../../src/queries/render-context.js');
  const realm = server.context.realms.loaded()[0]!;
  const ctx = renderContextFor(server.context.config, server.store, realm.view);
  const { renderMarkdown } = await import('../../src/lib/markdown/index.js');
  t.equal(viaPool, renderMarkdown(long, ctx).rendered_content);
  t.equal(viaPool.split('<p>').length - 1, long.split('\n\n').length - 1);
  const batch = await inline.inWorker([{ content: 'a' }, { content: '**b**' }], ctx);
  t.same(
    batch.map((r) => r.rendered_content),
    ['<p>a</p>', '<p><strong>b</strong></p>'],
  );
});

t.test('hostile content renders as text', async (t) => {
  const { api } = await startServer(t);
  const res = await api.post('hamlet', 'messages/render', {
    content: '<script>alert(1)</script> [x](javascript:alert(1))',
  });
  t.equal(
    assertSuccess(t, res).rendered,
    '<p>&lt;script&gt;alert(1)&lt;/script&gt; [x](javascript:alert(1))</p>',
  );
});

t.test('content is required; empty content renders empty', async (t) => {
  const { api } = await startServer(t);
  assertError(t, await api.post('hamlet', 'messages/render', {}), "Missing 'content' argument", {
    code: 'REQUEST_VARIABLE_MISSING',
  });
  t.equal(
    assertSuccess(t, await api.post('hamlet', 'messages/render', { content: '' })).rendered,
    '',
  );
  const unauth = await api.post(null, 'messages/render', { content: 'x' });
  t.equal(unauth.status, 401);
});

// zerver/lib/markdown: StreamTopicPattern.get_with_operand, get_user_group_mention_display_name
t.test('topic links carry /with/<first message>; system groups show display names', async (t) => {
  const { api } = await startServer(t);
  await api.post('iago', 'users/me/subscriptions', { subscriptions: [{ name: 'plans' }] });
  const first = await sendChannelMessage(api, 'iago', 'plans', 'Trip', 'first');
  await sendChannelMessage(api, 'iago', 'plans', 'Trip', 'second');
  const r = await api.post('iago', 'messages/render', {
    content: '#**plans>Trip** #**plans>none yet** @_*role:administrators*',
  });
  const html = String(assertSuccess(t, r).rendered);
  t.match(html, new RegExp(`href="/#narrow/channel/\\d+-plans/topic/Trip/with/${first}"`));
  t.match(
    html,
    /href="\/#narrow\/channel\/\d+-plans\/topic\/none\.20yet">/,
    'no messages: no /with/',
  );
  t.match(
    html,
    /<span class="user-group-mention silent" data-user-group-id="\d+">Administrators<\/span>/,
  );
  const id = await sendChannelMessage(api, 'iago', 'plans', 'Trip', 'see #**plans>Trip**');
  const m = await api.get('iago', 'messages', { message_ids: [id] });
  t.match((m.body.messages as { content: string }[])[0]!.content, `/with/${first}"`, 'sending too');
});
