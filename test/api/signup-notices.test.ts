/**
 * The Notification Bot's notices about a new account (src/mutations/welcome.ts announceNewUser and
 * tellReferrer; the reference's notify_new_user and process_new_human_user): "<new account>
 * joined this organization." in the realm's signup announcements channel, topic "signups", for
 * every human account made by POST /users or an invitation (none when the realm has no such
 * channel, or it is archived; none for a bot or a reactivation); and "<new account> accepted your
 * invitation." to the sender of an e-mail invitation that asked for it (not when it said no, not
 * for a reusable link).
 */
import t, { type Test } from 'tap';
import { assertSuccess, type ApiClient, type Who } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import type { FetchedMessage } from '../helpers/messages.js';
import { acceptInvitation, createByApi, invitationLink } from '../helpers/accounts.js';
import { startServer, type TestServer } from '../helpers/server.js';

const BOT = 'notification-bot@zulip.com';

t.setTimeout(240_000);

async function feed(t: Test, api: ApiClient, who: Who): Promise<FetchedMessage[]> {
  const res = await api.get(who, 'messages', {
    anchor: 'newest',
    num_before: 1000,
    num_after: 0,
    narrow: '[]',
    apply_markdown: 'true',
  });
  return assertSuccess(t, res).messages as FetchedMessage[];
}

/** The Notification Bot's messages in `who`'s feed whose text says `says`. */
async function notices(t: Test, api: ApiClient, who: Who, says: string) {
  return (await feed(t, api, who)).filter(
    (m) => m.sender_email === BOT && m.content.includes(says),
  );
}

async function setSignupChannel(t: Test, ts: TestServer, id: number) {
  assertSuccess(
    t,
    await ts.api.patch('iago', 'realm', { signup_announcements_stream_id: id }),
    `signup announcements channel ${id}`,
  );
}

/** An e-mail invitation from iago to `email`; its link. */
async function invite(t: Test, ts: TestServer, email: string, notify: boolean): Promise<string> {
  assertSuccess(
    t,
    await ts.api.post('iago', 'invites', {
      invitee_emails: email,
      stream_ids: '[]',
      invite_as: 400,
      notify_referrer_on_join: notify,
    }),
  );
  return invitationLink(ts, email);
}

t.test('a new account is announced in the signup announcements channel', async (t) => {
  const ts = await startServer(t);
  const fx = ts.fx.users;
  const lobby = await createChannel(ts.api, 'iago', 'lobby', {
    principals: [fx.hamlet!.id, fx.iago!.id],
  });
  assertSuccess(t, await ts.api.post('iago', 'default_streams', { stream_id: lobby }));

  // No signup announcements channel (the fixture realm's setting): nothing anywhere.
  await createByApi(t, ts.api, 'quiet@zulip.com', 'Quiet One');
  t.same(await notices(t, ts.api, 'hamlet', 'joined this organization'), [], 'no channel: none');

  await setSignupChannel(t, ts, lobby);
  const newbie = await createByApi(t, ts.api, 'newbie@zulip.com', 'New & Person');
  const [m, ...more] = await notices(t, ts.api, 'hamlet', 'joined this organization');
  t.equal(more.length, 0, 'one notice');
  t.match(m, {
    type: 'stream',
    stream_id: lobby,
    subject: 'signups',
    sender_full_name: 'Notification Bot',
    content:
      `<p><span class="user-mention silent" data-user-id="${newbie.user_id}">New &amp; Person` +
      '</span> joined this organization.</p>',
  });
  t.notOk(m!.flags.includes('mentioned'), 'a silent mention: nobody is mentioned');

  // The markdown, as GET /messages gives it raw.
  const raw = assertSuccess(
    t,
    await ts.api.get('hamlet', `messages/${m!.id}`, { apply_markdown: 'false' }),
  );
  t.equal(
    (raw.message as { content: string }).content,
    `@_**New & Person|${newbie.user_id}** joined this organization.`,
    'its markdown: a silent mention',
  );

  // The new account, subscribed to the default channel in the same transaction, has it too.
  const own = await notices(t, ts.api, newbie, 'joined this organization');
  t.same(
    own.map((x) => x.id),
    [m!.id],
    'the new account receives its own notice',
  );

  // A bot and a reactivated account are not announced.
  assertSuccess(
    t,
    await ts.api.post('hamlet', 'bots', { full_name: 'Hamlet Bot', short_name: 'hambot' }),
  );
  assertSuccess(t, await ts.api.delete('iago', `users/${newbie.user_id}`));
  assertSuccess(t, await ts.api.post('iago', `users/${newbie.user_id}/reactivate`));
  t.equal(
    (await notices(t, ts.api, 'hamlet', 'joined this organization')).length,
    1,
    'still one: bots and reactivations are not announced',
  );

  // An archived signup channel: none (and the account is still made).
  assertSuccess(t, await ts.api.delete('iago', `streams/${lobby}`));
  await createByApi(t, ts.api, 'late@zulip.com', 'Late Comer');
  t.equal((await notices(t, ts.api, 'iago', 'Late Comer')).length, 0, 'an archived channel: none');
});

t.test('invitations: the signup notice, and the sender told when asked', async (t) => {
  const ts = await startServer(t);
  const general = await createChannel(ts.api, 'iago', 'general', {
    principals: [ts.fx.users.hamlet!.id],
  });
  await setSignupChannel(t, ts, general);

  // An e-mail invitation that asks: iago is told, by a direct message from Notification Bot.
  const asked = await acceptInvitation(
    t,
    ts,
    await invite(t, ts, 'asked@example.com', true),
    'asked@example.com',
    false,
    "Invited O'Person & co",
  );
  const told = await notices(t, ts.api, 'iago', 'accepted your invitation');
  t.equal(told.length, 1, 'one notice to the sender');
  t.match(told[0], {
    type: 'private',
    content:
      `<p><span class="user-mention silent" data-user-id="${asked.user_id}">Invited O'Person &amp; co` +
      '</span> accepted your invitation.</p>',
  });
  t.same(
    (told[0]!.display_recipient as { email: string }[]).map((r) => r.email).sort(),
    [BOT, 'iago@zulip.com'].sort(),
    'between Notification Bot and the sender',
  );
  t.notOk(told[0]!.flags.includes('read'), 'unread for the sender');
  t.equal(
    (await notices(t, ts.api, 'hamlet', 'joined this organization')).length,
    1,
    'and announced in the signup channel',
  );

  // One that says no; a reusable link: the sender is not told.
  await acceptInvitation(
    t,
    ts,
    await invite(t, ts, 'unasked@example.com', false),
    'unasked@example.com',
    false,
  );
  const multi = assertSuccess(t, await ts.api.post('iago', 'invites/multiuse', {}))
    .invite_link as string;
  await acceptInvitation(t, ts, multi, 'linked@example.com', true);
  t.equal(
    (await notices(t, ts.api, 'iago', 'accepted your invitation')).length,
    1,
    'still one: not asked, or a reusable link',
  );
  t.equal(
    (await notices(t, ts.api, 'hamlet', 'joined this organization')).length,
    3,
    'every new account announced',
  );
});
