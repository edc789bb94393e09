/**
 * Accepting an invitation: the page an invitation link opens. The reference's flow is its web
 * app's registration pages (views/registration.py); here the link serves a minimal HTML form and
 * creating the account is one POST of that form, which ends in the web app, logged in:
 *
 *   GET  /join/<key>/                 reusable link: form asking e-mail, full name, password
 *   GET  /accounts/do_confirm/<key>/  e-mail invitation: the same, the e-mail fixed
 *   POST (same path)                  creates the account (invitation.accept) and a browser
 *                                     session for it: 303 to `/` with the session cookie; or shows
 *                                     the form again with what was wrong. A post from another
 *                                     site is refused (src/http/sessions.ts checkSameOrigin).
 *
 * A link that does not exist, belongs to another realm, expired, was revoked or (e-mail
 * invitations) was already used answers 404 with a page saying so. No credentials are involved:
 * the key in the link is the permission, so responses are never cached and never sent as a
 * referrer.
 */
import { z } from 'zod';
import { endpoint, type HandlerCtx } from '../http/endpoint.js';
import { nowSeconds } from '../config.js';
import { RawBody } from '../http/respond.js';
import { newSessionToken, sessionCookie, sessionKey } from '../http/sessions.js';
import { htmlPage } from './html-page.js';
import { JsonableError } from '../lib/errors.js';
import { escapeHtml } from '../lib/html.js';
import { ownNulRule } from '../lib/params.js';
import { InvitationLinkError, invitationPath, isConfirmationKey } from '../lib/invitations.js';
import { hashPassword, MIN_PASSWORD_LENGTH } from '../lib/password.js';
import { ROLE_NAMES, type Role } from '../lib/roles.js';
import { realmUrl } from '../lib/urls.js';
import { isValidEmail } from '../lib/email-validation.js';
import { checkFullName, checkPasswordStrength, MAX_FULL_NAME_LENGTH } from '../lib/user-rules.js';
import { usableInvitation } from '../queries/invites.js';
import { prepareWelcome } from '../queries/welcome.js';
import type { InvitationRow } from '../storage/invitations.js';

function linkErrorPage(err: InvitationLinkError): RawBody {
  return htmlPage('Invitation link', `<p class="error">${escapeHtml(err.message)}</p>`, 404);
}

const article = (role: string) => (/^[aeiou]/.test(role) ? `an ${role}` : `a ${role}`);

function formPage(
  ctx: HandlerCtx,
  inv: InvitationRow,
  values: { email: string; full_name: string },
  error: string | null,
  status = 200,
): RawBody {
  const view = ctx.realm!.view;
  const name = view.row.name;
  const url = realmUrl(ctx.server.config, view.row.string_id);
  const role = ROLE_NAMES[inv.invited_as as Role] ?? 'member';
  const emailField = inv.multiuse
    ? `<label>Email<input type="email" name="email" required autocomplete="email" value="${escapeHtml(values.email)}"></label>`
    : `<p>Email: <strong>${escapeHtml(inv.email!)}</strong></p>`;
  return htmlPage(
    `Join ${name}`,
    `<p>You have been invited to join ${escapeHtml(name)} (${escapeHtml(url)}) as ${article(role)}.</p>
${error === null ? '' : `<p class="error" role="alert">${escapeHtml(error)}</p>`}
<form method="post" action="${escapeHtml(invitationPath(inv.multiuse === 1, inv.confirmation_key))}">
${emailField}
<label>Full name<input name="full_name" required maxlength="${MAX_FULL_NAME_LENGTH}" autocomplete="name" value="${escapeHtml(values.full_name)}"></label>
<label>Password<input type="password" name="password" required minlength="${MIN_PASSWORD_LENGTH}" autocomplete="new-password"></label>
<button type="submit">Create account</button>
</form>`,
    status,
  );
}

/** The invitation behind the link, as the committed read model has it, or the page to answer. */
function lookup(ctx: HandlerCtx, key: string): InvitationRow | RawBody {
  if (!ctx.realm || !isConfirmationKey(key))
    return linkErrorPage(new InvitationLinkError('not_found'));
  try {
    return usableInvitation(
      { store: ctx.server.store, realm: ctx.realm.view },
      key,
      nowSeconds(ctx.server.config),
    );
  } catch (err) {
    if (err instanceof InvitationLinkError) return linkErrorPage(err);
    throw err;
  }
}

// A browser's form: its fields' own rules answer a NUL on the form (checkFullName, the address's
// check, the link's lookup); the password is only hashed.
const params = ownNulRule(
  z.object({
    key: z.string(),
    email: z.string().optional(),
    full_name: z.string().optional(),
    password: z.string().optional(),
  }),
);

function showForm(ctx: HandlerCtx, p: z.output<typeof params>): RawBody {
  const inv = lookup(ctx, p.key);
  if (inv instanceof RawBody) return inv;
  return formPage(ctx, inv, { email: '', full_name: '' }, null);
}

async function acceptForm(ctx: HandlerCtx, p: z.output<typeof params>): Promise<RawBody> {
  const inv = lookup(ctx, p.key);
  if (inv instanceof RawBody) return inv;
  const realm = ctx.realm!;
  const values = { email: (p.email ?? '').trim(), full_name: p.full_name ?? '' };
  const email = inv.multiuse ? values.email : inv.email!;
  try {
    if (!isValidEmail(email)) throw new JsonableError('Invalid address.');
    const existing = realm.view.userByEmail(email);
    if (existing)
      throw new JsonableError(
        existing.is_active ? 'Already has an account.' : 'Account has been deactivated.',
      );
    const fullName = checkFullName(values.full_name);
    checkPasswordStrength(p.password ?? '');
    const hash = await hashPassword(p.password ?? '', ctx.server.config.scryptN);
    const created = await realm.ask('invitation.accept', {
      confirmation_key: p.key,
      email,
      full_name: fullName,
      password_hash: hash,
      welcome: await prepareWelcome(ctx.server, realm.view, inv.welcome_message_custom_text),
    });
    // Logged in: the new account's first browser session, and on into the app.
    const token = newSessionToken();
    const age = ctx.server.config.sessionAgeSeconds;
    await realm.ask('session.create', {
      user_id: created.user_id,
      token_hash: sessionKey(token),
      lifetime_seconds: age,
    });
    const url = realmUrl(ctx.server.config, realm.view.row.string_id);
    return htmlPage(
      'Account created',
      `<p>Welcome to ${escapeHtml(realm.view.row.name)}! Your account <strong>${escapeHtml(created.email)}</strong> is ready.</p>
<p><a href="/">Open ${escapeHtml(realm.view.row.name)}</a> (${escapeHtml(url)}), where you are logged in. API clients get an API key from <code>POST /api/v1/fetch_api_key</code>.</p>`,
      303,
      { Location: '/', 'Set-Cookie': sessionCookie(ctx.server.config, token, age) },
    );
  } catch (err) {
    if (err instanceof InvitationLinkError) return linkErrorPage(err);
    if (err instanceof JsonableError) return formPage(ctx, inv, values, err.message, 400);
    throw err;
  }
}

function joinDef(method: 'GET' | 'POST', path: string) {
  return {
    method,
    path,
    auth: 'none' as const,
    // A browser's form: posted from another site, refused (no session is needed to post it).
    ...(method === 'POST' ? { sessionAuth: 'only' as const } : {}),
    params,
    handle: method === 'GET' ? showForm : acceptForm,
  };
}

/** GET /join/{key}/ — a reusable invitation link's form; POST creates the account. */
export const joinPage = endpoint(joinDef('GET', '/join/:key/'));
export const joinSubmit = endpoint(joinDef('POST', '/join/:key/'));
/** GET /accounts/do_confirm/{key}/ — an e-mail invitation's form; POST creates the account. */
export const confirmPage = endpoint(joinDef('GET', '/accounts/do_confirm/:key/'));
export const confirmSubmit = endpoint(joinDef('POST', '/accounts/do_confirm/:key/'));

// The same pages without the trailing slash (the reference redirects to the slashed form).
export const joinPageNoSlash = endpoint(joinDef('GET', '/join/:key'));
export const joinSubmitNoSlash = endpoint(joinDef('POST', '/join/:key'));
export const confirmPageNoSlash = endpoint(joinDef('GET', '/accounts/do_confirm/:key'));
export const confirmSubmitNoSlash = endpoint(joinDef('POST', '/accounts/do_confirm/:key'));
