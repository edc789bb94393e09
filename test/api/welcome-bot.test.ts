/**
 * The Welcome Bot's direct message to a new account (src/lib/welcome.ts, src/mutations/welcome.ts;
 * the reference's send_initial_direct_message from process_new_human_user): every way a human
 * account is created (POST /users, a reusable invitation link, an e-mail invitation, the admin
 * tool's create-user, the server's first start) gives it exactly one direct message from
 * welcome-bot@zulip.com, rendered, unread and starred, counted in register's unread_msgs; a bot
 * gets none, and reactivating an account sends none.
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import {
  assertError,
  assertSuccess,
  basicAuth,
  rawRequest,
  type ApiClient,
  type Who,
} from '../helpers/api.js';
import { firstOwner, startChild } from '../helpers/child-server.js';
import { manage } from '../helpers/manage.js';
import type { FetchedMessage } from '../helpers/messages.js';
import { acceptInvitation, createByApi, invitationLink } from '../helpers/accounts.js';
import { CLUSTER_MODE, restartServer, startServer } from '../helpers/server.js';

const WELCOME_BOT = 'welcome-bot@zulip.com';
const ONE_PROCESS = CLUSTER_MODE && 'cluster mode: a restart, or a child server';

t.setTimeout(240_000);

/** Every message of the account's combined feed, oldest first. */
async function feed(t: Test, api: ApiClient, who: Who): Promise<FetchedMessage[]> {
  const res = await api.get(who, 'messages', {
    anchor: 'newest',
    num_before: 5000,
    num_after: 0,
    narrow: '[]',
  });
  return assertSuccess(t, res, 'GET /messages').messages as FetchedMessage[];
}

type Unread = {
  count: number;
  pms: { other_user_id: number; sender_id: number; unread_message_ids: number[] }[];
};

async function register(t: Test, api: ApiClient, who: Who) {
  return assertSuccess(
    t,
    await api.post(who, 'register', {
      fetch_event_types: '["message","update_message_flags","realm_user"]',
    }),
  );
}

/**
 * The account has exactly one message from Welcome Bot: a direct message to it alone, rendered,
 * unread and starred, and in register's unread direct messages. Its id.
 */
async function assertWelcomed(
  t: Test,
  api: ApiClient,
  who: { email: string; api_key: string },
  admin: boolean,
) {
  const msgs = await feed(t, api, who);
  const fromBot = msgs.filter((m) => m.sender_email === WELCOME_BOT);
  t.equal(fromBot.length, 1, 'exactly one message from Welcome Bot');
  const m = fromBot[0]!;
  t.equal(m.type, 'private', 'a direct message');
  t.equal(m.sender_full_name, 'Welcome Bot');
  const recipients = (m.display_recipient as { email: string }[]).map((r) => r.email).sort();
  t.same(recipients, [who.email.toLowerCase(), WELCOME_BOT].sort(), 'between the bot and them');
  t.notOk(m.flags.includes('read'), 'unread');
  t.ok(m.flags.includes('starred'), 'starred, as the reference stars it');
  t.match(m.content, /^<p>Hi, and welcome!/, 'rendered (HTML)');
  t.match(m.content, /<a href="#settings\/account">Settings<\/a>/, 'links to the settings');
  t.match(m.content, /<code>r<\/code>/, 'says how to reply');
  t.equal(
    /settings\/invitations/.test(m.content),
    admin,
    admin ? 'the administrators’ line' : 'no administrators’ line for a member',
  );

  const body = await register(t, api, who);
  const unread = body.unread_msgs as Unread;
  const pm = unread.pms.find((p) => p.unread_message_ids.includes(m.id));
  t.ok(pm, 'in register’s unread direct messages');
  t.equal(pm?.other_user_id, m.sender_id, 'the conversation with Welcome Bot');
  t.ok(unread.count >= 1, 'counted');
  const starred = body.starred_messages as number[] | undefined;
  if (starred) t.ok(starred.includes(m.id), 'in starred_messages');

  // The sender as the API shows it: a bot with no owner, a system bot in cross_realm_bots.
  const users = assertSuccess(t, await api.get(who, 'users')).members as Record<string, unknown>[];
  const bot = users.find((u) => u.user_id === m.sender_id);
  t.match(bot, { email: WELCOME_BOT, is_bot: true, bot_type: 1, bot_owner_id: null });
  const system = (body.cross_realm_bots as Record<string, unknown>[]).find(
    (u) => u.user_id === m.sender_id,
  );
  t.match(
    system,
    {
      email: WELCOME_BOT,
      delivery_email: WELCOME_BOT,
      full_name: 'Welcome Bot',
      is_bot: true,
      is_system_bot: true,
      bot_type: 1,
      bot_owner_id: null,
    },
    'in register’s cross_realm_bots, as a system bot',
  );
  return m.id;
}

t.test('POST /users: one unread, starred direct message from Welcome Bot', async (t) => {
  const ts = await startServer(t);
  const before = assertSuccess(t, await ts.api.get('hamlet', 'users')).members as {
    email: string;
  }[];
  t.notOk(
    before.some((u) => u.email === WELCOME_BOT),
    'the fixture realm has no Welcome Bot yet',
  );
  const newbie = await createByApi(t, ts.api, 'newbie@zulip.com');
  await assertWelcomed(t, ts.api, newbie, false);
  const after = assertSuccess(t, await ts.api.get('hamlet', 'users')).members as {
    email: string;
  }[];
  t.ok(
    after.some((u) => u.email === WELCOME_BOT),
    'Welcome Bot was created on first need',
  );
  t.notOk(
    (await feed(t, ts.api, 'hamlet')).some((m) => m.sender_email === WELCOME_BOT),
    'nobody else gets it',
  );

  // A second account: its own message, from the same bot; the first account's stays one.
  const second = await createByApi(t, ts.api, 'second@zulip.com');
  await assertWelcomed(t, ts.api, second, false);
  const again = await feed(t, ts.api, newbie);
  t.equal(again.filter((m) => m.sender_email === WELCOME_BOT).length, 1, 'still one for the first');
});

t.test('invitations: a reusable link and an e-mail invitation; an administrator', async (t) => {
  const ts = await startServer(t);
  const multi = assertSuccess(t, await ts.api.post('iago', 'invites/multiuse', {}))
    .invite_link as string;
  const byLink = await acceptInvitation(t, ts, multi, 'linked@example.com', true);
  await assertWelcomed(t, ts.api, byLink, false);

  assertSuccess(
    t,
    await ts.api.post('iago', 'invites', {
      invitee_emails: 'mailed@example.com',
      stream_ids: '[]',
      invite_as: 200,
    }),
  );
  const mailed = await acceptInvitation(
    t,
    ts,
    invitationLink(ts, 'mailed@example.com'),
    'mailed@example.com',
    false,
  );
  await assertWelcomed(t, ts.api, mailed, true);
});

t.test('an invitation’s custom text: a second message from Welcome Bot', async (t) => {
  const ts = await startServer(t);
  const invite = async (email: string, text: string | undefined) => {
    assertSuccess(
      t,
      await ts.api.post('iago', 'invites', {
        invitee_emails: email,
        stream_ids: '[]',
        invite_as: 400,
        ...(text === undefined ? {} : { welcome_message_custom_text: text }),
      }),
    );
    return acceptInvitation(t, ts, invitationLink(ts, email), email, false);
  };

  const who = await invite(
    'custom@example.com',
    'Glad you are here, **friend**: see #**general**.',
  );
  const fromBot = (await feed(t, ts.api, who)).filter((m) => m.sender_email === WELCOME_BOT);
  t.equal(fromBot.length, 2, 'the welcome message, then the custom text');
  const [welcome, custom] = fromBot;
  t.match(welcome!.content, /^<p>Hi, and welcome!/, 'the welcome message first');
  t.ok(welcome!.flags.includes('starred'), 'which is starred');
  t.ok(custom!.id > welcome!.id, 'then the custom text');
  t.match(custom!.content, /^<p>Glad you are here, <strong>friend<\/strong>: see /, 'rendered');
  t.notOk(custom!.flags.includes('read'), 'unread');
  t.notOk(custom!.flags.includes('starred'), 'not starred');

  // An empty text, or none: the welcome message alone.
  for (const [email, text] of [
    ['empty@example.com', ''],
    ['none@example.com', undefined],
  ] as const) {
    const other = await invite(email, text);
    const msgs = (await feed(t, ts.api, other)).filter((m) => m.sender_email === WELCOME_BOT);
    t.equal(msgs.length, 1, `${email}: the welcome message alone`);
  }
});

t.test('the admin tool’s create-user', { skip: ONE_PROCESS }, async (t) => {
  const ts = await startServer(t);
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
  await assertWelcomed(t, api, who, false);
});

t.test('a bot gets nothing; reactivating an account sends nothing', async (t) => {
  const ts = await startServer(t);
  const newbie = await createByApi(t, ts.api, 'newbie@zulip.com');
  const first = await assertWelcomed(t, ts.api, newbie, false);

  const bot = assertSuccess(
    t,
    await ts.api.post('hamlet', 'bots', { full_name: 'Hamlet Bot', short_name: 'hambot' }),
  );
  const botWho = { email: 'hambot-bot@testserver.local', api_key: bot.api_key as string };
  t.same(await feed(t, ts.api, botWho), [], 'a new bot: an empty feed');

  assertSuccess(t, await ts.api.delete('iago', `users/${newbie.user_id}`));
  assertSuccess(t, await ts.api.post('iago', `users/${newbie.user_id}/reactivate`));
  const fromBot = (await feed(t, ts.api, newbie)).filter((m) => m.sender_email === WELCOME_BOT);
  t.same(
    fromBot.map((m) => m.id),
    [first],
    'still the one message of the account’s creation',
  );
});

t.test('the Welcome Bot is no user of the realm for DELETE /users/me', async (t) => {
  // As the Notification Bot: the reference's system bots live outside the realm, so the last
  // person is still the realm's only user.
  const ts = await startServer(t);
  const newbie = await createByApi(t, ts.api, 'newbie@zulip.com');
  for (const who of ['iago', 'shiva', 'hamlet', 'othello', 'cordelia', 'prospero', 'polonius'])
    assertSuccess(t, await ts.api.delete(who, 'users/me'), `${who} leaves`);
  assertSuccess(t, await ts.api.delete(newbie, 'users/me'), 'the new account leaves');
  const only = await ts.api.delete('desdemona', 'users/me');
  assertError(t, only, 'Cannot deactivate the only user.', { code: 'CANNOT_DEACTIVATE_LAST_USER' });
  t.match(only.body, { is_last_owner: false, entity: 'user' });
});

t.test(
  'the server’s first start: the first owner is welcomed too',
  { skip: ONE_PROCESS },
  async (t) => {
    const dataDir = t.testdir();
    const server = await startChild(dataDir, {});
    t.teardown(() => server.kill('SIGKILL'));
    const owner = firstOwner(dataDir);
    const get = async (p: string, query = '') =>
      JSON.parse(
        (
          await rawRequest(server.url, {
            method: 'GET',
            path: `/api/v1/${p}${query}`,
            headers: { authorization: basicAuth(owner.email, owner.apiKey) },
          })
        ).text,
      ) as Record<string, unknown>;
    const q = new URLSearchParams({
      anchor: 'newest',
      num_before: '100',
      num_after: '0',
      narrow: '[]',
    });
    const msgs = (await get('messages', `?${q.toString()}`)).messages as FetchedMessage[];
    const dms = msgs.filter((m) => m.type === 'private');
    t.equal(dms.length, 1, 'one direct message');
    t.equal(dms[0]?.sender_email, WELCOME_BOT, 'from Welcome Bot');
    t.equal(dms[0]?.id, msgs.at(-1)?.id, 'after the channel messages of the realm’s set-up');
    t.notOk(dms[0]?.flags.includes('read'), 'unread');
    t.match(dms[0]?.content, /settings\/invitations/, 'the owner gets the administrators’ line');
    t.ok(fs.existsSync(path.join(dataDir, 'first-owner.txt')));
  },
);
