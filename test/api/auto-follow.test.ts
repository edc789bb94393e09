/**
 * Topics followed or unmuted because the user took part in them (src/mutations/auto-follow.ts),
 * through the API: the settings `automatically_follow_topics_policy`,
 * `automatically_unmute_topics_in_muted_streams_policy` and
 * `automatically_follow_topics_where_mentioned`, acted on by sends, reactions, poll votes and
 * mentions; the `user_topic` events and the register's `user_topics`. Reference:
 * zerver/tests/test_user_topics.py (the automatic follow and unmute cases), help/follow-a-topic.
 */
import t, { type Test } from 'tap';
import { autoVisibility, AutoPolicy } from '../../src/mutations/auto-follow.js';
import { assertSuccess, basicAuth, rawRequest } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { events, register, type Ev } from '../helpers/events.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer, type TestServer } from '../helpers/server.js';

const [INHERIT, MUTED, UNMUTED, FOLLOWED] = [0, 1, 2, 3];
const { ON_PARTICIPATION, ON_SEND, ON_INITIATION, NEVER } = AutoPolicy;

t.test('autoVisibility: which act each policy acts on; only ever more visible', (t) => {
  const s = (follow: number, unmute: number = NEVER) => ({ follow, unmute });
  t.equal(autoVisibility(s(ON_INITIATION), 'started', false, INHERIT), FOLLOWED, 'started');
  t.equal(autoVisibility(s(ON_INITIATION), 'sent', false, INHERIT), null, 'not started');
  t.equal(autoVisibility(s(ON_SEND), 'sent', false, INHERIT), FOLLOWED);
  t.equal(autoVisibility(s(ON_SEND), 'started', false, INHERIT), FOLLOWED, 'starting is sending');
  t.equal(autoVisibility(s(ON_SEND), 'participated', false, INHERIT), null, 'a reaction is not');
  t.equal(autoVisibility(s(ON_PARTICIPATION), 'participated', false, INHERIT), FOLLOWED);
  t.equal(autoVisibility(s(NEVER), 'started', false, INHERIT), null, 'never');
  // Unmuting: only in a muted channel; following wins.
  t.equal(autoVisibility(s(NEVER, ON_SEND), 'sent', true, INHERIT), UNMUTED, 'muted channel');
  t.equal(autoVisibility(s(NEVER, ON_SEND), 'sent', false, INHERIT), null, 'channel not muted');
  t.equal(autoVisibility(s(ON_SEND, ON_SEND), 'sent', true, INHERIT), FOLLOWED, 'follow wins');
  t.equal(autoVisibility(s(NEVER, ON_SEND), 'sent', true, MUTED), UNMUTED, 'a muted topic');
  t.equal(autoVisibility(s(NEVER, ON_SEND), 'sent', true, UNMUTED), null, 'already unmuted');
  t.equal(autoVisibility(s(ON_SEND, ON_SEND), 'sent', true, FOLLOWED), null, 'followed stays');
  t.equal(autoVisibility(s(ON_SEND), 'sent', false, MUTED), FOLLOWED, 'a muted topic followed');
  t.end();
});

/** The user's topic preferences, as a register reports them: "channel id:topic" → policy. */
async function preferences(t: Test, ts: TestServer, who: string) {
  const { body } = await register(t, ts.api, who, { fetch_event_types: ['user_topic'] });
  const out: Record<string, number> = {};
  for (const u of body.user_topics as {
    stream_id: number;
    topic_name: string;
    visibility_policy: number;
  }[])
    out[`${u.stream_id}:${u.topic_name}`] = u.visibility_policy;
  return out;
}

async function settings(t: Test, ts: TestServer, who: string, params: Record<string, unknown>) {
  assertSuccess(t, await ts.api.patch(who, 'settings', params), `settings of ${who}`);
}

/** A server, and a channel hamlet makes with `members` in it. */
async function channelOf(t: Test, name: string, members: string[]) {
  const ts = await startServer(t);
  const principals = members.map((m) => ts.fx.users[m]!.id);
  const ch = await createChannel(ts.api, 'hamlet', name, { principals });
  return { ts, api: ts.api, ch };
}

const topicEvents = (evs: Ev[]) => evs.filter((e) => e.type === 'user_topic');

t.test('sending: the topics one starts (the default), sends to, or none', async (t) => {
  const { ts, api, ch } = await channelOf(t, 'Elsinore', ['hamlet', 'othello', 'cordelia']);

  // Hamlet starts a topic: he follows it, and his queues hear so before the message.
  const q = await register(t, api, 'hamlet', { event_types: ['user_topic', 'message'] });
  await sendChannelMessage(api, 'hamlet', 'Elsinore', 'ghosts', 'Who is there?');
  const evs = await events(t, api, 'hamlet', q.queue_id, -1, true);
  assertMatchesOpenApi(t, '/events', 'get', { result: 'success', msg: '', events: evs });
  t.match(
    evs.map((e) => e.type),
    ['user_topic', 'message'],
    'user_topic, then the message',
  );
  t.match(topicEvents(evs)[0], {
    stream_id: ch,
    topic_name: 'ghosts',
    visibility_policy: FOLLOWED,
  });
  t.equal((await preferences(t, ts, 'hamlet'))[`${ch}:ghosts`], FOLLOWED, 'hamlet follows');

  // Othello answers: he did not start it, and starting is his default: nothing.
  await sendChannelMessage(api, 'othello', 'Elsinore', 'ghosts', 'Nay, answer me.');
  t.notOk(`${ch}:ghosts` in (await preferences(t, ts, 'othello')), 'othello does not');
  // The same topic in other letters is the same topic.
  await sendChannelMessage(api, 'othello', 'Elsinore', 'GHOSTS', 'Stand and unfold yourself.');
  t.notOk(`${ch}:ghosts` in (await preferences(t, ts, 'othello')), 'nor in capitals');

  // "Topics I send a message to": now he does.
  await settings(t, ts, 'othello', { automatically_follow_topics_policy: ON_SEND });
  await sendChannelMessage(api, 'othello', 'Elsinore', 'ghosts', 'Long live the king!');
  t.equal((await preferences(t, ts, 'othello'))[`${ch}:ghosts`], FOLLOWED, 'on send');

  // Never: starting a topic changes nothing.
  await settings(t, ts, 'cordelia', { automatically_follow_topics_policy: NEVER });
  await sendChannelMessage(api, 'cordelia', 'Elsinore', 'the watch', 'Twelve has struck.');
  t.same(await preferences(t, ts, 'cordelia'), {}, 'never');

  // A direct message has no topic to follow.
  const dq = await register(t, api, 'hamlet', { event_types: ['user_topic'] });
  assertSuccess(
    t,
    await api.post('hamlet', 'messages', {
      type: 'direct',
      to: [ts.fx.users.othello!.id],
      content: 'hi',
    }),
  );
  t.same(await events(t, api, 'hamlet', dq.queue_id, -1, true), [], 'no user_topic for a DM');

  // A topic he muted and then restarts is not his start (it has messages): left muted.
  assertSuccess(
    t,
    await api.post('hamlet', 'user_topics', {
      stream_id: ch,
      topic: 'the watch',
      visibility_policy: MUTED,
    }),
  );
  await sendChannelMessage(api, 'hamlet', 'Elsinore', 'the watch', 'Tis bitter cold.');
  t.equal((await preferences(t, ts, 'hamlet'))[`${ch}:the watch`], MUTED, 'a muted topic stays');
});

t.test('in a muted channel: unmuted on sending (the default), followed wins', async (t) => {
  const { ts, api, ch } = await channelOf(t, 'Denmark', ['hamlet', 'othello']);
  await sendChannelMessage(api, 'hamlet', 'Denmark', 'rotten', 'Something is rotten.');
  for (const who of ['othello', 'hamlet'])
    assertSuccess(
      t,
      await api.post(who, 'users/me/subscriptions/properties', {
        subscription_data: [{ stream_id: ch, property: 'is_muted', value: true }],
      }),
    );
  // Othello does not follow on sending (his default: topics he starts), but unmutes.
  await sendChannelMessage(api, 'othello', 'Denmark', 'rotten', 'In the state of Denmark.');
  t.equal((await preferences(t, ts, 'othello'))[`${ch}:rotten`], UNMUTED, 'unmuted');
  // Hamlet already follows the topic he started: it stays followed.
  await sendChannelMessage(api, 'hamlet', 'Denmark', 'rotten', 'Indeed.');
  t.equal((await preferences(t, ts, 'hamlet'))[`${ch}:rotten`], FOLLOWED, 'followed stays');
  // A new topic in the muted channel: following wins over unmuting.
  await sendChannelMessage(api, 'hamlet', 'Denmark', 'fresh', 'A new one.');
  t.equal((await preferences(t, ts, 'hamlet'))[`${ch}:fresh`], FOLLOWED, 'followed, not unmuted');
  // Unmuting asked never: nothing.
  await settings(t, ts, 'othello', { automatically_unmute_topics_in_muted_streams_policy: NEVER });
  await sendChannelMessage(api, 'othello', 'Denmark', 'fresh', 'Quite.');
  t.notOk(`${ch}:fresh` in (await preferences(t, ts, 'othello')), 'never unmuted');
  // Unmuting the topics he starts: one he starts, not one he sends to.
  await settings(t, ts, 'othello', {
    automatically_follow_topics_policy: NEVER,
    automatically_unmute_topics_in_muted_streams_policy: ON_INITIATION,
  });
  await sendChannelMessage(api, 'othello', 'Denmark', 'fresh', 'Still quite.');
  await sendChannelMessage(api, 'othello', 'Denmark', 'his own', 'A topic of mine.');
  const his = await preferences(t, ts, 'othello');
  t.notOk(`${ch}:fresh` in his, 'not a topic he sends to');
  t.equal(his[`${ch}:his own`], UNMUTED, 'a topic he starts: unmuted');
});

t.test('taking part: a reaction and a poll vote, for "topics I participate in"', async (t) => {
  const { ts, api, ch } = await channelOf(t, 'Globe', ['hamlet', 'othello', 'cordelia']);
  const m = await sendChannelMessage(api, 'hamlet', 'Globe', 'plays', 'Which play tonight?');
  const poll = await sendChannelMessage(
    api,
    'hamlet',
    'Globe',
    'votes',
    '/poll Tonight?\nLear\nOthello',
  );

  // Othello reacts: by default that is not enough.
  assertSuccess(t, await api.post('othello', `messages/${m}/reactions`, { emoji_name: 'smile' }));
  t.notOk(`${ch}:plays` in (await preferences(t, ts, 'othello')), 'default: a reaction is not');

  await settings(t, ts, 'othello', { automatically_follow_topics_policy: ON_PARTICIPATION });
  const q = await register(t, api, 'othello', { event_types: ['user_topic'] });
  assertSuccess(t, await api.post('othello', `messages/${m}/reactions`, { emoji_name: 'heart' }));
  t.match(await events(t, api, 'othello', q.queue_id, -1, true), [
    { type: 'user_topic', stream_id: ch, topic_name: 'plays', visibility_policy: FOLLOWED },
  ]);
  t.equal((await preferences(t, ts, 'othello'))[`${ch}:plays`], FOLLOWED, 'a reaction');

  // A vote in a poll is taking part too.
  await settings(t, ts, 'cordelia', { automatically_follow_topics_policy: ON_PARTICIPATION });
  assertSuccess(
    t,
    await api.post('cordelia', 'submessage', {
      message_id: poll,
      msg_type: 'widget',
      content: JSON.stringify({ type: 'vote', key: 'canned,0', vote: 1 }),
    }),
  );
  t.equal((await preferences(t, ts, 'cordelia'))[`${ch}:votes`], FOLLOWED, 'a vote');
  // A refused vote changes nothing.
  const bad = await api.post('cordelia', 'submessage', {
    message_id: m,
    msg_type: 'widget',
    content: '{}',
  });
  t.equal(bad.status, 400, 'a message that is no widget takes no vote');
  t.notOk(`${ch}:plays` in (await preferences(t, ts, 'cordelia')), 'and follows nothing');
});

t.test('mentioned by name: followed (the default), unless muted or turned off', async (t) => {
  const { ts, api, ch } = await channelOf(t, 'Court', [
    'hamlet',
    'othello',
    'cordelia',
    'prospero',
  ]);
  await sendChannelMessage(api, 'hamlet', 'Court', 'news', 'The players are come.');
  assertSuccess(
    t,
    await api.post('cordelia', 'user_topics', {
      stream_id: ch,
      topic: 'news',
      visibility_policy: MUTED,
    }),
  );
  await settings(t, ts, 'prospero', { automatically_follow_topics_where_mentioned: false });
  const q = await register(t, api, 'othello', { event_types: ['user_topic'] });
  await sendChannelMessage(
    api,
    'hamlet',
    'Court',
    'news',
    '@**Othello** @**Cordelia** @**Prospero** @**Polonius** listen.',
  );
  t.match(await events(t, api, 'othello', q.queue_id, -1, true), [
    { type: 'user_topic', stream_id: ch, topic_name: 'news', visibility_policy: FOLLOWED },
  ]);
  t.equal((await preferences(t, ts, 'othello'))[`${ch}:news`], FOLLOWED, 'mentioned: followed');
  t.equal((await preferences(t, ts, 'cordelia'))[`${ch}:news`], MUTED, 'muted stays muted');
  t.notOk(`${ch}:news` in (await preferences(t, ts, 'prospero')), 'turned off');
  t.notOk(`${ch}:news` in (await preferences(t, ts, 'polonius')), 'not a subscriber');
});

t.test('a bot follows nothing by sending', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const bot = assertSuccess(
    t,
    await api.post('hamlet', 'bots', { full_name: 'Yorick Bot', short_name: 'yorick' }),
  );
  await createChannel(api, 'hamlet', 'Graveyard', { principals: [bot.user_id as number] });
  const sent = await rawRequest(ts.url, {
    method: 'POST',
    path: '/api/v1/messages',
    headers: {
      authorization: basicAuth('yorick-bot@testserver.local', bot.api_key as string),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      type: 'stream',
      to: 'Graveyard',
      topic: 'skulls',
      content: 'Alas.',
    }).toString(),
  });
  assertSuccess(t, sent, 'the bot sends');
  const res = await rawRequest(ts.url, {
    method: 'POST',
    path: '/api/v1/register',
    headers: {
      authorization: basicAuth('yorick-bot@testserver.local', bot.api_key as string),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ fetch_event_types: '["user_topic"]' }).toString(),
  });
  t.same(assertSuccess(t, res).user_topics, [], 'no topic followed');
});
