/**
 * Outgoing mail against a real SMTP server on loopback (smtp-server): the outbox and its sender
 * (src/mail/sender.ts) — delivered mail leaves the outbox; an SMTP server that is down or answers
 * "try later" leaves it there, and it goes out once the server is back and the back-off has
 * passed; a refusal for good or too many failures drop it with a log line; the outbox is bounded;
 * /metrics shows it — and what the mail is for: invitations and their resending, the welcome mail,
 * the deactivation notice an administrator asks for,
 * password resets (never revealing whether an address has an account, rate-limited), the
 * address-change mails (test/api/settings.test.ts). Without SMTP_URL nothing is written to the
 * outbox and the pages say so.
 */
import t, { type Test } from 'tap';
import {
  assertError,
  assertSuccess,
  formEncode,
  rawRequest,
  type ApiResponse,
} from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';
import { captureLog } from '../helpers/log.js';
import { manage } from '../helpers/manage.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { linkIn, TestSmtp, type ReceivedMail } from '../helpers/smtp.js';
import { DEFAULT_MAIL_LIMITS, DEFAULT_RATE_LIMITS } from '../../src/config.js';

const ORIGIN = 'http://testserver.local';

async function mailServer(
  t: Test,
  opts: Parameters<typeof startServer>[1] = {},
): Promise<TestServer & { smtp: TestSmtp; flush: () => Promise<void> }> {
  const smtp = await TestSmtp.start(t);
  const ts = await startServer(t, { smtpUrl: smtp.url, ...opts });
  const flush = () => ts.server.context.mailer!.runDue();
  // The fixture's accounts got their welcome mail; the tests look at what comes after.
  await flush();
  smtp.mails.length = 0;
  return { ...ts, smtp, flush };
}

function get(ts: TestServer, path: string): Promise<ApiResponse> {
  return rawRequest(ts.url, { method: 'GET', path, headers: { host: 'testserver.local' } });
}

function post(ts: TestServer, path: string, form: Record<string, string>): Promise<ApiResponse> {
  const body = formEncode(form);
  return rawRequest(ts.url, {
    method: 'POST',
    path,
    headers: {
      host: 'testserver.local',
      'content-type': 'application/x-www-form-urlencoded',
      'content-length': String(Buffer.byteLength(body)),
    },
    body,
  });
}

function assertPage(t: Test, res: ApiResponse, status: number, text: string): void {
  t.equal(res.status, status, `HTTP ${status}`, { body: res.text.slice(0, 400) });
  t.match(res.headers['content-type'], /^text\/html; charset=utf-8/);
  t.equal(res.headers['cache-control'], 'no-store');
  t.ok(res.text.includes(text), `page says: ${text}`, { page: res.text.slice(0, 600) });
}

function outbox(ts: TestServer) {
  return ts.server.store.mail.list(100);
}

/** Both bodies of a mail carry `text` (the HTML one escaped as HTML). */
function assertBodies(t: Test, mail: ReceivedMail, text: string): void {
  t.ok(mail.text.includes(text), `text body has ${text}`, { text: mail.text });
  t.ok(mail.html.includes(text.replace(/&/g, '&amp;')), `HTML body has ${text}`, {
    html: mail.html.slice(0, 800),
  });
}

t.test('an invitation is mailed, with a link that opens the account form', async (t) => {
  const ts = await mailServer(t);
  const { api, smtp, flush } = ts;
  assertSuccess(
    t,
    await api.post('iago', 'invites', {
      invitee_emails: 'ann@example.org, bob@example.org',
      stream_ids: [],
      invite_expires_in_minutes: 2 * 24 * 60,
    }),
  );
  await flush();
  t.equal(smtp.mails.length, 2, 'one mail per address');
  const [mail] = smtp.to('ann@example.org');
  t.ok(mail, 'ann got hers');
  t.equal(mail!.subject, 'Iago invited you to join Zulip Dev');
  t.equal(mail!.from, 'noreply@testserver.local');
  assertBodies(t, mail!, 'Iago (iago@zulip.com) invited you to join Zulip Dev');
  assertBodies(t, mail!, 'The link works for 2 days.');
  const link = linkIn(mail!, `${ORIGIN}/accounts/do_confirm/`);
  t.ok(link, 'the mail carries the invitation link');
  t.ok(mail!.html.includes(`href="${link}"`), 'the HTML body links it');
  const invites = assertSuccess(t, await api.get('iago', 'invites')).invites as { id: number }[];
  t.equal(invites.length, 2, 'both invitations are stored');
  t.same(outbox(ts), [], 'the outbox is empty once the SMTP server took them');

  const form = await get(ts, new URL(link!).pathname);
  assertPage(t, form, 200, 'You have been invited to join Zulip Dev');

  // Accepting creates the account, and its welcome mail goes to the new address.
  const done = await post(ts, new URL(link!).pathname, {
    full_name: 'Ann Example',
    password: 'a-good-password',
  });
  assertPage(t, done, 303, 'Welcome to Zulip Dev!'); // on into the app, logged in
  await flush();
  const welcome = smtp.to('ann@example.org')[1];
  t.equal(welcome?.subject, 'Welcome to Zulip Dev');
  assertBodies(t, welcome!, 'Your account ann@example.org in Zulip Dev is ready.');
  t.equal(linkIn(welcome!, ORIGIN), `${ORIGIN}/`, 'it links the web app');
});

t.test('a deactivation is mailed to the person when the administrator asks', async (t) => {
  const ts = await mailServer(t);
  const { api, smtp, flush, fx } = ts;
  const hamlet = fx.users.hamlet!.id;
  const othello = fx.users.othello!.id;
  const cordelia = fx.users.cordelia!.id;

  // With a comment: the mail says so and quotes it.
  assertSuccess(
    t,
    await api.delete('iago', `users/${hamlet}`, {
      deactivation_notification_comment: 'Thanks for everything.\nSee you around!',
    }),
  );
  await flush();
  const [mail, ...more] = smtp.to('hamlet@zulip.com');
  t.equal(more.length, 0, 'one mail');
  t.equal(mail?.subject, 'Your account in Zulip Dev has been deactivated');
  assertBodies(
    t,
    mail!,
    'Your account in Zulip Dev (http://testserver.local) has been deactivated',
  );
  t.match(mail!.text, /They wrote:\n\n> Thanks for everything\.\n> See you around!/, 'quoted');
  t.ok(mail!.html.includes('See you around!'), 'in the HTML body too');

  // An empty comment: the notice alone. None asked: no mail.
  assertSuccess(
    t,
    await api.delete('iago', `users/${othello}`, { deactivation_notification_comment: '' }),
  );
  assertSuccess(t, await api.delete('iago', `users/${cordelia}`));
  await flush();
  const [notice] = smtp.to('othello@zulip.com');
  t.ok(notice, 'an empty comment still asks for the mail');
  t.notOk(notice!.text.includes('They wrote'), 'with no quote');
  t.same(smtp.to('cordelia@zulip.com'), [], 'not asked: no mail');

  // Too long: refused, nothing deactivated.
  const prospero = fx.users.prospero!.id;
  assertError(
    t,
    await api.delete('iago', `users/${prospero}`, {
      deactivation_notification_comment: 'x'.repeat(2001),
    }),
    'deactivation_notification_comment is too long (limit: 2000 characters)',
  );
  const still = assertSuccess(t, await api.get('iago', `users/${prospero}`)).user as {
    is_active: boolean;
  };
  t.ok(still.is_active, 'still active');

  // A bot has no one to read its mail.
  const before = smtp.mails.length;
  const bot = assertSuccess(
    t,
    await api.post('shiva', 'bots', { full_name: 'Mail Bot', short_name: 'mailer' }),
  );
  assertSuccess(
    t,
    await api.delete('iago', `users/${bot.user_id as number}`, {
      deactivation_notification_comment: 'Bye, bot.',
    }),
  );
  await flush();
  t.equal(smtp.mails.length, before, 'no mail for a bot');
});

t.test('resending an invitation mails it again, once per request', async (t) => {
  const ts = await mailServer(t);
  const { api, smtp, flush } = ts;
  assertSuccess(
    t,
    await api.post('hamlet', 'invites', { invitee_emails: 'cleo@example.org', stream_ids: [] }),
  );
  await flush();
  const [invite] = assertSuccess(t, await api.get('hamlet', 'invites')).invites as {
    id: number;
    invited: number;
  }[];
  assertSuccess(t, await api.post('hamlet', `invites/${invite!.id}/resend`));
  await flush();
  const mails = smtp.to('cleo@example.org');
  t.equal(mails.length, 2, 'the invitation went twice');
  t.equal(
    linkIn(mails[0]!, `${ORIGIN}/accounts/do_confirm/`),
    linkIn(mails[1]!, `${ORIGIN}/accounts/do_confirm/`),
    'with the same link',
  );
  // The same access as revoking: others' invitations are an administrator's to resend.
  assertError(
    t,
    await api.post('othello', `invites/${invite!.id}/resend`),
    'Must be an organization administrator',
    { code: 'UNAUTHORIZED_PRINCIPAL' },
  );
  assertSuccess(t, await api.post('iago', `invites/${invite!.id}/resend`));
  assertError(t, await api.post('iago', 'invites/999999/resend'), 'No such invitation');
  // A revoked invitation is gone.
  assertSuccess(t, await api.delete('hamlet', `invites/${invite!.id}`));
  assertError(t, await api.post('hamlet', `invites/${invite!.id}/resend`), 'No such invitation');
  await flush();
  t.equal(smtp.to('cleo@example.org').length, 3);
});

t.test('password reset: a link by mail, a form, a new password, the web app', async (t) => {
  const ts = await mailServer(t);
  const { smtp, flush, url, fx } = ts;
  const ask = await get(ts, '/accounts/password/reset/');
  assertPage(t, ask, 200, 'Enter the email address of your account in Zulip Dev');
  t.match(ask.headers['content-security-policy'], /default-src 'none'/);

  const page = await post(ts, '/accounts/password/reset/', { email: 'Hamlet@zulip.com' });
  assertPage(t, page, 200, 'a link to choose a new password is on its way');
  await flush();
  const [mail] = smtp.to('hamlet@zulip.com');
  t.equal(mail?.subject, 'Reset your password for Zulip Dev');
  const link = linkIn(mail!, `${ORIGIN}/accounts/password/reset/`);
  t.match(link, /\/accounts\/password\/reset\/[a-z2-7]{24}\/$/);
  const path = new URL(link!).pathname;

  assertPage(t, await get(ts, path), 200, 'Account: <strong>hamlet@zulip.com</strong>');
  assertPage(
    t,
    await post(ts, path, { new_password: 'new-secret-1', new_password_confirm: 'other-one' }),
    400,
    'The two password fields didn&#x27;t match.',
  );
  assertPage(
    t,
    await post(ts, path, { new_password: 'short', new_password_confirm: 'short' }),
    400,
    'The password is too weak.',
  );
  const done = await post(ts, path, {
    new_password: 'new-secret-1',
    new_password_confirm: 'new-secret-1',
  });
  assertPage(t, done, 200, 'The password of <strong>hamlet@zulip.com</strong> is changed.');
  t.ok(done.text.includes('<a href="/">Log in to Zulip Dev</a>'), 'it ends in the web app');

  const login = (password: string) => {
    const body = formEncode({ username: 'hamlet@zulip.com', password });
    return rawRequest(url, {
      method: 'POST',
      path: '/api/v1/fetch_api_key',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': String(Buffer.byteLength(body)),
      },
      body,
    });
  };
  t.equal((await login('new-secret-1')).status, 200, 'the new password logs in');
  t.equal((await login(fx.users.hamlet!.password)).status, 401, 'the old one no longer does');

  // The link works once.
  assertPage(t, await get(ts, path), 404, 'The confirmation link has expired or been deactivated.');
  assertPage(
    t,
    await post(ts, path, { new_password: 'x-secret-22', new_password_confirm: 'x-secret-22' }),
    404,
    'expired or been deactivated',
  );
  assertPage(
    t,
    await get(ts, '/accounts/password/reset/aaaaaaaaaaaaaaaaaaaaaaaa/'),
    404,
    'Whoops. We couldn&#x27;t find your confirmation link in the system.',
  );
});

t.test('password reset reveals nothing about the address', async (t) => {
  const clock = new TestClock();
  const ts = await mailServer(t, { clock: clock.now });
  const { api, smtp, flush, fx } = ts;
  assertSuccess(t, await api.delete('iago', `users/${fx.users.prospero!.id}`));
  const pages: string[] = [];
  for (const email of ['othello@zulip.com', 'nobody@zulip.com', 'prospero@zulip.com']) {
    const res = await post(ts, '/accounts/password/reset/', { email });
    t.equal(res.status, 200);
    pages.push(res.text.replace(email, 'ADDRESS'));
  }
  t.equal(new Set(pages).size, 1, 'the same page for an account, none and a deactivated one');
  await flush();
  t.ok(linkIn(smtp.to('othello@zulip.com')[0]!, `${ORIGIN}/accounts/password/reset/`));
  const none = smtp.to('nobody@zulip.com')[0]!;
  assertBodies(t, none, 'There is no account with the address nobody@zulip.com in Zulip Dev.');
  t.equal(linkIn(none, `${ORIGIN}/accounts/password/reset/`), null, 'and no link');
  assertBodies(t, smtp.to('prospero@zulip.com')[0]!, 'has been deactivated');

  // A newer link replaces the older one; a link expires after a day.
  const resetLink = (m: ReceivedMail) => linkIn(m, `${ORIGIN}/accounts/password/reset/`)!;
  const first = resetLink(smtp.to('othello@zulip.com')[0]!);
  await post(ts, '/accounts/password/reset/', { email: 'othello@zulip.com' });
  await flush();
  const second = resetLink(smtp.to('othello@zulip.com')[1]!);
  t.equal((await get(ts, new URL(first).pathname)).status, 404, 'the first link is revoked');
  t.equal((await get(ts, new URL(second).pathname)).status, 200);
  clock.advance(24 * 3600 + 1);
  t.equal((await get(ts, new URL(second).pathname)).status, 404, 'and expires');

  // A malformed address is the one thing the page tells.
  const bad = await post(ts, '/accounts/password/reset/', { email: 'not-an-address' });
  assertPage(t, bad, 400, 'Enter a valid email address.');
});

t.test('password reset mail is rate-limited per address, silently', async (t) => {
  const ts = await mailServer(t, {
    rateLimits: {
      ...DEFAULT_RATE_LIMITS,
      api_by_ip: [],
      password_reset_by_email: [[3600, 2]],
    },
  });
  const { smtp, flush } = ts;
  const pages = [];
  for (let i = 0; i < 4; i++) {
    pages.push((await post(ts, '/accounts/password/reset/', { email: 'cordelia@zulip.com' })).text);
  }
  await post(ts, '/accounts/password/reset/', { email: 'othello@zulip.com' });
  await flush();
  t.equal(new Set(pages).size, 1, 'every answer is the same page');
  t.equal(smtp.to('cordelia@zulip.com').length, 2, 'two mails, then none');
  t.equal(smtp.to('othello@zulip.com').length, 1, 'another address has its own budget');
});

t.test(
  'a failing SMTP server: the mail waits in the outbox and goes when it is back',
  async (t) => {
    const clock = new TestClock();
    const ts = await mailServer(t, { clock: clock.now });
    const { api, smtp, flush } = ts;
    const logs = captureLog(t);
    await smtp.stop();
    assertSuccess(
      t,
      await api.post('iago', 'invites', { invitee_emails: 'dana@example.org', stream_ids: [] }),
    );
    await flush();
    let [row] = outbox(ts);
    t.match(row, { kind: 'invitation', recipient: 'dana@example.org', attempts: 1 });
    t.equal(row!.next_attempt_at, clock.seconds + DEFAULT_MAIL_LIMITS.retryBaseSeconds);
    t.match(row!.last_error, /ECONNREFUSED|connect/);
    t.ok(
      logs.some((l) => l.msg === 'mail not delivered; will try again' && l.mailId === row!.id),
      'the failure is logged',
    );

    // Not due yet: nothing is tried; the server back, still nothing until the back-off passes.
    await smtp.listen();
    await flush();
    t.equal(outbox(ts)[0]!.attempts, 1, 'not tried before its time');
    t.equal(smtp.mails.length, 0);

    // Down again at the second attempt: the wait doubles.
    await smtp.stop();
    clock.advance(DEFAULT_MAIL_LIMITS.retryBaseSeconds);
    await flush();
    [row] = outbox(ts);
    t.equal(row!.attempts, 2);
    t.equal(row!.next_attempt_at, clock.seconds + 2 * DEFAULT_MAIL_LIMITS.retryBaseSeconds);

    const metrics = await rawRequest(ts.url, { method: 'GET', path: '/metrics' });
    t.match(metrics.text, /^confab_mail_outbox 1$/m, '/metrics shows the waiting mail');
    // The admin tool, through the running server, shows it too.
    const listed = await manage(ts.dataDir, ['outbox']);
    t.equal(listed.status, 0, listed.stderr);
    t.match(listed.json, {
      waiting: 1,
      mail: [
        {
          kind: 'invitation',
          recipient: 'dana@example.org',
          subject: 'Iago invited you to join Zulip Dev',
          attempts: 2,
          last_error: /ECONNREFUSED|connect/,
        },
      ],
    });
    t.notOk('text_body' in (listed.json.mail as object[])[0]!, 'without the bodies');
    // The realm's administrators see it through the API (the web app's outbox view).
    const seen = assertSuccess(t, await api.get('iago', 'mail/outbox'));
    t.match(seen, {
      outgoing_mail_enabled: true,
      count: 1,
      mails: [
        {
          id: row!.id,
          kind: 'invitation',
          recipient: 'dana@example.org',
          subject: 'Iago invited you to join Zulip Dev',
          attempts: 2,
          next_attempt_at: row!.next_attempt_at,
          last_error: /ECONNREFUSED|connect/,
        },
      ],
    });
    t.notOk('text_body' in (seen.mails as object[])[0]!, 'without the bodies');
    assertError(
      t,
      await api.get('hamlet', 'mail/outbox'),
      'Must be an organization administrator',
      { code: 'UNAUTHORIZED_PRINCIPAL' },
    );
    assertError(t, await api.get('iago', 'mail/outbox', { limit: 0 }), 'limit is too small');
    const one = assertSuccess(t, await api.get('iago', 'mail/outbox', { limit: 1 }));
    t.equal((one.mails as unknown[]).length, 1);
    t.match(metrics.text, /^confab_mail_retries_total 2$/m);

    // Back for good: the mail goes out, and the outbox is empty.
    await smtp.listen();
    clock.advance(2 * DEFAULT_MAIL_LIMITS.retryBaseSeconds);
    await flush();
    t.equal(smtp.to('dana@example.org').length, 1, 'delivered once the server returned');
    t.same(outbox(ts), []);
    const after = await rawRequest(ts.url, { method: 'GET', path: '/metrics' });
    t.match(after.text, /^confab_mail_outbox 0$/m);
    t.match(after.text, /^confab_mail_sent_total [1-9]\d*$/m);
  },
);

t.test('"try later" replies are retried; a refusal for good drops the mail', async (t) => {
  const clock = new TestClock();
  const ts = await mailServer(t, {
    clock: clock.now,
    mail: { ...DEFAULT_MAIL_LIMITS, maxAttempts: 3 },
  });
  const { api, smtp, flush } = ts;
  const logs = captureLog(t);

  smtp.refuse = { code: 451, message: 'Greylisted, try again later' };
  assertSuccess(
    t,
    await api.post('iago', 'invites', { invitee_emails: 'eve@example.org', stream_ids: [] }),
  );
  await flush();
  t.match(outbox(ts)[0], { attempts: 1, last_error: /451/ });
  smtp.refuse = null;
  clock.advance(DEFAULT_MAIL_LIMITS.retryBaseSeconds);
  await flush();
  t.equal(smtp.to('eve@example.org').length, 1, 'accepted at the second attempt');

  // 550: no such mailbox. Dropped at once, logged, never tried again.
  smtp.refuse = { code: 550, message: 'No such user here' };
  assertSuccess(
    t,
    await api.post('iago', 'invites', { invitee_emails: 'frank@example.org', stream_ids: [] }),
  );
  await flush();
  t.same(outbox(ts), [], 'dropped');
  const dropped = logs.find((l) => l.msg === 'mail dropped: the SMTP server refused it');
  t.match(dropped, { kind: 'invitation', attempts: 1, error: /550/ });
  t.notOk(JSON.stringify(dropped).includes('accounts/do_confirm'), 'the log has no body');

  // Always "later": dropped after maxAttempts (3 here), with a log line.
  smtp.refuse = { code: 421, message: 'Too busy' };
  assertSuccess(
    t,
    await api.post('iago', 'invites', { invitee_emails: 'gus@example.org', stream_ids: [] }),
  );
  for (let i = 0; i < 3; i++) {
    await flush();
    clock.advance(3600);
  }
  await flush();
  t.same(outbox(ts), [], 'dropped after three attempts');
  t.ok(logs.some((l) => l.msg === 'mail dropped: too many failures' && l.attempts === 3));
  const metrics = await rawRequest(ts.url, { method: 'GET', path: '/metrics' });
  t.match(metrics.text, /^confab_mail_dropped_total 2$/m);
});

t.test('the outbox is bounded: past its size a new mail is dropped with a log line', async (t) => {
  const ts = await mailServer(t, { mail: { ...DEFAULT_MAIL_LIMITS, maxOutbox: 2 } });
  const { api, smtp, flush } = ts;
  const logs = captureLog(t);
  await smtp.stop();
  assertSuccess(
    t,
    await api.post('iago', 'invites', {
      invitee_emails: 'h1@example.org, h2@example.org, h3@example.org',
      stream_ids: [],
    }),
  );
  await flush();
  t.equal(outbox(ts).length, 2, 'two kept');
  t.ok(logs.some((l) => l.msg === 'mail dropped: the outbox is full'));
  const invites = assertSuccess(t, await api.get('iago', 'invites')).invites as unknown[];
  t.equal(invites.length, 3, 'the invitations themselves are all stored');
});

t.test('mail left in the outbox by a stopped server goes out at the next start', async (t) => {
  const smtp = await TestSmtp.start(t);
  await smtp.stop();
  const first = await startServer(t, { smtpUrl: smtp.url });
  await first.api.post('iago', 'invites', { invitee_emails: 'ivy@example.org', stream_ids: [] });
  await first.server.context.mailer!.runDue();
  t.equal(first.server.store.mail.count() >= 1, true, 'waiting at shutdown');
  await first.server.close();

  await smtp.listen();
  const { createServer } = await import('../../src/server.js');
  const { TEST_SERVER_OPTIONS } = await import('../helpers/server.js');
  // The earlier failure set a back-off: a clock past it sends the mail at start.
  const later = Date.now() + 3600_000;
  const again = await createServer({
    ...TEST_SERVER_OPTIONS,
    dataDir: first.dataDir,
    smtpUrl: smtp.url,
    clock: () => later,
  });
  t.teardown(() => again.close());
  await again.context.mailer!.runDue();
  t.equal(smtp.to('ivy@example.org').length, 1, 'sent after the restart');
  t.equal(again.store.mail.count(), 0);
});

t.test('without SMTP_URL: no outbox, and the pages say so', async (t) => {
  const ts = await startServer(t);
  t.equal(ts.server.context.mailer, null);
  const settings = assertSuccess(t, await ts.api.get(null, 'server_settings'));
  t.equal(settings.outgoing_mail_enabled, false);
  assertSuccess(
    t,
    await ts.api.post('iago', 'invites', { invitee_emails: 'jo@example.org', stream_ids: [] }),
  );
  t.equal(ts.server.store.mail.count(), 0, 'nothing written to the outbox');
  const page = await post(ts, '/accounts/password/reset/', { email: 'hamlet@zulip.com' });
  assertPage(t, page, 200, 'This server does not send email');
  const [invite] = assertSuccess(t, await ts.api.get('iago', 'invites')).invites as {
    id: number;
  }[];
  assertError(
    t,
    await ts.api.post('iago', `invites/${invite!.id}/resend`),
    'This server does not send email, so the invitation cannot be resent. Share its link with the invitee instead.',
  );

  const smtp = await TestSmtp.start(t);
  const withMail = await startServer(t, { smtpUrl: smtp.url });
  t.equal(
    assertSuccess(t, await withMail.api.get(null, 'server_settings')).outgoing_mail_enabled,
    true,
  );
});
