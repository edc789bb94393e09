/**
 * Whether an address may become a user's e-mail address in a realm, with the reference's messages
 * (lib/email_validation.py validate_email_is_valid). Whether another account already has it is
 * the caller's question (it needs the realm's users).
 *
 * Realm domains (the list `emails_restricted_to_domains` restricts to) are not configurable on
 * this server yet, so a realm that restricts addresses to its domains accepts none, as the
 * reference does with an empty list. The disposable-address list is a short list of well-known
 * throwaway providers, not the reference's full third-party list.
 */

const EMAIL_RE = /^[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+\.[^\s@<>()[\],;:"]+$/;

export function isValidEmail(email: string): boolean {
  return email.length <= 254 && EMAIL_RE.test(email);
}

export const DISPOSABLE_EMAIL_DOMAINS: ReadonlySet<string> = new Set([
  '10minutemail.com',
  'burnermail.io',
  'discard.email',
  'dispostable.com',
  'emailondeck.com',
  'fakeinbox.com',
  'getnada.com',
  'guerrillamail.com',
  'guerrillamail.net',
  'maildrop.cc',
  'mailinator.com',
  'mailnesia.com',
  'mintemail.com',
  'mohmal.com',
  'sharklasers.com',
  'spamgourmet.com',
  'temp-mail.org',
  'tempmail.net',
  'throwawaymail.com',
  'trashmail.com',
  'yopmail.com',
]);

export function emailDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/** The reason an address is refused, or null when it is acceptable in the realm. */
export function emailInvalidReason(
  email: string,
  realm: {
    emails_restricted_to_domains: boolean;
    disallow_disposable_email_addresses: boolean;
    /** Domains the realm restricts addresses to (none can be configured yet). */
    domains?: readonly { domain: string; allow_subdomains: boolean }[];
  },
): string | null {
  if (!isValidEmail(email)) return 'Invalid address.';
  const domain = emailDomain(email);
  if (realm.emails_restricted_to_domains) {
    const local = email.slice(0, email.lastIndexOf('@'));
    if (local.includes('+')) return 'Email addresses containing + are not allowed.';
    const domains = realm.domains ?? [];
    const allowed = domains.some(
      (d) =>
        d.domain === domain ||
        (d.allow_subdomains && domain.endsWith(`.${d.domain.toLowerCase()}`)),
    );
    return allowed ? null : 'Outside your domain.';
  }
  if (realm.disallow_disposable_email_addresses && DISPOSABLE_EMAIL_DOMAINS.has(domain))
    return 'Please use your real email address.';
  return null;
}
