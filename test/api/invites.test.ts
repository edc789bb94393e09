/**
 * Invitations over the API: reusable links (POST /invites/multiuse), e-mail invitations
 * (POST /invites), listing, revoking, resending; who may do what (the caller's permission
 * groups, "equal or stricter" roles, channels and groups); the reference's exact errors; and
 * `invites_changed` to exactly the administrators and the invitation's creator, through real
 * queues. Ported from the reference's zerver/tests/test_invite.py. Accepting an invitation is in
 * invite-accept.test.ts.
 */
import t, { type Test } from 'tap';
import { assertError, assertSuccess, type ApiClient } from '../helpers/api.js';
import { createChannel, setRealmSettings, systemGroupId } from '../helpers/channels.js';
import { register } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer, type TestServer } from '../helpers/server.js';

type Invite = Record<string, unknown> & { id: number; is_multiuse: boolean };

async function createLink(
  t: Test,
  api: ApiClient,
  who: string,
  params: Record<string, unknown> = {},
): Promise<string> {
  const res = await api.post(who, 'invites/multiuse', params);
  assertMatchesOpenApi(t, '/invites/multiuse', 'post', res.body);
  return assertSuccess(t, res, `${who} creates a link`).invite_link as string;
}

async function invites(t: Test, api: ApiClient, who: string): Promise<Invite[]> {
  const res = await api.get(who, 'invites');
  assertMatchesOpenApi(t, '/invites', 'get', res.body);
  return assertSuccess(t, res, `GET /invites as ${who}`).invites as Invite[];
}

function allowMultiuse(ts: TestServer, group: string): void {
  setRealmSettings(ts, { create_multiuse_invite_group: systemGroupId(ts, group) });
}

t.test('a reusable link: its URL, its listing, its default and chosen lifetimes', async (t) => {
  const { api, fx } = await startServer(t);
  const link = await createLink(t, api, 'iago');
  t.match(link, /^http:\/\/testserver\.local\/join\/[a-z2-7]{24}\/$/);
  const [listed] = await invites(t, api, 'iago');
  t.same(Object.keys(listed!).sort(), [
    'expiry_date',
    'id',
    'invited',
    'invited_as',
    'invited_by_user_id',
    'is_multiuse',
    'link_url',
  ]);
  t.match(listed, {
    invited_by_user_id: fx.users.iago!.id,
    invited_as: 400,
    is_multiuse: true,
    link_url: link,
  });
  t.equal(listed!.expiry_date, (listed!.invited as number) + 14400 * 60, '10 days by default');

  await createLink(t, api, 'iago', { invite_expires_in_minutes: null, invite_as: 600 });
  await createLink(t, api, 'iago', { invite_expires_in_minutes: 60 });
  const all = await invites(t, api, 'iago');
  t.equal(all.length, 3);
  t.equal(all[1]!.expiry_date, null, 'null: never expires');
  t.equal(all[1]!.invited_as, 600);
  t.equal(all[2]!.expiry_date, (all[2]!.invited as number) + 3600);
  // An already expired one is not listed.
  await createLink(t, api, 'iago', { invite_expires_in_minutes: -1 });
  t.equal((await invites(t, api, 'iago')).length, 3);
});

t.test('who may create links: realm_create_multiuse_invite_group, then roles', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const refused = async (who: string, params: Record<string, unknown>, msg: string) => {
    const res = await api.post(who, 'invites/multiuse', params);
    const code = msg.endsWith('valid JSON')
      ? 'INVALID_JSON'
      : msg.startsWith('Must be an organization')
        ? 'UNAUTHORIZED_PRINCIPAL'
        : 'BAD_REQUEST';
    assertError(t, res, msg, { code });
    // (The description's 400 is a oneOf of identically shaped errors, which no body can match
    // exactly once; the shape is checked through assertError.)
  };
  // Administrators by default.
  await refused('hamlet', {}, 'Insufficient permission');
  await refused('shiva', {}, 'Insufficient permission');
  await refused('polonius', {}, 'Not allowed for guest users');
  await refused('iago', { invite_as: 100 }, 'Must be an organization owner');
  for (const role of [200, 300, 400, 600]) await createLink(t, api, 'iago', { invite_as: role });
  await createLink(t, api, 'desdemona', { invite_as: 100 });

  allowMultiuse(ts, 'role:moderators');
  await refused('hamlet', {}, 'Insufficient permission');
  await refused('shiva', { invite_as: 200 }, 'Must be an organization administrator');
  await refused('shiva', { invite_as: 100 }, 'Must be an organization owner');
  await createLink(t, api, 'shiva', { invite_as: 300 }); // equal restrictions
  await createLink(t, api, 'shiva', { invite_as: 600 });

  allowMultiuse(ts, 'role:members');
  await refused('hamlet', { invite_as: 300 }, 'Must be an organization administrator');
  await refused('hamlet', { invite_as: 100 }, 'Must be an organization owner');
  await createLink(t, api, 'hamlet', {});
  await createLink(t, api, 'hamlet', { invite_as: 600 });
  await refused('polonius', {}, 'Not allowed for guest users');

  await refused('iago', { invite_as: 500 }, 'Invalid invite_as');
  await refused('iago', { invite_as: '"member"' }, 'invite_as is not an integer');
  await refused(
    'iago',
    { invite_expires_in_minutes: 10 ** 13 },
    'Invalid invite_expires_in_minutes',
  );
  await refused(
    'iago',
    { invite_expires_in_minutes: 'soon' },
    'invite_expires_in_minutes is not valid JSON',
  );
});

t.test('channels: readable, and default or open to the caller adding subscribers', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const open = await createChannel(api, 'iago', 'Agora');
  const secret = await createChannel(api, 'othello', 'Secret', { invite_only: true });
  const archived = await createChannel(api, 'iago', 'Old');
  assertSuccess(t, await api.delete('iago', `streams/${archived}`));
  const def = await createChannel(api, 'iago', 'Welcome');
  assertSuccess(t, await api.post('iago', 'default_streams', { stream_id: def }));
  allowMultiuse(ts, 'role:members');
  for (const id of [99999, secret, archived]) {
    assertError(
      t,
      await api.post('hamlet', 'invites/multiuse', { stream_ids: [open, id] }),
      `Invalid channel ID ${id}. No invites were sent.`,
    );
  }
  await createLink(t, api, 'hamlet', { stream_ids: [open, def] });
  // Only administrators may add subscribers: members keep default channels only.
  setRealmSettings(ts, { can_add_subscribers_group: systemGroupId(ts, 'role:administrators') });
  assertError(
    t,
    await api.post('hamlet', 'invites/multiuse', { stream_ids: [def, open] }),
    'You do not have permission to subscribe other users to channels.',
  );
  await createLink(t, api, 'hamlet', {
    stream_ids: [def],
    include_realm_default_subscriptions: true,
  });
  await createLink(t, api, 'iago', { stream_ids: [open, def] });
  // iago cannot read the private channel he is not subscribed to.
  assertError(
    t,
    await api.post('iago', 'invites/multiuse', { stream_ids: [secret] }),
    `Invalid channel ID ${secret}. No invites were sent.`,
  );
  assertError(
    t,
    await api.post('iago', 'invites/multiuse', { stream_ids: ['x'] }),
    'stream_ids[0] is not an integer',
  );
});

t.test('groups: the caller must be allowed to add members', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  assertSuccess(
    t,
    await api.post('iago', 'user_groups/create', {
      name: 'Testers',
      description: 'd',
      members: [],
    }),
  );
  const groups = (await api.get('iago', 'user_groups')).body.user_groups as {
    id: number;
    name: string;
  }[];
  const testers = groups.find((g) => g.name === 'Testers')!.id;
  allowMultiuse(ts, 'role:members');
  assertError(
    t,
    await api.post('hamlet', 'invites/multiuse', { group_ids: [testers] }),
    'Insufficient permission',
  );
  assertError(
    t,
    await api.post('iago', 'invites/multiuse', { group_ids: [99999] }),
    'Invalid user group',
  );
  assertError(
    t,
    await api.post('iago', 'invites/multiuse', { group_ids: [systemGroupId(ts, 'role:members')] }),
    'Insufficient permission',
  );
  await createLink(t, api, 'iago', { group_ids: [testers] });
});

t.test('welcome_message_custom_text: administrators only, at most 8000 characters', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  allowMultiuse(ts, 'role:members');
  assertError(
    t,
    await api.post('hamlet', 'invites/multiuse', { welcome_message_custom_text: 'Hi!' }),
    'Must be an organization administrator',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  assertError(
    t,
    await api.post('iago', 'invites/multiuse', { welcome_message_custom_text: 'x'.repeat(8001) }),
    'welcome_message_custom_text is too long (limit: 8000 characters)',
  );
  await createLink(t, api, 'iago', { welcome_message_custom_text: 'x'.repeat(8000) });
  await createLink(t, api, 'iago', { welcome_message_custom_text: '' });
  await createLink(t, api, 'hamlet', {});
});

t.test(
  'e-mail invitations: stored (no mail is sent), listed, the reference refusals',
  async (t) => {
    const ts = await startServer(t);
    const { api, fx } = ts;
    const res = await api.post('hamlet', 'invites', {
      invitee_emails:
        'alice@example.com, Bob Smith <bob@example.com>\ncarol@example.com,alice@example.com',
      stream_ids: [],
    });
    assertMatchesOpenApi(t, '/invites', 'post', res.body);
    assertSuccess(t, res);
    const mine = await invites(t, api, 'hamlet');
    t.same(
      mine.map((i) => i.email),
      ['alice@example.com', 'bob@example.com', 'carol@example.com'],
    );
    t.match(mine[0], {
      invited_by_user_id: fx.users.hamlet!.id,
      invited_as: 400,
      is_multiuse: false,
      notify_referrer_on_join: true,
    });
    t.equal(mine[0]!.expiry_date, (mine[0]!.invited as number) + 14400 * 60);

    const failed = async (params: Record<string, unknown>, msg: string, extra: object) => {
      const before = (await invites(t, api, 'iago')).length;
      const r = await api.post('hamlet', 'invites', { stream_ids: [], ...params });
      assertError(t, r, msg, { code: 'INVITATION_FAILED' });
      assertMatchesOpenApi(t, '/invites', 'post', r.body, { status: '400' });
      t.match(r.body, { license_limit_reached: false, daily_limit_reached: false, ...extra });
      return before;
    };
    // An invalid address: nothing is stored.
    let before = await failed(
      { invitee_emails: 'dave@example.com, not-an-address, hamlet@zulip.com' },
      "Some emails did not validate, so we didn't send any invitations.",
      {
        errors: [
          ['not-an-address', 'Invalid address.', false],
          ['hamlet@zulip.com', 'Already has an account.', false],
        ],
        sent_invitations: false,
      },
    );
    t.equal((await invites(t, api, 'iago')).length, before, 'nothing stored');
    // Existing accounts are skipped; the others are invited, and the answer says so.
    assertSuccess(t, await api.delete('iago', `users/${fx.users.prospero!.id}`));
    before = await failed(
      { invitee_emails: 'othello@zulip.com,erin@example.com,prospero@zulip.com' },
      "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
      {
        errors: [
          ['othello@zulip.com', 'Already has an account.', false],
          ['prospero@zulip.com', 'Account has been deactivated.', true],
        ],
        sent_invitations: true,
      },
    );
    t.equal((await invites(t, api, 'iago')).length, before + 1, 'erin was invited');
    before = await failed(
      { invitee_emails: 'othello@zulip.com' },
      "We weren't able to invite anyone.",
      {
        errors: [['othello@zulip.com', 'Already has an account.', false]],
        sent_invitations: false,
      },
    );
    t.equal((await invites(t, api, 'iago')).length, before);

    assertError(
      t,
      await api.post('hamlet', 'invites', { invitee_emails: '', stream_ids: [] }),
      'You must specify at least one email address.',
    );
    assertError(
      t,
      await api.post('hamlet', 'invites', { invitee_emails: 'x@example.com' }),
      "Missing 'stream_ids' argument",
      { code: 'REQUEST_VARIABLE_MISSING' },
    );
    assertError(
      t,
      await api.post('hamlet', 'invites', { stream_ids: [] }),
      "Missing 'invitee_emails' argument",
      { code: 'REQUEST_VARIABLE_MISSING' },
    );
    assertError(
      t,
      await api.post('polonius', 'invites', { invitee_emails: 'x@example.com', stream_ids: [] }),
      'Not allowed for guest users',
    );
    assertError(
      t,
      await api.post('hamlet', 'invites', {
        invitee_emails: 'x@example.com',
        stream_ids: [],
        invite_as: 300,
      }),
      'Must be an organization administrator',
      { code: 'UNAUTHORIZED_PRINCIPAL' },
    );
    assertError(
      t,
      await api.post('hamlet', 'invites', { invitee_emails: 'x@example.com', stream_ids: [99] }),
      'Invalid channel ID 99. No invites were sent.',
    );
    const r = await api.post('hamlet', 'invites', {
      invitee_emails: 'frank@example.com',
      stream_ids: [],
      notify_referrer_on_join: false,
    });
    assertSuccess(t, r);
    t.equal(
      (await invites(t, api, 'hamlet')).find((i) => i.email === 'frank@example.com')!
        .notify_referrer_on_join,
      false,
    );

    // can_invite_users_group decides who may send them.
    setRealmSettings(ts, { can_invite_users_group: systemGroupId(ts, 'role:administrators') });
    assertError(
      t,
      await api.post('hamlet', 'invites', { invitee_emails: 'x@example.com', stream_ids: [] }),
      'Insufficient permission',
    );
    assertSuccess(
      t,
      await api.post('iago', 'invites', { invitee_emails: 'x@example.com', stream_ids: [] }),
    );
  },
);

t.test('an open realm keeps brand-new accounts from sending e-mail invitations', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  setRealmSettings(ts, { invite_required: false });
  const r = await api.post('hamlet', 'invites', {
    invitee_emails: 'x@example.com',
    stream_ids: [],
  });
  assertError(
    t,
    r,
    'Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.',
    { code: 'INVITATION_FAILED' },
  );
  t.match(r.body, { errors: [], sent_invitations: false });
  assertSuccess(
    t,
    await api.post('iago', 'invites', { invitee_emails: 'x@example.com', stream_ids: [] }),
  );
});

t.test('listing: administrators see every invitation, others their own', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  allowMultiuse(ts, 'role:members');
  assertSuccess(
    t,
    await api.post('hamlet', 'invites', { invitee_emails: 'h@example.com', stream_ids: [] }),
  );
  assertSuccess(
    t,
    await api.post('othello', 'invites', { invitee_emails: 'o@example.com', stream_ids: [] }),
  );
  await createLink(t, api, 'hamlet');
  await createLink(t, api, 'iago');
  const hamlets = await invites(t, api, 'hamlet');
  t.same(
    hamlets.map((i) => [i.is_multiuse, i.email ?? 'link']),
    [
      [false, 'h@example.com'],
      [true, 'link'],
    ],
  );
  t.equal((await invites(t, api, 'othello')).length, 1);
  t.equal((await invites(t, api, 'shiva')).length, 0);
  t.equal((await invites(t, api, 'iago')).length, 4);
  t.equal((await invites(t, api, 'desdemona')).length, 4);
  assertError(t, await api.get('polonius', 'invites'), 'Not allowed for guest users');
});

t.test('revoking and resending: who may, and what is left', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  assertSuccess(
    t,
    await api.post('hamlet', 'invites', { invitee_emails: 'h@example.com', stream_ids: [] }),
  );
  assertSuccess(
    t,
    await api.post('desdemona', 'invites', {
      invitee_emails: 'owner@example.com',
      stream_ids: [],
      invite_as: 100,
    }),
  );
  assertSuccess(
    t,
    await api.post('iago', 'invites', { invitee_emails: 'i@example.com', stream_ids: [] }),
  );
  await createLink(t, api, 'iago');
  const all = await invites(t, api, 'iago');
  const byEmail = (e: string) => all.find((i) => i.email === e)!.id;
  const h = byEmail('h@example.com');
  const owner = byEmail('owner@example.com');
  const i = byEmail('i@example.com');
  const multi = all.find((x) => x.is_multiuse)!.id;

  // Resending: the same access, then the honest answer.
  const noMail =
    'This server does not send email, so the invitation cannot be resent. Share its link with the invitee instead.';
  assertError(t, await api.post('hamlet', `invites/${h}/resend`), noMail);
  assertError(
    t,
    await api.post('hamlet', `invites/${i}/resend`),
    'Must be an organization administrator',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  assertError(
    t,
    await api.post('iago', `invites/${owner}/resend`),
    'Must be an organization owner',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  assertError(t, await api.post('iago', `invites/${multi}/resend`), 'No such invitation');
  const unknown = await api.post('iago', 'invites/99999/resend');
  assertError(t, unknown, 'No such invitation');
  assertMatchesOpenApi(t, '/invites/{invite_id}/resend', 'post', unknown.body, { status: '400' });

  // Revoking e-mail invitations.
  assertError(
    t,
    await api.delete('hamlet', `invites/${i}`),
    'Must be an organization administrator',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  assertError(t, await api.delete('iago', `invites/${owner}`), 'Must be an organization owner', {
    code: 'UNAUTHORIZED_PRINCIPAL',
  });
  assertError(t, await api.delete('polonius', `invites/${h}`), 'Not allowed for guest users');
  assertError(t, await api.delete('iago', `invites/${multi}`), 'No such invitation');
  const revoked = await api.delete('hamlet', `invites/${h}`);
  assertMatchesOpenApi(t, '/invites/{invite_id}', 'delete', revoked.body);
  assertSuccess(t, revoked);
  const again = await api.delete('hamlet', `invites/${h}`);
  assertError(t, again, 'No such invitation');
  assertMatchesOpenApi(t, '/invites/{invite_id}', 'delete', again.body, { status: '400' });
  assertSuccess(t, await api.delete('desdemona', `invites/${owner}`));
  assertSuccess(t, await api.delete('iago', `invites/${i}`));

  // Revoking the link.
  assertError(t, await api.delete('iago', `invites/multiuse/${h}`), 'No such invitation');
  assertError(
    t,
    await api.delete('hamlet', `invites/multiuse/${multi}`),
    'Must be an organization administrator',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  const r = await api.delete('iago', `invites/multiuse/${multi}`);
  assertMatchesOpenApi(t, '/invites/multiuse/{invite_id}', 'delete', r.body);
  assertSuccess(t, r);
  const twice = await api.delete('iago', `invites/multiuse/${multi}`);
  assertError(t, twice, 'Invitation has already been revoked');
  t.same(await invites(t, api, 'iago'), [], 'nothing left');
});

t.test('invites_changed reaches administrators and the creator, nobody else', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  allowMultiuse(ts, 'role:members');
  const who = ['iago', 'desdemona', 'hamlet', 'othello', 'shiva', 'polonius'];
  const queues = new Map<string, { queue_id: string; last: number }>();
  for (const w of who) {
    const q = await register(t, api, w, {});
    queues.set(w, { queue_id: q.queue_id, last: q.last_event_id });
  }
  const received = async () => {
    const out: string[] = [];
    for (const w of who) {
      const q = queues.get(w)!;
      const res = await api.get(w, 'events', {
        queue_id: q.queue_id,
        last_event_id: q.last,
        dont_block: true,
      });
      assertMatchesOpenApi(t, '/events', 'get', res.body);
      const evs = assertSuccess(t, res).events as { id: number; type: string }[];
      if (evs.length > 0) q.last = evs[evs.length - 1]!.id;
      const n = evs.filter((e) => e.type === 'invites_changed').length;
      for (const e of evs.filter((e) => e.type === 'invites_changed'))
        t.same(Object.keys(e).sort(), ['id', 'type'], 'the event is just a signal');
      if (n > 0) out.push(`${w}×${n}`);
    }
    return out;
  };
  assertSuccess(
    t,
    await api.post('hamlet', 'invites', { invitee_emails: 'h@example.com', stream_ids: [] }),
  );
  t.same(await received(), ['iago×1', 'desdemona×1', 'hamlet×1'], 'creating (a member)');
  const id = (await invites(t, api, 'hamlet'))[0]!.id;
  assertSuccess(t, await api.delete('iago', `invites/${id}`));
  t.same(await received(), ['iago×1', 'desdemona×1', 'hamlet×1'], 'an administrator revoking it');
  await createLink(t, api, 'iago');
  t.same(await received(), ['iago×1', 'desdemona×1'], 'an administrator creating a link');
  await createLink(t, api, 'hamlet');
  t.same(await received(), ['iago×1', 'desdemona×1', 'hamlet×1'], 'a member creating a link');
  // Refusals change nothing and tell nobody.
  assertError(
    t,
    await api.post('othello', 'invites/multiuse', { invite_as: 200 }),
    'Must be an organization administrator',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  assertError(t, await api.delete('othello', `invites/${id}`), 'No such invitation');
  t.same(await received(), []);
});
