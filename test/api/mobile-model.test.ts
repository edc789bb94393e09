/**
 * The mobile app's model (zulip-flutter, `lib/api/model/`) against the running server: the app
 * registers with its own parameters and capabilities and its User-Agent, then every kind of event
 * it handles is caused and checked against the model the app parses it into (test/helpers/
 * mobile-model.ts), as are the register snapshot (fresh, and again with every area populated),
 * GET /server_settings, GET /messages with the app's parameters, the emoji data file and the
 * avatar fallback. docs/clients.md lists what is checked.
 */
import t from 'tap';
import {
  assertSuccess,
  basicAuth,
  rawRequest,
  type ApiResponse,
  type Params,
} from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { until, type Ev } from '../helpers/events.js';
import { multipartWithFile, tinyPng } from '../helpers/images.js';
import { sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';
import {
  APP_REGISTER_PARAMS,
  APP_USER_AGENT,
  eventSchema,
  GetMessagesResult,
  GetServerSettingsResult,
  InitialSnapshot,
  problems,
  ServerEmojiData,
} from '../helpers/mobile-model.js';
import { startServer } from '../helpers/server.js';

const APP = { 'user-agent': APP_USER_AGENT };

/** Every event type (and op) the app reads into a class of its own, that this server sends. */
const EXPECTED_KINDS = [
  'alert_words',
  'custom_profile_fields',
  'delete_message',
  'heartbeat',
  'message',
  'muted_users',
  'presence',
  'reaction add',
  'reaction remove',
  'realm_emoji update',
  'realm_user add',
  'realm_user update',
  'saved_snippets add',
  'saved_snippets remove',
  'saved_snippets update',
  'channel_folder add',
  'stream create',
  'stream delete',
  'stream update',
  'subscription add',
  'subscription peer_add',
  'subscription peer_remove',
  'subscription remove',
  'subscription update',
  'typing start',
  'typing stop',
  'update_message',
  'update_message_flags add',
  'update_message_flags remove',
  'user_group add',
  'user_group add_members',
  'user_group add_subgroups',
  'user_group remove_members',
  'user_group remove_subgroups',
  'user_group update',
  'user_settings update',
  'user_status',
  'user_topic',
];

t.test('the mobile app can add the account, load and follow every change', async (t) => {
  const ts = await startServer(t, { heartbeatMs: 50, heartbeatJitterMs: 0 });
  const { api, fx, url } = ts;
  const id = (name: string) => fx.users[name]!.id;
  const app = (method: string, path: string, params: Params = {}) =>
    api.request(method, 'desdemona', path, params, { headers: APP });

  // Adding the account: server settings, then register.
  const settings = await api.get(null, 'server_settings', {}, { headers: APP });
  t.same(problems(GetServerSettingsResult, settings.body), [], 'GET /server_settings');
  const first = assertSuccess(t, await app('POST', 'register', APP_REGISTER_PARAMS));
  t.same(problems(InitialSnapshot, first), [], 'the register snapshot of a fresh realm');

  const queueId = first.queue_id as string;
  let last = first.last_event_id as number;
  const seen = new Set<string>();
  const checkEvents = async (what: string) => {
    const res = await app('GET', 'events', {
      queue_id: queueId,
      last_event_id: last,
      dont_block: true,
    });
    const evs = assertSuccess(t, res, `events after ${what}`).events as Ev[];
    for (const e of evs) {
      last = e.id;
      const schema = eventSchema(e);
      if (!schema) continue; // the app reads it as an UnexpectedEvent and ignores it
      const kind = [e.type, e.op].filter((x) => typeof x === 'string').join(' ');
      seen.add(kind);
      t.same(problems(schema, e), [], `${what}: ${kind} event`, { event: e });
    }
  };
  const ok = (res: ApiResponse, what: string) => assertSuccess(t, res, what);

  // Settings, alert words, custom profile fields, custom emoji.
  ok(
    await app('PATCH', 'settings', { emojiset: 'twitter', twenty_four_hour_time: true }),
    'settings',
  );
  ok(await app('POST', 'users/me/alert_words', { alert_words: ['apple'] }), 'alert words');
  ok(
    await app('POST', 'realm/profile_fields', { name: 'Phone', field_type: 1, hint: 'a number' }),
    'profile field',
  );
  const u = fx.users.desdemona!;
  const mp = multipartWithFile({ name: 'e.png', type: 'image/png', data: tinyPng() });
  ok(
    await rawRequest(url, {
      method: 'POST',
      path: '/api/v1/realm/emoji/green_tick',
      headers: { authorization: basicAuth(u.email, u.api_key), 'content-type': mp.contentType },
      body: mp.body,
    }),
    'custom emoji',
  );
  await checkEvents('settings, alert words, profile fields, custom emoji');

  // User groups.
  const g1 = ok(
    await app('POST', 'user_groups/create', {
      name: 'leads',
      description: 'the leads',
      members: [id('hamlet')],
    }),
    'group',
  ).group_id as number;
  const g2 = ok(
    await app('POST', 'user_groups/create', { name: 'all leads', description: '', members: [] }),
    'group',
  ).group_id as number;
  ok(await app('PATCH', `user_groups/${g1}`, { name: 'team leads' }), 'rename');
  ok(await app('POST', `user_groups/${g1}/members`, { add: [id('othello')] }), 'add members');
  ok(await app('POST', `user_groups/${g1}/members`, { delete: [id('othello')] }), 'remove');
  ok(await app('POST', `user_groups/${g2}/subgroups`, { add: [g1] }), 'add subgroup');
  ok(await app('POST', `user_groups/${g2}/subgroups`, { delete: [g1] }), 'remove subgroup');
  ok(await app('POST', `user_groups/${g2}/deactivate`), 'deactivate');
  await checkEvents('user groups');

  // Users.
  const newUser = ok(
    await api.post('iago', 'users', {
      email: 'newcomer@zulip.com',
      password: 'a long enough password',
      full_name: 'Newcomer',
    }),
    'create user',
  ).user_id as number;
  ok(await app('PATCH', `users/${newUser}`, { full_name: 'New Comer', role: 300 }), 'update user');
  ok(await app('DELETE', `users/${newUser}`), 'deactivate user');
  ok(await app('PATCH', 'settings', { full_name: 'Desdemona D.' }), 'own name');
  await checkEvents('users');

  // Saved snippets.
  const snippet = ok(
    await app('POST', 'saved_snippets', { title: 'hi', content: 'hello there' }),
    'snippet',
  ).saved_snippet_id as number;
  ok(await app('PATCH', `saved_snippets/${snippet}`, { title: 'hello' }), 'edit snippet');
  ok(await app('DELETE', `saved_snippets/${snippet}`), 'remove snippet');
  await checkEvents('saved snippets');

  // Channels, subscriptions, folders.
  ok(
    await app('POST', 'channel_folders/create', { name: 'Projects', description: 'all of them' }),
    'folder',
  );
  const general = await createChannel(api, 'desdemona', 'general', {
    principals: [id('desdemona'), id('hamlet')],
  });
  const side = await createChannel(api, 'desdemona', 'side');
  ok(
    await app('PATCH', `streams/${general}`, { description: 'The **general** channel' }),
    'describe',
  );
  ok(await app('PATCH', `streams/${side}`, { new_name: 'side room' }), 'rename channel');
  ok(
    await app('POST', 'users/me/subscriptions/properties', {
      subscription_data: [
        { stream_id: general, property: 'color', value: '#aabbcc' },
        { stream_id: general, property: 'pin_to_top', value: true },
        { stream_id: general, property: 'is_muted', value: false },
      ],
    }),
    'subscription properties',
  );
  ok(
    await api.post('othello', 'users/me/subscriptions', { subscriptions: [{ name: 'general' }] }),
    'peer',
  );
  ok(await api.delete('othello', 'users/me/subscriptions', { subscriptions: ['general'] }), 'peer');
  ok(
    await app('DELETE', 'users/me/subscriptions', { subscriptions: ['side room'] }),
    'unsubscribe',
  );
  ok(await app('DELETE', `streams/${side}`), 'archive');
  await checkEvents('channels and subscriptions');

  // Statuses, topics, muting, presence.
  ok(
    await app('POST', 'users/me/status', {
      status_text: 'on duty',
      emoji_name: 'zulip',
      emoji_code: 'zulip',
      reaction_type: 'zulip_extra_emoji',
    }),
    'status',
  );
  ok(
    await app('POST', 'user_topics', { stream_id: general, topic: 'lunch', visibility_policy: 3 }),
    'user topic',
  );
  ok(await app('POST', `users/me/muted_users/${id('polonius')}`), 'mute');
  ok(
    await api.post('hamlet', 'users/me/presence', { status: 'active', new_user_input: true }),
    'presence',
  );
  await checkEvents('status, topics, muting, presence');

  // Messages: sending, editing, moving, reacting, flags, typing, deleting.
  const m1 = await sendChannelMessage(
    api,
    'hamlet',
    general,
    'lunch',
    'Lunch at **noon**? @**Desdemona D.**',
  );
  const m2 = await sendChannelMessage(api, 'desdemona', general, '', 'in the general chat');
  const dm = await sendDirectMessage(api, 'hamlet', [id('desdemona')], 'a word in private');
  ok(await api.patch('hamlet', `messages/${m1}`, { content: 'Lunch at **one**?' }), 'edit');
  ok(
    await app('PATCH', `messages/${m2}`, { topic: 'moved', propagate_mode: 'change_one' }),
    'move',
  );
  for (const emoji of ['smile', 'zulip', 'green_tick']) {
    ok(await app('POST', `messages/${m1}/reactions`, { emoji_name: emoji }), `react ${emoji}`);
  }
  ok(await app('DELETE', `messages/${m1}/reactions`, { emoji_name: 'smile' }), 'unreact');
  ok(await api.post('hamlet', `messages/${m1}/reactions`, { emoji_name: 'zulip' }), 'react');
  ok(await app('POST', 'messages/flags', { messages: [m1], op: 'add', flag: 'starred' }), 'star');
  ok(await app('POST', 'messages/flags', { messages: [m1, dm], op: 'add', flag: 'read' }), 'read');
  ok(
    await app('POST', 'messages/flags', { messages: [m1, dm], op: 'remove', flag: 'read' }),
    'unread',
  );
  ok(await api.post('hamlet', 'typing', { op: 'start', to: [id('desdemona')] }), 'typing');
  ok(await api.post('hamlet', 'typing', { op: 'stop', to: [id('desdemona')] }), 'typing');
  ok(
    await api.post('hamlet', 'typing', {
      type: 'channel',
      op: 'start',
      stream_id: general,
      topic: 'lunch',
    }),
    'typing',
  );
  const doomed = await sendChannelMessage(api, 'desdemona', general, 'lunch', 'oops');
  ok(await app('DELETE', `messages/${doomed}`), 'delete');
  await checkEvents('messages');

  // A heartbeat, on a poll that waits.
  const held = app('GET', 'events', { queue_id: queueId, last_event_id: last });
  await until(() => ts.server.context.queues.consumers().waiting === 0, 'heartbeat');
  const beat = assertSuccess(t, await held).events as Ev[];
  for (const e of beat) {
    last = e.id;
    seen.add(e.type);
    t.same(problems(eventSchema(e)!, e), [], 'heartbeat event');
  }

  t.same(
    EXPECTED_KINDS.filter((k) => !seen.has(k)),
    [],
    'every kind of event the app handles was caused and checked',
  );

  // Loading again, with every area populated.
  const full = assertSuccess(t, await app('POST', 'register', APP_REGISTER_PARAMS));
  t.same(problems(InitialSnapshot, full), [], 'the register snapshot of a busy realm');
  t.equal((full.user_settings as { emojiset: string }).emojiset, 'twitter');

  // Message lists, as the app fetches them.
  for (const narrow of [
    [],
    [{ operator: 'channel', operand: general }],
    [{ operator: 'dm', operand: [id('hamlet')] }],
    [{ operator: 'is', operand: 'starred' }],
  ]) {
    const res = await app('GET', 'messages', {
      narrow,
      anchor: 'newest',
      num_before: 100,
      num_after: 0,
      client_gravatar: false,
      apply_markdown: true,
      allow_empty_topic_name: true,
    });
    const body = assertSuccess(t, res);
    t.same(problems(GetMessagesResult, body), [], `GET /messages ${JSON.stringify(narrow)}`);
    t.ok((body.messages as unknown[]).length > 0, 'messages found');
  }
  const withReactions = assertSuccess(
    t,
    await app('GET', 'messages', {
      anchor: m1,
      num_before: 0,
      num_after: 0,
      allow_empty_topic_name: true,
    }),
  );
  t.same(
    problems(GetMessagesResult, withReactions),
    [],
    'a message whose reactions include the extra emoji',
  );

  // The emoji data file and the avatar fallback.
  const emojiUrl = new URL(full.server_emoji_data_url as string);
  const emoji = await rawRequest(url, { method: 'GET', path: emojiUrl.pathname, headers: APP });
  t.equal(emoji.status, 200);
  t.same(problems(ServerEmojiData, emoji.body), [], 'the emoji data file');
  const avatar = await rawRequest(url, {
    method: 'GET',
    path: `/avatar/${id('hamlet')}`,
    headers: { ...APP, authorization: basicAuth(u.email, u.api_key) },
  });
  t.equal(avatar.status, 302, '/avatar/{user_id} redirects');
  t.ok(URL.canParse(avatar.headers.location!, url), 'to the avatar');
  const medium = await rawRequest(url, {
    method: 'GET',
    path: `/avatar/${id('hamlet')}/medium`,
    headers: { ...APP, authorization: basicAuth(u.email, u.api_key) },
  });
  t.equal(medium.status, 302, '/avatar/{user_id}/medium redirects');
});
