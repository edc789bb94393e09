/**
 * Accepting an invitation: the link's page (GET) and creating the account (POST of its form),
 * through the same user-creation mutation as POST /users — the invited role, channels (the
 * realm's default channels when asked) and user groups; e-mail invitations used up, reusable
 * links reusable; expired, revoked, used, malformed and other realms' links refused; and what
 * other changes do to invitations (a new account for the address, the inviter's deactivation).
 * Also `npm run manage -- list-invitations`, how an operator gets an e-mail invitation's link.
 */
import t, { type Test } from 'tap';
import {
  assertError,
  assertSuccess,
  formEncode,
  rawRequest,
  type ApiResponse,
} from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { register } from '../helpers/events.js';
import { seedRealm } from '../helpers/fixtures.js';
import { manage } from '../helpers/manage.js';
import { startServer, type TestServer } from '../helpers/server.js';

const HOST = 'testserver.local';

function open(ts: TestServer, link: string, host = HOST): Promise<ApiResponse> {
  return rawRequest(ts.url, { method: 'GET', path: new URL(link).pathname, headers: { host } });
}

function submit(
  ts: TestServer,
  link: string,
  form: Record<string, string>,
  host = HOST,
): Promise<ApiResponse> {
  const body = formEncode(form);
  return rawRequest(ts.url, {
    method: 'POST',
    path: new URL(link).pathname,
    headers: {
      host,
      'content-type': 'application/x-www-form-urlencoded',
      'content-length': String(Buffer.byteLength(body)),
    },
    body,
  });
}

function assertPage(t: Test, res: ApiResponse, status: number, text: string | RegExp): void {
  t.equal(res.status, status, `HTTP ${status}`, { body: res.text.slice(0, 500) });
  t.match(res.headers['content-type'], /^text\/html; charset=utf-8/);
  t.equal(res.headers['cache-control'], 'no-store');
  t.equal(res.headers['referrer-policy'], 'same-origin');
  if (typeof text === 'string') t.ok(res.text.includes(text), `page says: ${text}`);
  else t.match(res.text, text);
}

async function createLink(t: Test, ts: TestServer, who: string, params = {}): Promise<string> {
  const res = await ts.api.post(who, 'invites/multiuse', params);
  return assertSuccess(t, res).invite_link as string;
}

/** The link of the (only) pending e-mail invitation to `email`, as the operator command lists it. */
function emailLink(ts: TestServer, email: string): string {
  const { config } = ts.server.context;
  const store = ts.server.store;
  const row = store.invitations
    .validByRealm(ts.fx.realmId, Math.floor(Date.now() / 1000))
    .find((r) => r.email === email);
  if (!row) throw new Error(`no pending invitation for ${email}`);
  return `${config.externalScheme}://${HOST}/accounts/do_confirm/${row.confirmation_key}/`;
}

/** Logs in with a password (POST /fetch_api_key) and returns an API client for the account. */
async function login(t: Test, ts: TestServer, email: string, password: string) {
  const res = await ts.api.post(null, 'fetch_api_key', { username: email, password });
  const body = assertSuccess(t, res, `${email} logs in`);
  return { email, api_key: body.api_key as string, user_id: body.user_id as number };
}

async function subscriptionNames(ts: TestServer, who: { email: string; api_key: string }) {
  const res = await ts.api.get(who, 'users/me/subscriptions');
  return (res.body.subscriptions as { name: string }[]).map((s) => s.name).sort();
}

t.test('a reusable link creates accounts with its role, channels and groups', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const verona = await createChannel(api, 'iago', 'Verona');
  const welcome = await createChannel(api, 'iago', 'Welcome');
  await createChannel(api, 'iago', 'Elsewhere');
  assertSuccess(t, await api.post('iago', 'default_streams', { stream_id: welcome }));
  assertSuccess(
    t,
    await api.post('iago', 'user_groups/create', { name: 'Crew', description: 'd', members: [] }),
  );
  const crew = (
    (await api.get('iago', 'user_groups')).body.user_groups as { id: number; name: string }[]
  ).find((g) => g.name === 'Crew')!.id;
  const link = await createLink(t, ts, 'iago', {
    invite_as: 300,
    stream_ids: [verona],
    group_ids: [crew],
    include_realm_default_subscriptions: true,
  });

  const page = await open(ts, link);
  assertPage(t, page, 200, 'as a moderator');
  t.match(page.text, /<form method="post" action="\/join\/[a-z2-7]{24}\/">/);
  t.match(page.text, /name="email"/);
  // Without the trailing slash too.
  assertPage(t, await open(ts, link.slice(0, -1)), 200, 'Join Zulip Dev');

  const othelloQ = await register(t, api, 'othello', { event_types: ['realm_user', 'user_group'] });
  const done = await submit(ts, link, {
    email: 'newbie@example.com',
    full_name: 'New Bie',
    password: 'a good password',
  });
  // The sign-up ends in the app, logged in: a session cookie and a redirect to `/`.
  assertPage(t, done, 303, 'newbie@example.com');
  t.equal(done.headers.location, '/', 'on to the app');
  const cookie = /^confab_session=([A-Za-z0-9_-]{43});.*HttpOnly; SameSite=Lax$/.exec(
    String(done.headers['set-cookie']),
  );
  t.ok(cookie, 'a session cookie');
  const session = await rawRequest(ts.url, {
    method: 'GET',
    path: '/json/session',
    headers: { host: HOST, cookie: `confab_session=${cookie?.[1] ?? ''}` },
  });
  t.equal(assertSuccess(t, session).email, 'newbie@example.com', 'logged in as the new account');
  const newbie = await login(t, ts, 'newbie@example.com', 'a good password');
  const me = assertSuccess(t, await api.get(newbie, 'users/me'));
  t.match(me, { role: 300, full_name: 'New Bie', email: 'newbie@example.com' });
  t.same(await subscriptionNames(ts, newbie), ['Verona', 'Welcome']);
  const group = assertSuccess(t, await api.get('iago', `user_groups/${crew}/members`));
  t.same(group.members, [newbie.user_id]);

  // Other users heard of the new account and its group, as for any new account.
  const evs = assertSuccess(
    t,
    await api.get('othello', 'events', {
      queue_id: othelloQ.queue_id,
      last_event_id: othelloQ.last_event_id,
      dont_block: true,
    }),
  ).events as {
    type: string;
    op: string;
    group_id?: number;
    user_ids?: number[];
    person?: { user_id: number };
  }[];
  t.ok(
    evs.some(
      (e) => e.type === 'realm_user' && e.op === 'add' && e.person?.user_id === newbie.user_id,
    ),
  );
  t.ok(
    evs.some(
      (e) =>
        e.type === 'user_group' &&
        e.op === 'add_members' &&
        e.group_id === crew &&
        e.user_ids?.[0] === newbie.user_id,
    ),
  );

  // The link stays valid for the next person, and lists as before.
  assertPage(t, await open(ts, link), 200, 'Join Zulip Dev');
  assertPage(
    t,
    await submit(ts, link, {
      email: 'second@example.com',
      full_name: 'Second',
      password: 'another password',
    }),
    303,
    'second@example.com',
  );
  t.equal((assertSuccess(t, await api.get('iago', 'invites')).invites as unknown[]).length, 1);
});

t.test('without include_realm_default_subscriptions, only the invitation’s channels', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const welcome = await createChannel(api, 'iago', 'Welcome');
  assertSuccess(t, await api.post('iago', 'default_streams', { stream_id: welcome }));
  const verona = await createChannel(api, 'iago', 'Verona');
  const archived = await createChannel(api, 'iago', 'Doomed');
  const link = await createLink(t, ts, 'iago', { stream_ids: [verona, archived] });
  // Archived after the invitation: skipped, not an error.
  assertSuccess(t, await api.delete('iago', `streams/${archived}`));
  await submit(ts, link, { email: 'n@example.com', full_name: 'Nell', password: 'password1' });
  const n = await login(t, ts, 'n@example.com', 'password1');
  t.same(await subscriptionNames(ts, n), ['Verona']);
  t.equal(assertSuccess(t, await api.get(n, 'users/me')).role, 400, 'member by default');
});

t.test('an e-mail invitation: its address, used once, then refused', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  assertSuccess(
    t,
    await api.post('hamlet', 'invites', {
      invitee_emails: 'guest@example.com',
      stream_ids: [],
      invite_as: 600,
    }),
  );
  const link = emailLink(ts, 'guest@example.com');
  const page = await open(ts, link);
  assertPage(t, page, 200, 'Email: <strong>guest@example.com</strong>');
  t.notMatch(page.text, /name="email"/, 'the address is not asked');

  const watchers = {
    iago: await register(t, api, 'iago', { event_types: ['invites_changed'] }),
    hamlet: await register(t, api, 'hamlet', { event_types: ['invites_changed'] }),
    othello: await register(t, api, 'othello', { event_types: ['invites_changed'] }),
  };
  // A submitted e-mail field is ignored: the invitation says who.
  assertPage(
    t,
    await submit(ts, link, {
      email: 'someone-else@example.com',
      full_name: 'Guest',
      password: 'password1',
    }),
    303,
    'guest@example.com',
  );
  const guest = await login(t, ts, 'guest@example.com', 'password1');
  t.equal(assertSuccess(t, await api.get(guest, 'users/me')).role, 600);
  assertError(
    t,
    await api.post(null, 'fetch_api_key', {
      username: 'someone-else@example.com',
      password: 'password1',
    }),
    'Your username or password is incorrect',
    { status: 401, code: 'AUTHENTICATION_FAILED' },
  );

  for (const [who, q] of Object.entries(watchers)) {
    const evs = assertSuccess(
      t,
      await api.get(who, 'events', {
        queue_id: q.queue_id,
        last_event_id: q.last_event_id,
        dont_block: true,
      }),
    ).events as { type: string }[];
    t.equal(
      evs.filter((e) => e.type === 'invites_changed').length,
      who === 'othello' ? 0 : 1,
      `${who}: invites_changed`,
    );
  }
  // Used: no longer listed, the link refused.
  t.same(assertSuccess(t, await api.get('hamlet', 'invites')).invites, []);
  assertPage(t, await open(ts, link), 404, 'This invitation link has expired or has been revoked.');
  assertPage(
    t,
    await submit(ts, link, { full_name: 'Again', password: 'password1' }),
    404,
    'This invitation link has expired or has been revoked.',
  );
});

t.test('refused links: unknown, malformed, expired, revoked, another realm’s', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  const missing = 'This invitation link does not exist.';
  const gone = 'This invitation link has expired or has been revoked.';
  assertPage(t, await open(ts, `http://${HOST}/join/abcdefghijklmnopqrstuvwx/`), 404, missing);
  assertPage(t, await open(ts, `http://${HOST}/join/short/`), 404, missing);
  assertPage(
    t,
    await open(ts, `http://${HOST}/accounts/do_confirm/abcdefghijklmnopqrstuvwx/`),
    404,
    missing,
  );

  const expired = await createLink(t, ts, 'iago', { invite_expires_in_minutes: -1 });
  assertPage(t, await open(ts, expired), 404, gone);
  assertPage(
    t,
    await submit(ts, expired, { email: 'x@example.com', full_name: 'Xena', password: 'password1' }),
    404,
    gone,
  );

  const revoked = await createLink(t, ts, 'iago');
  const id = (
    assertSuccess(t, await api.get('iago', 'invites')).invites as { id: number; link_url: string }[]
  ).find((i) => i.link_url === revoked)!.id;
  assertSuccess(t, await api.delete('iago', `invites/multiuse/${id}`));
  assertPage(t, await open(ts, revoked), 404, gone);

  assertSuccess(
    t,
    await api.post('iago', 'invites', { invitee_emails: 'r@example.com', stream_ids: [] }),
  );
  const emailed = emailLink(ts, 'r@example.com');
  const emailId = (
    assertSuccess(t, await api.get('iago', 'invites')).invites as { id: number; email?: string }[]
  ).find((i) => i.email === 'r@example.com')!.id;
  assertSuccess(t, await api.delete('iago', `invites/${emailId}`));
  assertPage(t, await open(ts, emailed), 404, missing);

  // A link of this realm opened on another realm's host.
  await seedRealm(ts.server, 'eng');
  const link = await createLink(t, ts, 'iago');
  assertPage(t, await open(ts, link, `eng.${HOST}`), 404, missing);
  assertPage(t, await open(ts, link), 200, 'Join Zulip Dev');
  t.notOk(
    ts.server.store.users.byDeliveryEmail(ts.fx.realmId, 'x@example.com'),
    'nothing was created',
  );
});

t.test('the form says what is wrong and creates nothing', async (t) => {
  const ts = await startServer(t);
  const link = await createLink(t, ts, 'iago');
  const cases: [Record<string, string>, string][] = [
    [{ email: 'not an address', full_name: 'Xena', password: 'password1' }, 'Invalid address.'],
    [{ full_name: 'Xena', password: 'password1' }, 'Invalid address.'],
    [
      { email: 'hamlet@zulip.com', full_name: 'Xena', password: 'password1' },
      'Already has an account.',
    ],
    [
      { email: 'HAMLET@zulip.com', full_name: 'Xena', password: 'password1' },
      'Already has an account.',
    ],
    [{ email: 'x@example.com', full_name: '   ', password: 'password1' }, 'Name too short!'],
    [
      { email: 'x@example.com', full_name: 'A'.repeat(101), password: 'password1' },
      'Name too long!',
    ],
    [{ email: 'x@example.com', full_name: 'Xena', password: 'abc' }, 'The password is too weak.'],
    [{ email: 'x@example.com', full_name: 'Xena' }, 'The password is too weak.'],
  ];
  for (const [form, msg] of cases) {
    const res = await submit(ts, link, form);
    assertPage(t, res, 400, `<p class="error" role="alert">${msg}</p>`);
    t.match(res.text, /<form method="post"/, 'the form again');
    t.notMatch(res.text, /password1/, 'the password is not echoed');
  }
  const escaped = await submit(ts, link, {
    email: '<b>@example.com',
    full_name: '<script>',
    password: 'x',
  });
  t.notMatch(escaped.text, /<script>|<b>/, 'what was typed is escaped');
  t.notOk(ts.server.store.users.byDeliveryEmail(ts.fx.realmId, 'x@example.com'));
});

t.test('an account made another way revokes its address’s pending invitations', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  assertSuccess(
    t,
    await api.post('hamlet', 'invites', { invitee_emails: 'dup@example.com', stream_ids: [] }),
  );
  assertSuccess(
    t,
    await api.post('iago', 'invites', {
      invitee_emails: 'DUP@example.com, keep@example.com',
      stream_ids: [],
    }),
  );
  const link = emailLink(ts, 'dup@example.com');
  const hamletQ = await register(t, api, 'hamlet', { event_types: ['invites_changed'] });
  assertSuccess(
    t,
    await api.post('iago', 'users', {
      email: 'dup@example.com',
      password: 'password1',
      full_name: 'Dup',
    }),
  );
  const left = assertSuccess(t, await api.get('iago', 'invites')).invites as { email: string }[];
  t.same(
    left.map((i) => i.email),
    ['keep@example.com'],
  );
  assertPage(t, await open(ts, link), 404, 'This invitation link has expired or has been revoked.');
  const evs = assertSuccess(
    t,
    await api.get('hamlet', 'events', {
      queue_id: hamletQ.queue_id,
      last_event_id: hamletQ.last_event_id,
      dont_block: true,
    }),
  ).events as { type: string }[];
  t.equal(evs.filter((e) => e.type === 'invites_changed').length, 1, 'the inviter is told');
});

t.test('deactivating a user expires the invitations they created', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  await createLink(t, ts, 'iago', {});
  assertSuccess(
    t,
    await api.post('hamlet', 'invites', {
      invitee_emails: 'h1@example.com, h2@example.com',
      stream_ids: [],
    }),
  );
  const link = emailLink(ts, 'h1@example.com');
  const iagoQ = await register(t, api, 'iago', { event_types: ['invites_changed'] });
  assertSuccess(t, await api.delete('iago', `users/${fx.users.hamlet!.id}`));
  const left = assertSuccess(t, await api.get('iago', 'invites')).invites as {
    invited_by_user_id: number;
  }[];
  t.same(
    left.map((i) => i.invited_by_user_id),
    [fx.users.iago!.id],
    'only iago’s link is left',
  );
  assertPage(t, await open(ts, link), 404, 'This invitation link has expired or has been revoked.');
  const evs = assertSuccess(
    t,
    await api.get('iago', 'events', {
      queue_id: iagoQ.queue_id,
      last_event_id: iagoQ.last_event_id,
      dont_block: true,
    }),
  ).events as { type: string }[];
  t.equal(evs.filter((e) => e.type === 'invites_changed').length, 1);
});

t.test('npm run manage -- list-invitations prints the links an operator passes on', async (t) => {
  const ts = await startServer(t);
  const { api } = ts;
  assertSuccess(
    t,
    await api.post('hamlet', 'invites', { invitee_emails: 'op@example.com', stream_ids: [] }),
  );
  const link = await createLink(t, ts, 'iago');
  const r = await manage(ts.dataDir, ['list-invitations', '--realm', ''], {
    env: { EXTERNAL_HOST: HOST },
  });
  t.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as {
    invitations: { email: string | null; is_multiuse: boolean; link: string }[];
  };
  t.equal(out.invitations.length, 2);
  const byEmail = out.invitations.find((i) => i.email === 'op@example.com')!;
  t.equal(byEmail.is_multiuse, false);
  t.equal(byEmail.link, emailLink(ts, 'op@example.com'));
  t.equal(out.invitations.find((i) => i.is_multiuse)!.link, link);
  // The printed link works.
  assertPage(
    t,
    await submit(ts, byEmail.link, { full_name: 'Op', password: 'password1' }),
    303,
    'op@example.com',
  );
});

t.test('the sign-up form posted from another site is refused', async (t) => {
  const ts = await startServer(t);
  const link = await createLink(t, ts, 'iago');
  const body = formEncode({
    email: 'x@example.com',
    full_name: 'Xavier',
    password: 'a good password',
  });
  const res = await rawRequest(ts.url, {
    method: 'POST',
    path: new URL(link).pathname,
    headers: {
      host: HOST,
      origin: 'https://evil.example',
      'sec-fetch-site': 'cross-site',
      'content-type': 'application/x-www-form-urlencoded',
      'content-length': String(Buffer.byteLength(body)),
    },
    body,
  });
  assertError(t, res, 'CSRF error: the request comes from another site.', {
    status: 403,
    code: 'CSRF_FAILED',
  });
  t.equal(
    ts.server.context.realms.get(ts.fx.realmId)!.view.userByEmail('x@example.com'),
    undefined,
  );
  const own = await rawRequest(ts.url, {
    method: 'POST',
    path: new URL(link).pathname,
    headers: {
      host: HOST,
      origin: `http://${HOST}`,
      'sec-fetch-site': 'same-origin',
      'content-type': 'application/x-www-form-urlencoded',
      'content-length': String(Buffer.byteLength(body)),
    },
    body,
  });
  t.equal(own.status, 303, 'from its own page: the account', { body: own.text.slice(-600) });
});
