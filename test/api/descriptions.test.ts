/**
 * Rendered descriptions and channel links: channel and channel-folder descriptions, and the realm
 * description of GET /server_settings, go through the markdown renderer with the realm's context
 * (channels included, refreshed when channels are created, renamed or archived), without image
 * previews; channel links follow what the acting user may see, as the reference's
 * render_stream_description and get_stream_name_map do. POST /messages/render resolves channel
 * links the same way for its caller. Reference tests: test_subs.py (test_change_stream_description),
 * test_markdown.py (MarkdownStreamTopicMentionTests).
 */
import t, { type Test } from 'tap';
import { assertSuccess } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { register } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { SERVER_SETTINGS_EXTRAS } from '../helpers/spec-extras.js';
import { startServer, type TestServer } from '../helpers/server.js';

const channelLink = (id: number, slug: string, name: string) =>
  `<a class="stream" data-stream-id="${id}" href="/#narrow/channel/${id}-${slug}">#${name}</a>`;
const topicLink = (id: number, slug: string, name: string, topic: string, topicSlug: string) =>
  `<a class="stream-topic" data-stream-id="${id}" href="/#narrow/channel/${id}-${slug}/topic/${topicSlug}">#${name} &gt; ${topic}</a>`;

type Ctx = TestServer & { t: Test };

async function rendered(s: Ctx, who: string, content: string): Promise<string> {
  const res = await s.api.post(who, 'messages/render', { content });
  const body = assertSuccess(s.t, res, `render as ${who}`);
  return body.rendered as string;
}

async function channelDescription(s: Ctx, who: string, id: number): Promise<unknown> {
  const body = assertSuccess(s.t, await s.api.get(who, `streams/${id}`));
  return (body.stream as { rendered_description: unknown }).rendered_description;
}

t.test('a channel description renders markdown and channel links', async (t) => {
  const s = Object.assign(await startServer(t), { t });
  const { api } = s;
  const verona = await createChannel(api, 'hamlet', 'Verona');
  const hamlet = await register(t, api, 'hamlet', { event_types: ['stream'] });
  const text = '**Plans** for #**Verona** (see #**Verona>lunch**): https://example.com/cat.png';
  assertSuccess(t, await api.patch('hamlet', `streams/${verona}`, { description: text }));
  const html =
    `<p><strong>Plans</strong> for ${channelLink(verona, 'Verona', 'Verona')} ` +
    `(see ${topicLink(verona, 'Verona', 'Verona', 'lunch', 'lunch')}): ` +
    '<a href="https://example.com/cat.png">https://example.com/cat.png</a></p>';
  t.equal(await channelDescription(s, 'hamlet', verona), html, 'no image preview');
  const evs = assertSuccess(
    t,
    await api.get('hamlet', 'events', {
      queue_id: hamlet.queue_id,
      last_event_id: -1,
      dont_block: true,
    }),
  );
  assertMatchesOpenApi(t, '/events', 'get', evs);
  t.match(evs.events, [{ type: 'stream', op: 'update', property: 'description', value: text }]);
  t.equal((evs.events as { rendered_description: string }[])[0]!.rendered_description, html);

  // Creating channels with descriptions: the same renderer.
  assertSuccess(
    t,
    await api.post('othello', 'users/me/subscriptions', {
      subscriptions: [{ name: 'Denmark', description: 'Next to #**Verona**, *roughly*' }],
    }),
  );
  const denmark = await createChannel(api, 'othello', 'Denmark');
  t.equal(
    await channelDescription(s, 'othello', denmark),
    `<p>Next to ${channelLink(verona, 'Verona', 'Verona')}, <em>roughly</em></p>`,
  );
  // A plain description is one paragraph (the reference's rendering of plain text); empty is empty.
  assertSuccess(t, await api.patch('othello', `streams/${denmark}`, { description: 'a < b & c' }));
  t.equal(await channelDescription(s, 'othello', denmark), '<p>a &lt; b &amp; c</p>');
  assertSuccess(t, await api.patch('othello', `streams/${denmark}`, { description: '' }));
  t.equal(await channelDescription(s, 'othello', denmark), '');

  // Channel folders too.
  const folder = assertSuccess(
    t,
    await api.post('iago', 'channel_folders/create', {
      name: 'Europe',
      description: 'Includes #**Denmark**',
    }),
  ).channel_folder_id as number;
  const folders = assertSuccess(t, await api.get('iago', 'channel_folders')).channel_folders as {
    id: number;
    rendered_description: string;
  }[];
  t.equal(
    folders.find((f) => f.id === folder)!.rendered_description,
    `<p>Includes ${channelLink(denmark, 'Denmark', 'Denmark')}</p>`,
  );
});

t.test('channel links in descriptions follow the acting user’s access', async (t) => {
  const s = Object.assign(await startServer(t), { t });
  const { api, fx } = s;
  const secret = await createChannel(api, 'iago', 'secret', { invite_only: true });
  const pub = await createChannel(api, 'hamlet', 'pub');
  // hamlet is not subscribed to the private channel: it renders as if it did not exist.
  assertSuccess(
    t,
    await api.patch('hamlet', `streams/${pub}`, { description: 'Unlike #**secret**.' }),
  );
  t.equal(await channelDescription(s, 'hamlet', pub), '<p>Unlike #<strong>secret</strong>.</p>');
  // iago (subscribed) gets the link.
  assertSuccess(
    t,
    await api.patch('iago', `streams/${pub}`, { description: 'Unlike #**secret**.' }),
  );
  t.equal(
    await channelDescription(s, 'hamlet', pub),
    `<p>Unlike ${channelLink(secret, 'secret', 'secret')}.</p>`,
  );
  // The owner may know the channel exists but has no content access: no link.
  assertSuccess(
    t,
    await api.patch('desdemona', `streams/${pub}`, { description: 'Beside #**secret**' }),
  );
  t.equal(await channelDescription(s, 'hamlet', pub), '<p>Beside #<strong>secret</strong></p>');
  // A guest subscribed to the private channel may link it.
  assertSuccess(
    t,
    await api.post('iago', 'users/me/subscriptions', {
      subscriptions: [{ name: 'secret' }],
      principals: [fx.users.polonius!.id],
    }),
  );
  t.equal(
    await rendered(s, 'polonius', '#**secret**'),
    `<p>${channelLink(secret, 'secret', 'secret')}</p>`,
  );
});

t.test('POST /messages/render links only channels the sender may read', async (t) => {
  const s = Object.assign(await startServer(t), { t });
  const { api, fx } = s;
  const secret = await createChannel(api, 'iago', 'secret', {
    invite_only: true,
    principals: [fx.users.iago!.id, fx.users.polonius!.id],
  });
  const pub = await createChannel(api, 'hamlet', 'pub');
  const content = '#**secret** #**secret>plans** #**pub**';
  const linked =
    `<p>${channelLink(secret, 'secret', 'secret')} ` +
    `${topicLink(secret, 'secret', 'secret', 'plans', 'plans')} ` +
    `${channelLink(pub, 'pub', 'pub')}</p>`;
  const hidden = `<p>#<strong>secret</strong> #<strong>secret&gt;plans</strong> ${channelLink(pub, 'pub', 'pub')}</p>`;
  t.equal(await rendered(s, 'iago', content), linked, 'subscribed administrator');
  t.equal(await rendered(s, 'othello', content), hidden, 'member, not subscribed');
  t.equal(await rendered(s, 'desdemona', content), hidden, 'owner, not subscribed');
  t.equal(
    await rendered(s, 'polonius', content),
    `<p>${channelLink(secret, 'secret', 'secret')} ${topicLink(secret, 'secret', 'secret', 'plans', 'plans')} #<strong>pub</strong></p>`,
    'a guest: the private channel they are in, not the public one they are not',
  );
  t.equal(
    await rendered(s, 'othello', '#**secret>plans@12**'),
    '<p>#<strong>secret&gt;plans@12</strong></p>',
  );
  t.equal(
    await rendered(s, 'iago', '#**secret>plans@12**'),
    `<p><a class="message-link" href="/#narrow/channel/${secret}-secret/topic/plans/near/12">#secret &gt; plans @ 💬</a></p>`,
  );
  // Names are exact (the reference's links are case-sensitive).
  t.equal(await rendered(s, 'iago', '#**PUB**'), '<p>#<strong>PUB</strong></p>');
});

t.test('the render context follows channel creation, renaming and archiving', async (t) => {
  const s = Object.assign(await startServer(t), { t });
  const { api } = s;
  const verona = await createChannel(api, 'hamlet', 'Verona');
  t.equal(
    await rendered(s, 'hamlet', '#**Verona**'),
    `<p>${channelLink(verona, 'Verona', 'Verona')}</p>`,
  );
  t.equal(await rendered(s, 'hamlet', '#**Denmark**'), '<p>#<strong>Denmark</strong></p>');
  const denmark = await createChannel(api, 'hamlet', 'Denmark');
  t.equal(
    await rendered(s, 'hamlet', '#**Denmark**'),
    `<p>${channelLink(denmark, 'Denmark', 'Denmark')}</p>`,
    'a new channel links at once',
  );
  assertSuccess(t, await api.patch('hamlet', `streams/${denmark}`, { new_name: 'Danmark' }));
  t.equal(await rendered(s, 'hamlet', '#**Denmark**'), '<p>#<strong>Denmark</strong></p>');
  t.equal(
    await rendered(s, 'hamlet', '#**Danmark**'),
    `<p>${channelLink(denmark, 'Danmark', 'Danmark')}</p>`,
    'a renamed channel links by its new name',
  );
  assertSuccess(t, await api.delete('hamlet', `streams/${denmark}`));
  t.equal(
    await rendered(s, 'hamlet', '#**Danmark**'),
    `<p>${channelLink(denmark, 'Danmark', 'Danmark')}</p>`,
    'an archived channel still links, as the reference',
  );
});

t.test('the realm description is rendered in GET /server_settings, raw in register', async (t) => {
  const s = Object.assign(await startServer(t), { t });
  const { api, fx, server } = s;
  const verona = await createChannel(api, 'hamlet', 'Verona');
  const realm = server.context.realms.get(fx.realmId)!;
  const text = 'Welcome to **Zulip Dev**: start in #**Verona**. https://example.com/logo.png';
  await realm.ask('realm.update_settings', { acting_user_id: null, description: text });
  const res = await api.get(null, 'server_settings');
  const body = assertSuccess(t, res);
  assertMatchesOpenApi(t, '/server_settings', 'get', body, {
    allowExtra: SERVER_SETTINGS_EXTRAS,
  });
  t.equal(
    body.realm_description,
    `<p>Welcome to <strong>Zulip Dev</strong>: start in ${channelLink(verona, 'Verona', 'Verona')}. ` +
      '<a href="https://example.com/logo.png">https://example.com/logo.png</a></p>',
  );
  const snap = await register(t, api, 'hamlet', { fetch_event_types: ['realm'] });
  t.equal(snap.body.realm_description, text, 'register carries the markdown source');
  // Renaming the channel re-renders the cached description.
  assertSuccess(t, await api.patch('hamlet', `streams/${verona}`, { new_name: 'Padua' }));
  t.equal(
    assertSuccess(t, await api.get(null, 'server_settings')).realm_description,
    '<p>Welcome to <strong>Zulip Dev</strong>: start in #<strong>Verona</strong>. ' +
      '<a href="https://example.com/logo.png">https://example.com/logo.png</a></p>',
  );
});
