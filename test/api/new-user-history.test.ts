/**
 * A new account's first view is not empty (the reference's add_new_user_history;
 * zerver/tests/test_signup.py AddNewUserHistoryTest): every way a human account is created
 * (POST /users, a reusable invitation link, an e-mail invitation, the admin tool's create-user)
 * gives it the recent messages of the channels it joins, in its combined feed: the newest 20
 * unread, the others read, all `historical`; none older than 12 weeks, none of a private channel
 * with protected history, no direct messages, at most 1000; bots get nothing.
 */
import t, { type Test } from 'tap';
import { assertSuccess, type ApiClient, type Who } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { manage } from '../helpers/manage.js';
import {
  seedChannelMessages,
  sendChannelMessage,
  sendDirectMessage,
  type FetchedMessage,
} from '../helpers/messages.js';
import { acceptInvitation, createByApi, invitationLink } from '../helpers/accounts.js';
import { CLUSTER_MODE, restartServer, startServer, type TestServer } from '../helpers/server.js';

/** Subtests that write messages straight into the store, or stop the server: one process only. */
const ONE_PROCESS = CLUSTER_MODE && 'cluster mode: writes to one node’s store, or a restart';
const WEEK = 7 * 86400;

/**
 * Every new human account also gets the Welcome Bot's direct message (its own test:
 * test/api/welcome-bot.test.ts). This file is about the channel history: the feed and the unread
 * counts below leave that one message out.
 */
const WELCOME_BOT = 'welcome-bot@zulip.com';

/** The combined feed (no narrow), newest last, as the account reads it (no welcome message). */
async function feed(t: Test, api: ApiClient, who: Who): Promise<FetchedMessage[]> {
  const res = await api.get(who, 'messages', {
    anchor: 'newest',
    num_before: 5000,
    num_after: 0,
    narrow: '[]',
  });
  const msgs = assertSuccess(t, res, 'GET /messages').messages as FetchedMessage[];
  return msgs.filter((m) => m.sender_email !== WELCOME_BOT);
}

/**
 * The unread message ids register reports (channels and direct messages), ascending, without the
 * conversation with Welcome Bot.
 */
async function registeredUnread(t: Test, api: ApiClient, who: Who) {
  const body = assertSuccess(
    t,
    await api.post(who, 'register', {
      fetch_event_types: '["message","update_message_flags","realm_user"]',
    }),
  );
  const bot = (body.realm_users as { user_id: number; email: string }[]).find(
    (u) => u.email === WELCOME_BOT,
  );
  const u = body.unread_msgs as {
    count: number;
    streams: { unread_message_ids: number[] }[];
    pms: { other_user_id: number; unread_message_ids: number[] }[];
    huddles: { unread_message_ids: number[] }[];
  };
  const welcome = u.pms.filter((p) => p.other_user_id === bot?.user_id);
  const ids = [...u.streams, ...u.pms.filter((p) => !welcome.includes(p)), ...u.huddles]
    .flatMap((s) => s.unread_message_ids)
    .sort((a, b) => a - b);
  const welcomeUnread = welcome.flatMap((p) => p.unread_message_ids).length;
  return { count: u.count - welcomeUnread, ids };
}

/** A public default channel with `n` messages from iago; their ids, ascending. */
async function defaultChannelWith(t: Test, ts: TestServer, name: string, n: number) {
  const id = await createChannel(ts.api, 'iago', name);
  assertSuccess(t, await ts.api.post('iago', 'default_streams', { stream_id: id }));
  const ids: number[] = [];
  for (let i = 0; i < n; i++)
    ids.push(await sendChannelMessage(ts.api, 'iago', name, `topic ${i % 3}`, `message ${i}`));
  return { id, ids };
}

/** The feed holds exactly `ids`; the newest 20 unread, the others read; all historical. */
async function assertOnboarded(t: Test, ts: TestServer, who: Who, ids: number[]) {
  const msgs = await feed(t, ts.api, who);
  t.same(
    msgs.map((m) => m.id),
    ids,
    'the combined feed shows the recent channel messages',
  );
  const unread = ids.slice(-20);
  for (const m of msgs) {
    const isUnread = unread.includes(m.id);
    t.equal(m.flags.includes('read'), !isUnread, `${m.id}: ${isUnread ? 'unread' : 'read'}`);
    t.ok(m.flags.includes('historical'), `${m.id}: historical`);
  }
  t.same(await registeredUnread(t, ts.api, who), { count: unread.length, ids: unread });
  const first = assertSuccess(
    t,
    await ts.api.get(who, 'messages', {
      anchor: 'first_unread',
      num_before: 0,
      num_after: 0,
      narrow: '[]',
    }),
  );
  t.equal(first.anchor, unread[0], 'first_unread is the oldest of the unread ones');
}

t.test('POST /users: the recent channel messages, the newest 20 unread; no DMs', async (t) => {
  const ts = await startServer(t);
  const { ids } = await defaultChannelWith(t, ts, 'Verona', 25);
  const dm = await sendDirectMessage(ts.api, 'hamlet', [ts.fx.users.othello!.id], 'between us');
  const newbie = await createByApi(t, ts.api, 'newbie@zulip.com');
  await assertOnboarded(t, ts, newbie, ids);
  const seen = (await feed(t, ts.api, newbie)).map((m) => m.id);
  t.notOk(seen.includes(dm), 'a direct message of others is not copied');

  // The copy is the account's own: reading one changes it for the account only.
  assertSuccess(
    t,
    await ts.api.post(newbie, 'messages/flags', {
      messages: JSON.stringify([ids.at(-1)]),
      op: 'add',
      flag: 'read',
    }),
  );
  t.equal((await registeredUnread(t, ts.api, newbie)).count, 19, 'one fewer unread');
});

t.test('a reusable link and an e-mail invitation: the invitation’s channels', async (t) => {
  const ts = await startServer(t);
  const { id: verona, ids } = await defaultChannelWith(t, ts, 'Verona', 22);
  // A public channel the invitations do not name gives nothing.
  await createChannel(ts.api, 'iago', 'Elsewhere');
  await sendChannelMessage(ts.api, 'iago', 'Elsewhere', 'x', 'not for newcomers');

  const multi = assertSuccess(
    t,
    await ts.api.post('iago', 'invites/multiuse', { stream_ids: JSON.stringify([verona]) }),
  ).invite_link as string;
  const byLink = await acceptInvitation(t, ts, multi, 'linked@example.com', true);
  await assertOnboarded(t, ts, byLink, ids);

  assertSuccess(
    t,
    await ts.api.post('iago', 'invites', {
      invitee_emails: 'mailed@example.com',
      stream_ids: JSON.stringify([verona]),
    }),
  );
  const mailed = await acceptInvitation(
    t,
    ts,
    invitationLink(ts, 'mailed@example.com'),
    'mailed@example.com',
    false,
  );
  await assertOnboarded(t, ts, mailed, ids);
});

t.test('the admin tool’s create-user', { skip: ONE_PROCESS }, async (t) => {
  const ts = await startServer(t);
  const { ids } = await defaultChannelWith(t, ts, 'Verona', 21);
  await ts.server.close();
  const run = await manage(ts.dataDir, [
    'create-user',
    '--realm',
    '',
    '--email',
    'operator-made@example.com',
    '--full-name',
    'Operator Made',
    '--without-password',
  ]);
  t.equal(run.status, 0, 'create-user', { stderr: run.stderr });
  const { api } = await restartServer(t, ts.dataDir, ts.fx);
  const who = { email: 'operator-made@example.com', api_key: run.json.api_key as string };
  await assertOnboarded(t, { ...ts, api }, who, ids);
});

t.test(
  'only messages of the last 12 weeks; none of protected private history',
  { skip: ONE_PROCESS },
  async (t) => {
    const ts = await startServer(t);
    const { id: verona } = await defaultChannelWith(t, ts, 'Verona', 0);
    const now = Math.floor(Date.now() / 1000);
    const iago = ts.fx.users.iago!.id;
    // Older than 12 weeks: never copied, so never unread. Then a few just inside the window.
    const old = seedChannelMessages(ts, {
      senderId: iago,
      streamId: verona,
      topic: 'old',
      count: 5,
      recipients: [iago],
      dateSent: now - 12 * WEEK - 3600,
    });
    const inside = seedChannelMessages(ts, {
      senderId: iago,
      streamId: verona,
      topic: 'recent enough',
      count: 3,
      recipients: [iago],
      dateSent: now - 12 * WEEK + 3600,
    });
    const recent: number[] = [];
    for (let i = 0; i < 4; i++)
      recent.push(await sendChannelMessage(ts.api, 'iago', 'Verona', 'new', `fresh ${i}`));

    const secret = await createChannel(ts.api, 'iago', 'Secret', {
      invite_only: true,
      history_public_to_subscribers: false,
    });
    await sendChannelMessage(ts.api, 'iago', 'Secret', 'hush', 'before you came');
    const shared = await createChannel(ts.api, 'iago', 'Shared', {
      invite_only: true,
      history_public_to_subscribers: true,
    });
    const sharedMsg = await sendChannelMessage(ts.api, 'iago', 'Shared', 'open', 'history shared');

    const link = assertSuccess(
      t,
      await ts.api.post('iago', 'invites/multiuse', {
        stream_ids: JSON.stringify([verona, secret, shared]),
      }),
    ).invite_link as string;
    const newbie = await acceptInvitation(t, ts, link, 'newcomer@example.com', true);
    const subs = assertSuccess(t, await ts.api.get(newbie, 'users/me/subscriptions'));
    t.equal((subs.subscriptions as unknown[]).length, 3, 'subscribed to all three');
    const expected = [...inside, ...recent, sharedMsg];
    const msgs = await feed(t, ts.api, newbie);
    t.same(
      msgs.map((m) => m.id),
      expected,
      'recent messages of Verona and Shared; none older than 12 weeks, none of Secret',
    );
    t.notOk(
      msgs.some((m) => old.includes(m.id)),
      'the old ones are not in the feed',
    );
    t.same(await registeredUnread(t, ts.api, newbie), { count: expected.length, ids: expected });
    // The old messages are still there for the account to read in the channel, as history.
    const inChannel = assertSuccess(
      t,
      await ts.api.get(newbie, 'messages', {
        anchor: 'oldest',
        num_before: 0,
        num_after: 100,
        narrow: JSON.stringify([{ operator: 'channel', operand: verona }]),
      }),
    ).messages as FetchedMessage[];
    t.same(
      inChannel.filter((m) => old.includes(m.id)).map((m) => m.flags),
      old.map(() => ['read', 'historical']),
      'old messages read as history in the channel',
    );
  },
);

t.test('at most 1000 messages, the newest; bots get nothing', { skip: ONE_PROCESS }, async (t) => {
  const ts = await startServer(t);
  const { id: verona } = await defaultChannelWith(t, ts, 'Verona', 0);
  const iago = ts.fx.users.iago!.id;
  const ids = seedChannelMessages(ts, {
    senderId: iago,
    streamId: verona,
    topic: 'busy',
    count: 1100,
    recipients: [iago],
  });
  const newbie = await createByApi(t, ts.api, 'busy@zulip.com');
  const msgs = await feed(t, ts.api, newbie);
  t.equal(msgs.length, 1000, '1000 messages');
  t.same(
    msgs.map((m) => m.id),
    ids.slice(-1000),
    'the newest 1000',
  );
  const unread = await registeredUnread(t, ts.api, newbie);
  t.same(unread, { count: 20, ids: ids.slice(-20) }, 'the newest 20 unread');

  const bot = assertSuccess(
    t,
    await ts.api.post('hamlet', 'bots', { full_name: 'Hamlet Bot', short_name: 'hambot' }),
  );
  const botWho = { email: 'hambot-bot@testserver.local', api_key: bot.api_key as string };
  t.same(await feed(t, ts.api, botWho), [], 'a new bot: an empty feed');
  t.same(await registeredUnread(t, ts.api, botWho), { count: 0, ids: [] }, 'and nothing unread');
});
