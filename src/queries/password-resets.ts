/** Password reset links: whether one still works (src/mutations/password-reset.ts uses it too). */
import { ConfirmationLinkError } from '../lib/errors.js';
import { PASSWORD_RESET_VALIDITY_SECONDS } from '../lib/mail.js';
import { PasswordResetStatus, type PasswordResetRow } from '../storage/mail.js';
import type { ReadStore } from '../storage/store.js';
import type { UserRow } from '../storage/users.js';

/** The reset link's request and account, if the link works at `now` in realm `realmId`. */
export function usablePasswordReset(
  store: ReadStore,
  realmId: number,
  key: string,
  now: number,
): { row: PasswordResetRow; user: UserRow } {
  const row = store.mail.passwordResetByKey(key);
  if (!row || row.realm_id !== realmId) throw new ConfirmationLinkError(false);
  const user = store.users.byId(row.user_id);
  if (
    row.status !== PasswordResetStatus.PENDING ||
    now - row.created_at > PASSWORD_RESET_VALIDITY_SECONDS ||
    !user ||
    !user.is_active
  ) {
    throw new ConfirmationLinkError(true);
  }
  return { row, user };
}
