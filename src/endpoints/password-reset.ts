/**
 * Resetting a forgotten password by mail, in the style of the invitation pages (join.ts).
 * Reference: the reference's password_reset and password_reset_confirm views (zerver/forms.py
 * PasswordResetForm, zerver/views/auth.py).
 *
 *   GET  /accounts/password/reset/         form asking the account's e-mail address
 *   POST /accounts/password/reset/         mails the address (src/mutations/password-reset.ts);
 *                                          the answer is the same page for every address
 *   GET  /accounts/password/reset/<key>/   the link in the mail: form for the new password
 *   POST (same path)                       sets it (the link then stops working), and points
 *                                          to the web app at `/` to log in
 *
 * Asking never reveals whether an address has an account: the page is the same whatever the
 * address, and a rate limit per address (`password_reset_by_email`) silently sends no more mail
 * once reached (unauthenticated requests are limited by address as well: `api_by_ip`). Without
 * SMTP_URL the page says the server sends no mail and an administrator can set a password
 * (`npm run manage -- reset-password`).
 */
import { z } from 'zod';
import { nowSeconds } from '../config.js';
import { endpoint, type HandlerCtx } from '../http/endpoint.js';
import type { RawBody } from '../http/respond.js';
import { isValidEmail } from '../lib/email-validation.js';
import { JsonableError } from '../lib/errors.js';
import { escapeHtml } from '../lib/html.js';
import { generateConfirmationKey, isConfirmationKey } from '../lib/invitations.js';
import { passwordResetPath } from '../lib/mail.js';
import { ownNulRule } from '../lib/params.js';
import { hashPassword, MIN_PASSWORD_LENGTH } from '../lib/password.js';
import { checkPasswordStrength } from '../lib/user-rules.js';
import { realmUrl } from '../lib/urls.js';
import { log } from '../observability/log.js';
import { usablePasswordReset } from '../queries/password-resets.js';
import { htmlPage } from './html-page.js';

const TITLE = 'Reset your password';

function askPage(ctx: HandlerCtx, email: string, error: string | null, status = 200): RawBody {
  const name = ctx.realm ? ctx.realm.view.row.name : 'this server';
  return htmlPage(
    TITLE,
    `<p>Enter the email address of your account in ${escapeHtml(name)}. We will mail you a link to choose a new password.</p>
${error === null ? '' : `<p class="error" role="alert">${escapeHtml(error)}</p>`}
<form method="post" action="/accounts/password/reset/">
<label>Email<input type="email" name="email" required autocomplete="email" value="${escapeHtml(email)}"></label>
<button type="submit">Send the link</button>
</form>`,
    status,
  );
}

function noRealmPage(): RawBody {
  return htmlPage(TITLE, '<p class="error">There is no organization at this address.</p>', 404);
}

/** GET /accounts/password/reset/ — the form asking the address. */
function showAskForm(ctx: HandlerCtx): RawBody {
  if (!ctx.realm) return noRealmPage();
  return askPage(ctx, '', null);
}

/** POST /accounts/password/reset/ — the same answer for every address. */
async function askReset(ctx: HandlerCtx, p: { email?: string | undefined }): Promise<RawBody> {
  const realm = ctx.realm;
  if (!realm) return noRealmPage();
  const email = (p.email ?? '').trim();
  if (!isValidEmail(email)) return askPage(ctx, email, 'Enter a valid email address.', 400);
  if (ctx.server.mailer === null) {
    return htmlPage(
      TITLE,
      `<p>This server does not send email, so it cannot mail you a link. An administrator of ${escapeHtml(realm.view.row.name)} can set a new password for your account.</p>`,
    );
  }
  const limits = ctx.server.limits;
  if (limits === null || limits.passwordResetAllowed(realm.id, email)) {
    await realm.ask('user.password_reset.request', {
      email,
      confirmation_key: generateConfirmationKey(),
    });
  } else {
    log.info({ realmId: realm.id }, 'password reset not mailed: too many for one address');
  }
  return htmlPage(
    'Check your email',
    `<p>If ${escapeHtml(email)} is the address of an account in ${escapeHtml(realm.view.row.name)}, a link to choose a new password is on its way to it. The link works for a day.</p>
<p>No mail after a few minutes? Check your spam folder, or <a href="/accounts/password/reset/">try again</a>.</p>`,
  );
}

function linkErrorPage(err: JsonableError): RawBody {
  return htmlPage(
    TITLE,
    `<p class="error">${escapeHtml(err.message)}</p>
<p><a href="/accounts/password/reset/">Ask for a new link</a></p>`,
    404,
  );
}

function newPasswordPage(
  ctx: HandlerCtx,
  key: string,
  email: string,
  error: string | null,
  status = 200,
): RawBody {
  return htmlPage(
    'Choose a new password',
    `<p>Account: <strong>${escapeHtml(email)}</strong> in ${escapeHtml(ctx.realm!.view.row.name)}.</p>
${error === null ? '' : `<p class="error" role="alert">${escapeHtml(error)}</p>`}
<form method="post" action="${escapeHtml(passwordResetPath(key))}">
<label>New password<input type="password" name="new_password" required minlength="${MIN_PASSWORD_LENGTH}" autocomplete="new-password"></label>
<label>New password again<input type="password" name="new_password_confirm" required minlength="${MIN_PASSWORD_LENGTH}" autocomplete="new-password"></label>
<button type="submit">Set the password</button>
</form>`,
    status,
  );
}

/** The reset link's account, as committed, or the page to answer. */
function lookup(ctx: HandlerCtx, key: string): { email: string } | RawBody {
  if (!ctx.realm) return noRealmPage();
  if (!isConfirmationKey(key)) return linkErrorPage(new JsonableError(notFound()));
  try {
    const { user } = usablePasswordReset(
      ctx.server.store,
      ctx.realm.id,
      key,
      nowSeconds(ctx.server.config),
    );
    return { email: user.delivery_email };
  } catch (err) {
    if (err instanceof JsonableError) return linkErrorPage(err);
    throw err;
  }
}

function notFound(): string {
  return "Whoops. We couldn't find your confirmation link in the system.";
}

// Browsers' forms: a NUL is left to their fields' own rules (the link's lookup, the address's
// check); passwords are only hashed.
const linkParams = ownNulRule(
  z.object({
    key: z.string(),
    new_password: z.string().optional(),
    new_password_confirm: z.string().optional(),
  }),
);

function showNewPasswordForm(ctx: HandlerCtx, p: z.output<typeof linkParams>): RawBody {
  const found = lookup(ctx, p.key);
  if (!('email' in found)) return found;
  return newPasswordPage(ctx, p.key, found.email, null);
}

async function setNewPassword(ctx: HandlerCtx, p: z.output<typeof linkParams>): Promise<RawBody> {
  const found = lookup(ctx, p.key);
  if (!('email' in found)) return found;
  const realm = ctx.realm!;
  const password = p.new_password ?? '';
  try {
    if (password !== (p.new_password_confirm ?? ''))
      throw new JsonableError("The two password fields didn't match.");
    checkPasswordStrength(password);
    const hash = await hashPassword(password, ctx.server.config.scryptN);
    await realm.ask('user.password_reset.complete', {
      confirmation_key: p.key,
      password_hash: hash,
    });
  } catch (err) {
    if (err instanceof JsonableError && err.httpStatus === 404) return linkErrorPage(err);
    if (err instanceof JsonableError)
      return newPasswordPage(ctx, p.key, found.email, err.message, 400);
    throw err;
  }
  const url = realmUrl(ctx.server.config, realm.view.row.string_id);
  return htmlPage(
    'Password changed',
    `<p>The password of <strong>${escapeHtml(found.email)}</strong> is changed.</p>
<p><a href="/">Log in to ${escapeHtml(realm.view.row.name)}</a> (${escapeHtml(url)}/) with it.</p>`,
  );
}

const askParams = ownNulRule(z.object({ email: z.string().optional() }));

/** GET /accounts/password/reset/ */
export const passwordResetForm = endpoint({
  method: 'GET',
  path: '/accounts/password/reset/',
  auth: 'none',
  params: askParams,
  handle: (ctx) => showAskForm(ctx),
});
/** POST /accounts/password/reset/ */
export const passwordResetAsk = endpoint({
  method: 'POST',
  path: '/accounts/password/reset/',
  auth: 'none',
  params: askParams,
  handle: askReset,
});
/** GET /accounts/password/reset/{key}/ */
export const passwordResetLink = endpoint({
  method: 'GET',
  path: '/accounts/password/reset/:key/',
  auth: 'none',
  params: linkParams,
  handle: showNewPasswordForm,
});
/** POST /accounts/password/reset/{key}/ */
export const passwordResetSet = endpoint({
  method: 'POST',
  path: '/accounts/password/reset/:key/',
  auth: 'none',
  params: linkParams,
  handle: setNewPassword,
});
// The same pages without the trailing slash.
export const passwordResetFormNoSlash = endpoint({
  method: 'GET',
  path: '/accounts/password/reset',
  auth: 'none',
  params: askParams,
  handle: (ctx) => showAskForm(ctx),
});
export const passwordResetAskNoSlash = endpoint({
  method: 'POST',
  path: '/accounts/password/reset',
  auth: 'none',
  params: askParams,
  handle: askReset,
});
export const passwordResetLinkNoSlash = endpoint({
  method: 'GET',
  path: '/accounts/password/reset/:key',
  auth: 'none',
  params: linkParams,
  handle: showNewPasswordForm,
});
export const passwordResetSetNoSlash = endpoint({
  method: 'POST',
  path: '/accounts/password/reset/:key',
  auth: 'none',
  params: linkParams,
  handle: setNewPassword,
});
