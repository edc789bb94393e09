/**
 * POST and DELETE /messages/{id}/reactions: the three reaction types, votes on an existing
 * reaction, errors, access, and the `reaction` event. Reference: zerver/tests/test_reactions.py.
 */
import t from 'tap';
import { assertError, assertSuccess, basicAuth, rawRequest } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { events, register } from '../helpers/events.js';
import { multipartWithFile, tinyPng } from '../helpers/images.js';
import {
  fetchNarrow,
  sendChannelMessage,
  sendDirectMessage,
  type FetchedMessage,
} from '../helpers/messages.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer, type TestServer } from '../helpers/server.js';

async function uploadEmoji(ts: TestServer, who: string, name: string): Promise<void> {
  const u = ts.fx.users[who]!;
  const mp = multipartWithFile({ name: 'e.png', type: 'image/png', data: tinyPng() });
  const res = await rawRequest(ts.url, {
    method: 'POST',
    path: `/api/v1/realm/emoji/${name}`,
    headers: { authorization: basicAuth(u.email, u.api_key), 'content-type': mp.contentType },
    body: mp.body,
  });
  if (res.status !== 200) throw new Error(`emoji upload failed: ${res.text}`);
}

t.test('reactions', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const [hamlet, othello, cordelia] = ['hamlet', 'othello', 'cordelia'].map(
    (n) => fx.users[n]!.id,
  ) as [number, number, number];
  await createChannel(api, 'hamlet', 'Verona', { principals: [hamlet, othello] });
  const m = await sendChannelMessage(api, 'hamlet', 'Verona', 'T', 'react to me');
  const q = await register(t, api, 'othello', { event_types: ['reaction'] });
  const react = (who: string, params: Record<string, unknown>, id = m) =>
    api.post(who, `messages/${id}/reactions`, params);
  const unreact = (who: string, params: Record<string, unknown>, id = m) =>
    api.delete(who, `messages/${id}/reactions`, params);

  // A Unicode emoji by name only.
  const res = await react('hamlet', { emoji_name: 'thumbs_up' });
  assertMatchesOpenApi(t, '/messages/{message_id}/reactions', 'post', assertSuccess(t, res));
  const evs = await events(t, api, 'othello', q.queue_id, -1, true);
  assertMatchesOpenApi(t, '/events', 'get', { result: 'success', msg: '', events: evs });
  t.match(evs[0], {
    type: 'reaction',
    op: 'add',
    user_id: hamlet,
    user: { user_id: hamlet, email: 'hamlet@zulip.com', full_name: 'Hamlet' },
    message_id: m,
    emoji_name: 'thumbs_up',
    emoji_code: '1f44d',
    reaction_type: 'unicode_emoji',
  });
  const dup = await react('hamlet', { emoji_name: 'thumbs_up' });
  assertError(t, dup, 'Reaction already exists.', { code: 'REACTION_ALREADY_EXISTS' });
  // (Error bodies are checked field by field: the description's 400 is a oneOf of error shapes
  // that any error body matches more than once.)

  // A vote by code takes the existing reaction's name (an alias was sent).
  assertSuccess(
    t,
    await react('othello', {
      emoji_name: '+1',
      emoji_code: '1f44d',
      reaction_type: 'unicode_emoji',
    }),
  );
  // The extra emoji and a custom emoji.
  assertSuccess(
    t,
    await react('othello', {
      emoji_name: 'zulip',
      emoji_code: 'zulip',
      reaction_type: 'service_extra_emoji',
    }),
  );
  await uploadEmoji(ts, 'iago', 'green_tick');
  const emojiList = await api.get('hamlet', 'realm/emoji');
  const emojiId = Object.keys(emojiList.body.emoji as object)[0]!;
  assertSuccess(t, await react('hamlet', { emoji_name: 'green_tick' }));
  assertSuccess(
    t,
    await react('othello', {
      emoji_name: 'green_tick',
      emoji_code: emojiId,
      reaction_type: 'realm_emoji',
    }),
  );

  const fetched = await fetchNarrow(api, 'hamlet', [{ operator: 'id', operand: m }]);
  const reactions = (fetched.body.messages as FetchedMessage[])[0]!.reactions;
  t.same(reactions, [
    {
      emoji_name: 'thumbs_up',
      emoji_code: '1f44d',
      reaction_type: 'unicode_emoji',
      user_id: hamlet,
    },
    {
      emoji_name: 'thumbs_up',
      emoji_code: '1f44d',
      reaction_type: 'unicode_emoji',
      user_id: othello,
    },
    {
      emoji_name: 'zulip',
      emoji_code: 'zulip',
      reaction_type: 'service_extra_emoji',
      user_id: othello,
    },
    {
      emoji_name: 'green_tick',
      emoji_code: emojiId,
      reaction_type: 'realm_emoji',
      user_id: hamlet,
    },
    {
      emoji_name: 'green_tick',
      emoji_code: emojiId,
      reaction_type: 'realm_emoji',
      user_id: othello,
    },
  ]);

  // Invalid emoji (on a message without reactions: nothing to vote for).
  const fresh = await sendChannelMessage(api, 'hamlet', 'Verona', 'T', 'fresh');
  const react2 = (who: string, params: Record<string, unknown>) => react(who, params, fresh);
  assertError(
    t,
    await react2('hamlet', { emoji_name: 'no_such_emoji' }),
    "Emoji 'no_such_emoji' does not exist",
  );
  assertError(
    t,
    await react2('hamlet', {
      emoji_name: 'smile',
      emoji_code: 'fffff',
      reaction_type: 'unicode_emoji',
    }),
    'Invalid emoji code.',
  );
  assertError(
    t,
    await react2('hamlet', {
      emoji_name: 'tada',
      emoji_code: '1f642',
      reaction_type: 'unicode_emoji',
    }),
    'Invalid emoji name.',
  );
  assertError(
    t,
    await react2('hamlet', { emoji_name: 'x', emoji_code: '999', reaction_type: 'realm_emoji' }),
    'Invalid custom emoji.',
  );
  assertError(
    t,
    await react2('cordelia', {
      emoji_name: 'other',
      emoji_code: emojiId,
      reaction_type: 'realm_emoji',
    }),
    'Invalid custom emoji name.',
  );
  assertError(
    t,
    await react2('hamlet', {
      emoji_name: 'zulip',
      emoji_code: 'zulip2',
      reaction_type: 'service_extra_emoji',
    }),
    'Invalid emoji code.',
  );
  assertError(
    t,
    await react2('hamlet', { emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'bogus' }),
    'Invalid emoji type.',
  );
  assertError(
    t,
    await api.post('hamlet', `messages/${m}/reactions`, {}),
    "Missing 'emoji_name' argument",
    { code: 'REQUEST_VARIABLE_MISSING' },
  );
  // A deactivated custom emoji: no new reactions, but votes on existing ones.
  assertSuccess(t, await api.delete('iago', 'realm/emoji/green_tick'));
  assertError(
    t,
    await react2('prospero', {
      emoji_name: 'green_tick',
      emoji_code: emojiId,
      reaction_type: 'realm_emoji',
    }),
    'This custom emoji has been deactivated.',
  );
  assertSuccess(
    t,
    await react('cordelia', {
      emoji_name: 'green_tick',
      emoji_code: emojiId,
      reaction_type: 'realm_emoji',
    }),
  );

  // Removing.
  const removed = await unreact('othello', { emoji_name: 'thumbs_up' });
  assertMatchesOpenApi(t, '/messages/{message_id}/reactions', 'delete', assertSuccess(t, removed));
  const gone = await unreact('othello', { emoji_code: '1f44d' });
  assertError(t, gone, "Reaction doesn't exist.", { code: 'REACTION_DOES_NOT_EXIST' });
  assertSuccess(
    t,
    await unreact('othello', { emoji_code: 'zulip', reaction_type: 'service_extra_emoji' }),
  );
  assertSuccess(
    t,
    await unreact('cordelia', {
      emoji_name: 'x',
      emoji_code: emojiId,
      reaction_type: 'realm_emoji',
    }),
    'deactivated emoji can be removed',
  );
  assertError(
    t,
    await unreact('hamlet', {}),
    'At least one of the following arguments must be present: emoji_name, emoji_code',
  );
  const later = await events(t, api, 'othello', q.queue_id, evs[evs.length - 1]!.id, true);
  const removal = later.find(
    (e) => e.op === 'remove' && e.user_id === othello && e.emoji_code === '1f44d',
  );
  t.match(removal, { type: 'reaction', op: 'remove', emoji_name: 'thumbs_up' });

  // Cordelia reacted to a message she never received: it became part of her history, and she
  // hears about the message's reactions from then on.
  t.equal(ts.server.store.messages.userFlags(cordelia, m), 1 | 256);

  // Access.
  const dm = await sendDirectMessage(api, 'hamlet', [othello], 'private');
  assertError(t, await react('cordelia', { emoji_name: 'smile' }, dm), 'Invalid message(s)');
  assertError(t, await react('hamlet', { emoji_name: 'smile' }, 99999), 'Invalid message(s)');
  assertSuccess(t, await react('othello', { emoji_name: 'smile' }, dm));
  t.ok(await fetchNarrow(api, 'hamlet', [{ operator: 'has', operand: 'reaction' }]));
});
