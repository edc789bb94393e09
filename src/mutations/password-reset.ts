/**
 * Password resets by mail. Reference: the reference's PasswordResetForm (zerver/forms.py) and its
 * password_reset / password_reset_confirm views. Asking never reveals whether an address has an
 * account: the page answers the same for every address, and the mail goes to the address itself —
 * a reset link when it has an active account, otherwise a note saying there is none (or that it
 * was deactivated). A link works once, for a day; a newer one, or the new password, ends the others.
 */
import { passwordResetMail, passwordResetNoAccountMail, passwordResetPath } from '../lib/mail.js';
import { usablePasswordReset } from '../queries/password-resets.js';
import { PasswordResetStatus, type PasswordResetRow } from '../storage/mail.js';
import type { UserRow } from '../storage/users.js';
import type { MutationContext } from './context.js';
import { enqueueMail, mailRealm } from './mail.js';
import { endLoginSessions } from './sessions.js';

export type PasswordResetRequest = { email: string; confirmation_key: string };

/**
 * POST /accounts/password/reset/: mails the address (when the server sends mail). Returns nothing
 * that depends on the address. Accounts without a password login (the realm turned password
 * login off) get the same note as no account: there is no password to reset.
 */
export function doRequestPasswordReset(
  ctx: MutationContext,
  cmd: PasswordResetRequest,
): Record<string, never> {
  if (!ctx.mail) return {};
  const { store, realm } = ctx;
  const where = mailRealm(ctx);
  const user = store.users.byDeliveryEmail(realm.id, cmd.email);
  if (user && user.is_active && !user.is_bot && realm.settings.password_auth_enabled) {
    store.mail.markPendingPasswordResetsRevoked(user.id);
    store.mail.insertPasswordReset({
      realm_id: realm.id,
      user_id: user.id,
      confirmation_key: cmd.confirmation_key,
      created_at: ctx.now,
    });
    enqueueMail(
      ctx,
      'password_reset',
      user.delivery_email,
      passwordResetMail({
        realm: where,
        email: user.delivery_email,
        link: where.url + passwordResetPath(cmd.confirmation_key),
      }),
    );
  } else if (!user || !user.is_bot) {
    enqueueMail(
      ctx,
      'password_reset',
      cmd.email,
      passwordResetNoAccountMail({
        realm: where,
        email: cmd.email,
        deactivated: user !== undefined && !user.is_active,
      }),
    );
  }
  return {};
}

export type CompletePasswordReset = { confirmation_key: string; password_hash: string };

export function checkCompletePasswordReset(
  ctx: MutationContext,
  cmd: CompletePasswordReset,
): { row: PasswordResetRow; user: UserRow; hash: string } {
  return {
    ...usablePasswordReset(ctx.store, ctx.realm.id, cmd.confirmation_key, ctx.now),
    hash: cmd.password_hash,
  };
}

/** Sets the new password; this link and every other pending one stop working. */
export function doCompletePasswordReset(
  ctx: MutationContext,
  { row, user, hash }: { row: PasswordResetRow; user: UserRow; hash: string },
): { email: string } {
  ctx.store.users.setPasswordHash(user.id, hash);
  // Browsers logged in with the old password are logged out (as a password change does).
  endLoginSessions(ctx, [user.id]);
  ctx.store.mail.setPasswordResetStatus(row.id, PasswordResetStatus.USED);
  ctx.store.mail.markPendingPasswordResetsRevoked(user.id);
  ctx.afterCommit(() => ctx.realm.reloadUser(user.id));
  return { email: user.delivery_email };
}
