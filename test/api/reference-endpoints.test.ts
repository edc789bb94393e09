/**
 * Endpoints at or below the advertised feature level that existing clients call:
 * GET /users/{email}, DELETE /users/me, POST /messages/{message_id}/report (feature level 382),
 * GET /streams/{stream_id}/email_address (feature level 226; the Python bindings call it).
 * Reference: views/users.py (get_user_by_email, deactivate_user_own_backend),
 * views/message_report.py, lib/message_report.py.
 */
import t from 'tap';
import { insertUserRow } from '../../src/mutations/users.js';
import { assertError, assertSuccess } from '../helpers/api.js';
import { createChannel, setRealmSettings } from '../helpers/channels.js';
import { events, register } from '../helpers/events.js';
import { sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';
import { USER_SPEC_EXTRAS } from '../helpers/spec-extras.js';
import { useExternalAvatars } from '../helpers/realms.js';

t.test('GET /users/{email}', async (t) => {
  const { api, fx, server } = await startServer(t);
  await useExternalAvatars(server, fx.realmId);
  const hamlet = fx.users.hamlet!;
  const res = await api.get('othello', `users/${hamlet.email}`);
  assertMatchesOpenApi(t, '/users/{email}', 'get', res.body, { allowExtra: USER_SPEC_EXTRAS });
  t.match(assertSuccess(t, res).user, {
    user_id: hamlet.id,
    email: hamlet.email,
    full_name: 'Hamlet',
  });
  t.match(
    assertSuccess(t, await api.get('othello', `users/${hamlet.email.toUpperCase()}`)).user,
    { user_id: hamlet.id },
    'addresses are case-insensitive',
  );
  const withFields = assertSuccess(
    t,
    await api.get('othello', `users/${encodeURIComponent(hamlet.email)}`, {
      include_custom_profile_fields: true,
      client_gravatar: false,
    }),
  ).user as { profile_data: unknown; avatar_url: string };
  t.type(withFields.profile_data, 'object', 'the same parameters as by id');
  t.match(withFields.avatar_url, /^https:/);
  assertError(t, await api.get('othello', 'users/nobody@zulip.com'), 'No such user');
  assertError(t, await api.get('othello', 'users/not-an-address'), 'No such user');
  t.match(
    assertSuccess(t, await api.get('othello', `users/${hamlet.id}`)).user,
    { user_id: hamlet.id },
    'an id still works',
  );

  // A hidden address: the API address is the dummy one; the real one only for those who may see it.
  assertSuccess(t, await api.patch('hamlet', 'settings', { email_address_visibility: 3 }));
  const dummy = `user${hamlet.id}@testserver.local`;
  t.match(assertSuccess(t, await api.get('othello', `users/${dummy}`)).user, {
    user_id: hamlet.id,
    email: dummy,
  });
  assertError(t, await api.get('othello', `users/${hamlet.email}`), 'No such user');
  t.match(
    assertSuccess(t, await api.get('iago', `users/${hamlet.email}`)).user,
    { user_id: hamlet.id, delivery_email: hamlet.email },
    'an administrator may look up the real address',
  );
  assertError(
    t,
    await api.get('othello', `users/user${hamlet.id}@elsewhere.example`),
    'No such user',
    {},
  );
});

t.test('DELETE /users/me', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const q = await register(t, api, 'othello', { event_types: ['realm_user'] });
  const res = await api.delete('hamlet', 'users/me');
  assertMatchesOpenApi(t, '/users/me', 'delete', res.body);
  assertSuccess(t, res);
  assertError(t, await api.get('hamlet', 'users/me'), 'Account is deactivated', {
    status: 401,
    code: 'UNAUTHORIZED',
  });
  t.match(await events(t, api, 'othello', q.queue_id, -1, true), [
    {
      type: 'realm_user',
      op: 'update',
      person: { user_id: fx.users.hamlet!.id, is_active: false },
    },
  ]);

  const last = await api.delete('desdemona', 'users/me');
  assertError(t, last, 'Cannot deactivate the only organization owner.', {
    code: 'CANNOT_DEACTIVATE_LAST_USER',
  });
  t.match(last.body, { is_last_owner: true, entity: 'organization owner' });
  assertMatchesOpenApi(t, '/users/me', 'delete', last.body, { status: '400' });

  // Everybody else leaves; the last active user may not.
  for (const name of ['iago', 'shiva', 'othello', 'cordelia', 'prospero', 'polonius']) {
    assertSuccess(t, await api.delete(name, 'users/me'), `${name} leaves`);
  }
  const only = await api.delete('desdemona', 'users/me');
  assertError(t, only, 'Cannot deactivate the only user.', { code: 'CANNOT_DEACTIVATE_LAST_USER' });
  t.match(only.body, { is_last_owner: false, entity: 'user' });
});

t.test('DELETE /users/me by an owner when another owner remains', async (t) => {
  const { api, fx } = await startServer(t);
  assertSuccess(t, await api.patch('desdemona', `users/${fx.users.iago!.id}`, { role: 100 }));
  assertSuccess(t, await api.delete('desdemona', 'users/me'));
  assertError(
    t,
    await api.delete('iago', 'users/me'),
    'Cannot deactivate the only organization owner.',
    {
      code: 'CANNOT_DEACTIVATE_LAST_USER',
    },
  );
});

t.test('POST /messages/{message_id}/report', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const general = await createChannel(api, 'othello', 'general');
  await api.post('hamlet', 'users/me/subscriptions', { subscriptions: [{ name: 'general' }] });
  const reported = await sendChannelMessage(
    api,
    'othello',
    general,
    'food',
    'I dip fries in\n```\nice cream\n```',
  );
  assertError(
    t,
    await api.post('hamlet', `messages/${reported}/report`, { report_type: 'spam' }),
    'Message reporting is not enabled in this organization.',
  );
  const modChannel = await createChannel(api, 'shiva', 'moderation', { invite_only: true });
  setRealmSettings(ts, { moderation_request_channel_id: modChannel });
  const mods = await register(t, api, 'shiva', { event_types: ['message'], apply_markdown: true });

  assertError(
    t,
    await api.post('hamlet', `messages/${reported}/report`, { report_type: 'rude' }),
    'Invalid report_type',
  );
  assertError(
    t,
    await api.post('hamlet', `messages/${reported}/report`, { report_type: 'other' }),
    'An explanation is required.',
  );
  assertError(
    t,
    await api.post('hamlet', `messages/${reported}/report`, {
      report_type: 'spam',
      description: 'x'.repeat(1001),
    }),
    'description is too long (limit: 1000 characters)',
  );
  assertError(
    t,
    await api.post('hamlet', `messages/${reported}/report`),
    "Missing 'report_type' argument",
    { code: 'REQUEST_VARIABLE_MISSING' },
  );
  assertError(
    t,
    await api.post('hamlet', 'messages/999999/report', { report_type: 'spam' }),
    'Invalid message(s)',
  );

  assertSuccess(
    t,
    await api.post('hamlet', `messages/${reported}/report`, {
      report_type: 'harassment',
      description: 'this is a crime against food',
    }),
  );
  const got = await events(t, api, 'shiva', mods.queue_id, -1, true);
  const notice = got.find((e) => e.type === 'message')!.message as Record<string, unknown>;
  const hamlet = `@_**Hamlet|${fx.users.hamlet!.id}**`;
  const othello = `@_**Othello|${fx.users.othello!.id}**`;
  t.equal(notice.sender_email, 'notification-bot@zulip.com', 'posted by the notification bot');
  t.equal(notice.stream_id, modChannel);
  t.equal(notice.subject, "Othello's moderation requests");
  const raw = assertSuccess(t, await api.get('shiva', `messages/${notice.id as number}`))
    .raw_content as string;
  t.equal(
    raw,
    `${hamlet} reported #**general>food@${reported}** sent by ${othello}.\n` +
      '- Reason: **harassment**\n- Notes:\n```quote\nthis is a crime against food\n```\n' +
      `\`\`\`\` spoiler **Message sent by ${othello}**\nI dip fries in\n\`\`\`\nice cream\n\`\`\`\n\`\`\`\``,
    'the reference wording, with a fence longer than any in the message',
  );
  t.match(notice.content, /class="user-mention silent"/, 'rendered, mentions silent');

  // Direct messages: the reporter must be able to see it; group conversations name everybody.
  const dm = await sendDirectMessage(api, 'othello', [fx.users.hamlet!.id], 'secret');
  assertError(
    t,
    await api.post('cordelia', `messages/${dm}/report`, { report_type: 'spam' }),
    'Invalid message(s)',
  );
  assertSuccess(t, await api.post('hamlet', `messages/${dm}/report`, { report_type: 'spam' }));
  const group = await sendDirectMessage(
    api,
    'othello',
    [fx.users.hamlet!.id, fx.users.cordelia!.id],
    'group secret',
  );
  assertSuccess(
    t,
    await api.post('cordelia', `messages/${group}/report`, {
      report_type: 'norms',
      description: '',
    }),
  );
  const later = (await events(t, api, 'shiva', mods.queue_id, got.at(-1)!.id, true)).filter(
    (e) => e.type === 'message',
  );
  const raws: string[] = [];
  for (const e of later) {
    const id = (e.message as { id: number }).id;
    raws.push(assertSuccess(t, await api.get('shiva', `messages/${id}`)).raw_content as string);
  }
  t.match(raws[0], new RegExp(`^${escape(`${hamlet} reported a DM sent by ${othello}.`)}`));
  const ids = [fx.users.hamlet!.id, fx.users.othello!.id, fx.users.cordelia!.id].sort(
    (a, b) => a - b,
  );
  const name = (id: number) => Object.entries(fx.users).find(([, u]) => u.id === id)![0];
  const mention = (id: number) => `@_**${name(id)[0]!.toUpperCase()}${name(id).slice(1)}|${id}**`;
  t.match(
    raws[1],
    new RegExp(
      `^${escape(`@_**Cordelia|${fx.users.cordelia!.id}** reported a DM sent by ${othello} to ${mention(ids[0]!)}, ${mention(ids[1]!)}, and ${mention(ids[2]!)}.`)}`,
    ),
  );
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

t.test('GET /streams/{stream_id}/email_address', async (t) => {
  const { api, fx, server } = await startServer(t);
  const hamlet = fx.users.hamlet!;
  const open = await createChannel(api, 'hamlet', 'mailable');
  const secret = await createChannel(api, 'hamlet', 'secret mail', { invite_only: true });
  const res = await api.get('othello', `streams/${open}/email_address`);
  assertMatchesOpenApi(t, '/streams/{stream_id}/email_address', 'get', res.body);
  // No e-mail gateway runs: the address is empty, as the reference's without one.
  t.equal(assertSuccess(t, res).email, '');
  t.equal(
    assertSuccess(t, await api.get('hamlet', `streams/${secret}/email_address`)).email,
    '',
    'a private channel, by a subscriber',
  );
  for (const [who, id] of [
    ['othello', secret],
    ['othello', 99999],
  ] as const) {
    assertError(t, await api.get(who, `streams/${id}/email_address`), 'Invalid channel ID');
  }

  // The sender: oneself, or a bot one may administer.
  const { realms } = server.context;
  const store = server.store;
  const botId = store.transaction(() =>
    insertUserRow(store, fx.realmId, {
      email: 'mail-bot@zulip.com',
      full_name: 'Mail Bot',
      password_hash: null,
      api_key: 'M'.repeat(32),
      role: 400,
      is_bot: true,
      bot_type: 1,
      bot_owner_id: hamlet.id,
      now: Math.floor(Date.now() / 1000),
      waitingPeriodDays: 0,
    }),
  );
  realms.get(fx.realmId)!.view.reloadUser(botId);
  const emailAs = (who: string, sender: number) =>
    api.get(who, `streams/${open}/email_address`, { sender_id: sender });
  assertSuccess(t, await emailAs('othello', fx.users.othello!.id));
  assertSuccess(t, await emailAs('hamlet', botId), "the bot's owner");
  assertSuccess(t, await emailAs('iago', botId), 'an administrator');
  assertError(t, await emailAs('othello', botId), 'Insufficient permission');
  assertError(t, await emailAs('othello', hamlet.id), 'No such bot');
  assertError(t, await emailAs('othello', 99999), 'No such bot');
  assertError(t, await emailAs('othello', -1), 'sender_id is too small');
});
