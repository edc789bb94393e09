/**
 * GET /messages/{message_id}/read_receipts, GET /messages/matches_narrow and
 * GET /users/{user_id}/subscriptions/{stream_id}: privacy settings, muting, access to the
 * message or channel. Reference: zerver/tests/test_read_receipts.py, test_message_fetch.py
 * (messages_in_narrow), test_subs.py (get_subscription_backend).
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { createChannel, setRealmSettings } from '../helpers/channels.js';
import { sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';

t.test('GET /messages/{message_id}/read_receipts', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const [hamlet, othello, cordelia, prospero, iago] = [
    'hamlet',
    'othello',
    'cordelia',
    'prospero',
    'iago',
  ].map((n) => fx.users[n]!.id) as [number, number, number, number, number];
  setRealmSettings(ts, { enable_read_receipts: true });
  await createChannel(api, 'hamlet', 'Verona', {
    principals: [hamlet, othello, cordelia, prospero, iago],
  });
  const m = await sendChannelMessage(api, 'hamlet', 'Verona', 'T', 'hello');
  const receipts = (who: string, id = m) => api.get(who, `messages/${id}/read_receipts`);
  const read = (who: string, id = m) =>
    api.post(who, 'messages/flags', { messages: [id], op: 'add', flag: 'read' });

  let res = await receipts('othello');
  let body = assertSuccess(t, res);
  assertMatchesOpenApi(t, '/messages/{message_id}/read_receipts', 'get', body);
  t.same(body.user_ids, [], 'nobody read it; the sender never counts');

  for (const who of ['othello', 'cordelia', 'prospero', 'iago']) assertSuccess(t, await read(who));
  t.same(
    assertSuccess(t, await receipts('hamlet')).user_ids,
    [othello, cordelia, prospero, iago].sort((a, b) => a - b),
  );
  t.ok(
    (assertSuccess(t, await receipts('othello')).user_ids as number[]).includes(othello),
    'the viewer appears when they read it',
  );

  // Users who keep reading private.
  assertSuccess(t, await api.patch('cordelia', 'settings', { send_read_receipts: false }));
  // Users the viewer muted, and users who muted the viewer.
  assertSuccess(t, await api.post('hamlet', `users/me/muted_users/${prospero}`));
  assertSuccess(t, await api.post('iago', `users/me/muted_users/${othello}`));
  body = assertSuccess(t, await receipts('hamlet'));
  t.same(
    body.user_ids,
    [othello, iago].sort((a, b) => a - b),
    'cordelia private, prospero muted',
  );
  body = assertSuccess(t, await receipts('othello'));
  t.same(
    body.user_ids,
    [othello, prospero].sort((a, b) => a - b),
    'iago muted othello',
  );
  // Only the viewer's mutes, and mutes of the viewer, count: cordelia (not muted, muting nobody)
  // sees everyone but herself (private) — hamlet's and iago's mutes are theirs.
  t.same(
    assertSuccess(t, await receipts('cordelia')).user_ids,
    [othello, prospero, iago].sort((a, b) => a - b),
    'third parties’ mutes hide nobody',
  );
  // Unmuted: back (the mutes are read when receipts are asked for, not when the message was read).
  assertSuccess(t, await api.delete('hamlet', `users/me/muted_users/${prospero}`));
  t.same(
    assertSuccess(t, await receipts('hamlet')).user_ids,
    [othello, prospero, iago].sort((a, b) => a - b),
    'unmuted: listed again',
  );
  assertSuccess(t, await api.post('prospero', `users/me/muted_users/${hamlet}`));
  t.same(
    assertSuccess(t, await receipts('hamlet')).user_ids,
    [othello, iago].sort((a, b) => a - b),
    'prospero muted hamlet: hamlet does not learn prospero read it',
  );
  assertSuccess(t, await api.delete('prospero', `users/me/muted_users/${hamlet}`));
  // Marked unread again: no longer read.
  assertSuccess(
    t,
    await api.post('othello', 'messages/flags', { messages: [m], op: 'remove', flag: 'read' }),
  );
  t.same(
    assertSuccess(t, await receipts('hamlet')).user_ids,
    [prospero, iago].sort((a, b) => a - b),
  );
  // Deactivated users are left out.
  assertSuccess(t, await api.delete('desdemona', `users/${iago}`));
  t.same(assertSuccess(t, await receipts('hamlet')).user_ids, [prospero]);

  // Messages the viewer cannot read: the same answer as for a message that does not exist.
  const dm = await sendDirectMessage(api, 'hamlet', [othello], 'private');
  assertSuccess(t, await read('othello', dm));
  t.same(assertSuccess(t, await receipts('hamlet', dm)).user_ids, [othello]);
  res = await receipts('cordelia', dm);
  assertError(t, res, 'Invalid message(s)');
  assertMatchesOpenApi(t, '/messages/{message_id}/read_receipts', 'get', res.body, {
    status: '400',
  });
  assertError(t, await receipts('cordelia', 99999), 'Invalid message(s)');

  // The realm setting.
  setRealmSettings(ts, { enable_read_receipts: false });
  assertError(t, await receipts('hamlet'), 'Read receipts are disabled in this organization.');
});

t.test('GET /messages/matches_narrow', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const { hamlet, othello } = { hamlet: fx.users.hamlet!.id, othello: fx.users.othello!.id };
  await createChannel(api, 'hamlet', 'Verona', { principals: [hamlet, othello] });
  const a = await sendChannelMessage(api, 'hamlet', 'Verona', 'Coffee <time>', 'fresh coffee here');
  const b = await sendChannelMessage(api, 'hamlet', 'Verona', 'tea', 'just tea');
  const c = await sendChannelMessage(api, 'hamlet', 'Verona', 'coffee', 'https://example.com');
  const dm = await sendDirectMessage(api, 'hamlet', [othello], 'coffee privately');
  const matches = (who: string, msgIds: number[], narrow: unknown) =>
    api.get(who, 'messages/matches_narrow', { msg_ids: msgIds, narrow });

  // A search narrow: highlighted content and topic.
  let res = await matches(
    'othello',
    [a, b, c, dm, 99999],
    [{ operator: 'search', operand: 'coffee' }],
  );
  let body = assertSuccess(t, res);
  assertMatchesOpenApi(t, '/messages/matches_narrow', 'get', body);
  const msgs = body.messages as Record<string, { match_content: string; match_subject: string }>;
  t.same(Object.keys(msgs).sort(), [a, c, dm].map(String).sort());
  t.equal(msgs[a]!.match_content, '<p>fresh <span class="highlight">coffee</span> here</p>');
  t.equal(msgs[a]!.match_subject, '<span class="highlight">Coffee</span> &lt;time&gt;');
  t.equal(msgs[c]!.match_subject, '<span class="highlight">coffee</span>');

  // Other narrows: the rendered content and escaped topic as they are.
  res = await matches(
    'othello',
    [a, b, c, dm],
    [
      { operator: 'channel', operand: 'Verona' },
      { operator: 'has', operand: 'link' },
    ],
  );
  body = assertSuccess(t, res);
  const linked = body.messages as Record<string, { match_content: string; match_subject: string }>;
  t.same(Object.keys(linked), [String(c)]);
  t.match(linked[c]!.match_content, /^<p><a href="https:\/\/example.com"/);
  t.equal(linked[c]!.match_subject, 'coffee');
  res = await matches('othello', [a, b], [['topic', 'coffee <time>']]);
  t.same(Object.keys(assertSuccess(t, res).messages as object), [String(a)], 'legacy term form');
  t.same(
    (assertSuccess(t, await matches('othello', [a], [])).messages as Record<string, unknown>)[a],
    { match_content: '<p>fresh coffee here</p>', match_subject: 'Coffee &lt;time&gt;' },
    'an empty narrow matches everything received',
  );

  // Privacy: only messages the user received.
  res = await matches('cordelia', [a, b, c, dm], [{ operator: 'search', operand: 'coffee' }]);
  t.same(assertSuccess(t, res).messages, {}, 'cordelia received none of them');

  // Errors.
  assertError(
    t,
    await api.get('othello', 'messages/matches_narrow', { narrow: [] }),
    "Missing 'msg_ids' argument",
    {
      code: 'REQUEST_VARIABLE_MISSING',
    },
  );
  assertError(
    t,
    await api.get('othello', 'messages/matches_narrow', { msg_ids: [a] }),
    "Missing 'narrow' argument",
    {
      code: 'REQUEST_VARIABLE_MISSING',
    },
  );
  assertError(
    t,
    await matches('othello', [a], [{ operator: 'bogus', operand: 'x' }]),
    'Invalid narrow operator: unknown operator bogus',
    { code: 'BAD_NARROW' },
  );
});

t.test('GET /users/{user_id}/subscriptions/{stream_id}', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const { hamlet, othello, cordelia } = {
    hamlet: fx.users.hamlet!.id,
    othello: fx.users.othello!.id,
    cordelia: fx.users.cordelia!.id,
  };
  const verona = await createChannel(api, 'hamlet', 'Verona', { principals: [hamlet, othello] });
  const secret = await createChannel(api, 'othello', 'secret', {
    principals: [othello],
    invite_only: true,
  });
  const status = (who: string, userId: number, streamId: number) =>
    api.get(who, `users/${userId}/subscriptions/${streamId}`);

  const body = assertSuccess(t, await status('cordelia', othello, verona));
  assertMatchesOpenApi(t, '/users/{user_id}/subscriptions/{stream_id}', 'get', body);
  t.equal(body.is_subscribed, true);
  t.equal(assertSuccess(t, await status('othello', cordelia, verona)).is_subscribed, false);
  t.equal(assertSuccess(t, await status('othello', othello, secret)).is_subscribed, true);
  // Administrators see private channels' subscribers; members outside them do not.
  t.equal(assertSuccess(t, await status('iago', othello, secret)).is_subscribed, true);
  assertError(t, await status('hamlet', othello, secret), 'Invalid channel ID');
  assertError(t, await status('polonius', othello, verona), 'Invalid channel ID');
  assertError(t, await status('hamlet', othello, 99999), 'Invalid channel ID');
  assertError(t, await status('hamlet', 99999, verona), 'No such user');
  assertSuccess(t, await api.delete('iago', `users/${cordelia}`));
  assertError(t, await status('hamlet', cordelia, verona), 'User is deactivated');
});
