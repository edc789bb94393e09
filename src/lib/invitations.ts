/**
 * Pure rules of invitations: the invitee list of POST /invites, confirmation keys and link paths,
 * who may invite to which role, and the reference's INVITATION_FAILED error. Reference:
 * views/invite.py (get_invitee_emails_set, check_role_based_permissions), confirmation/models.py
 * (generate_key, the `join` and `do_confirm` URLs), lib/exceptions.py (InvitationError).
 */
import crypto from 'node:crypto';
import {
  JsonableError,
  OrganizationAdministratorRequiredError,
  OrganizationOwnerRequiredError,
} from './errors.js';
import { Role } from './roles.js';

/** INVITATION_LINK_VALIDITY_DAYS (10) in minutes: the default lifetime of an invitation. */
export const INVITATION_LINK_VALIDITY_MINUTES = 14400;
/** Longest welcome_message_custom_text (Realm.MAX_REALM_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH). */
export const MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH = 8000;
/** On realms without invite_required, members this new may not send e-mail invitations. */
export const INVITES_MIN_USER_AGE_DAYS = 3;

/**
 * The addresses in `invitee_emails`: separated by commas or newlines, each possibly written as
 * `Name <address>`, trimmed; duplicates once, in order of first appearance. Empty entries stay
 * (the caller skips them, as the reference does).
 */
export function parseInviteeEmails(raw: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const part of raw.split(/[,\n]/)) {
    const named = /<(.*)>/.exec(part);
    const email = (named ? named[1]! : part).trim();
    if (seen.has(email)) continue;
    seen.add(email);
    out.push(email);
  }
  return out;
}

/** A confirmation key: 24 characters of lower-case base32 (120 random bits), as the reference's. */
export function generateConfirmationKey(): string {
  const bytes = crypto.randomBytes(15);
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

export function isConfirmationKey(s: string): boolean {
  return /^[a-z2-7]{24}$/.test(s);
}

/** The path of an invitation's link: `/join/<key>/` (reusable), `/accounts/do_confirm/<key>/`. */
export function invitationPath(multiuse: boolean, key: string): string {
  return multiuse ? `/join/${key}/` : `/accounts/do_confirm/${key}/`;
}

/**
 * Whether `caller` may create (or, for another user's invitation, revoke) an invitation for
 * `invitedAs`: only to a role with equal or stricter restrictions than their own (the spec's rule;
 * a larger role number is stricter). Inviting an owner needs an owner; any other role above the
 * caller's answers as the reference does for its administrator-only roles.
 */
export function checkInviteRole(invitedAs: number, callerRole: number): void {
  if (invitedAs === Role.OWNER && callerRole !== Role.OWNER)
    throw new OrganizationOwnerRequiredError();
  if (invitedAs < callerRole) throw new OrganizationAdministratorRequiredError();
}

/** One refused address: [email, why, whether it belongs to a deactivated account]. */
export type InvitationFailure = [string, string, boolean];

/** INVITATION_FAILED: which addresses were refused and whether any invitation went out. */
export class InvitationError extends JsonableError {
  constructor(
    msg: string,
    errors: InvitationFailure[],
    opts: { sentInvitations: boolean; dailyLimitReached?: boolean; licenseLimitReached?: boolean },
  ) {
    super(msg, {
      code: 'INVITATION_FAILED',
      extra: {
        errors,
        sent_invitations: opts.sentInvitations,
        license_limit_reached: opts.licenseLimitReached ?? false,
        daily_limit_reached: opts.dailyLimitReached ?? false,
      },
    });
  }
}

/** Why an invitation link cannot be used (the page says which). */
export class InvitationLinkError extends JsonableError {
  constructor(readonly reason: 'not_found' | 'expired') {
    super(
      reason === 'not_found'
        ? 'This invitation link does not exist.'
        : 'This invitation link has expired or has been revoked.',
      { code: 'NOT_FOUND', status: 404 },
    );
  }
}
