/**
 * The mail the server sends (docs/mail.md): each kind composed here, as plain text and HTML, from
 * what the change that causes it knows. Pure: the realm actor's mutations compose a mail and write
 * it to the outbox in the change's own transaction (src/mutations/mail.ts); src/mail/sender.ts
 * hands it to the SMTP server.
 *
 * The wording is Confab's; what each mail is for, who gets it and which link it carries follow
 * the reference's e-mails (templates/zerver/emails: invitation, confirm_new_email,
 * notify_change_in_email, password_reset, account_registered).
 */
import { escapeHtml } from './html.js';

/** Kinds of mail, as the outbox and /metrics name them. */
export type MailKind =
  | 'invitation'
  | 'email_change'
  | 'email_changed'
  | 'password_reset'
  | 'welcome'
  | 'missed_messages'
  | 'bot_notice'
  | 'deactivation';

/** A composed mail, before it has a recipient. */
export type ComposedMail = { subject: string; text: string; html: string };

/** What a mutation needs to write mail: null in MutationContext when the server sends none. */
export type MailDeps = {
  /** The realm's URL as its users reach it (links in mail start with it). */
  realmUrl: (stringId: string) => string;
  /** Mail the outbox holds at most (ServerConfig.mail.maxOutbox). */
  maxOutbox: number;
  /** Called after a commit that wrote mail: the sender looks at the outbox. */
  wake: () => void;
  /**
   * Whether a client of the user holds an event queue that takes messages (on this server; in a
   * cluster, on this node): missed-message mail goes to users without one, or away.
   */
  hasMessageQueue: (realmId: number, userId: number) => boolean;
  /** Called after a commit that scheduled missed-message mail: its timer looks at the schedule. */
  wakeMissedMessages: () => void;
};

/** How long a password reset link works, in seconds. */
export const PASSWORD_RESET_VALIDITY_SECONDS = 24 * 3600;

/** The path of a password reset link (its form). */
export function passwordResetPath(key: string): string {
  return `/accounts/password/reset/${key}/`;
}

/** One paragraph of a mail: text, or a link shown on a line of its own. */
type Block = string | { href: string; label: string } | { quote: string };

/** The two bodies of a mail, with the realm named at the foot. */
function compose(
  subject: string,
  realm: { name: string; url: string },
  blocks: readonly Block[],
): ComposedMail {
  const text: string[] = [];
  const html: string[] = [];
  for (const b of blocks) {
    if (typeof b === 'string') {
      text.push(b);
      html.push(`<p>${escapeHtml(b)}</p>`);
    } else if ('href' in b) {
      text.push(b.href);
      html.push(
        `<p><a href="${escapeHtml(b.href)}" style="font-weight:bold">${escapeHtml(b.label)}</a><br>` +
          `<span style="color:#666;font-size:90%">${escapeHtml(b.href)}</span></p>`,
      );
    } else {
      text.push(
        b.quote
          .split('\n')
          .map((l) => `> ${l}`)
          .join('\n'),
      );
      html.push(
        `<blockquote style="border-left:3px solid #ccc;margin:0;padding-left:.8em;white-space:pre-wrap">${escapeHtml(b.quote)}</blockquote>`,
      );
    }
  }
  const foot = `${realm.name} — ${realm.url}`;
  return {
    subject,
    text: `${text.join('\n\n')}\n\n-- \n${foot}\n`,
    html: htmlDocument(subject, html.join('\n'), foot),
  };
}

/** A whole HTML mail around already-escaped body HTML. */
export function htmlDocument(subject: string, bodyHtml: string, foot: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>
<body style="font-family:sans-serif;line-height:1.4;max-width:40rem;margin:0 auto;padding:1rem">
${bodyHtml}
<hr style="border:0;border-top:1px solid #ddd">
<p style="color:#666;font-size:85%">${escapeHtml(foot)}</p>
</body>
</html>
`;
}

type RealmRef = { name: string; url: string };

/** An e-mail invitation (POST /invites, and its resending). */
export function invitationMail(args: {
  realm: RealmRef;
  referrerName: string;
  referrerEmail: string;
  link: string;
  /** When the link stops working (UNIX seconds); null: never. */
  expiresAt: number | null;
  now: number;
}): ComposedMail {
  const { realm } = args;
  let validity = 'The link does not expire.';
  if (args.expiresAt !== null) {
    const days = Math.max(1, Math.round((args.expiresAt - args.now) / 86400));
    validity = `The link works for ${days === 1 ? 'one day' : `${days} days`}.`;
  }
  return compose(`${args.referrerName} invited you to join ${realm.name}`, realm, [
    `${args.referrerName} (${args.referrerEmail}) invited you to join ${realm.name}, a team chat at ${realm.url}.`,
    'To create your account, open this link and choose your name and password:',
    { href: args.link, label: `Join ${realm.name}` },
    validity,
  ]);
}

/** The confirmation of an address change, to the new address (PATCH /settings `email`). */
export function emailChangeMail(args: {
  realm: RealmRef;
  host: string;
  oldEmail: string;
  newEmail: string;
  link: string;
}): ComposedMail {
  return compose(`Verify your new email address for ${args.host}`, args.realm, [
    `We received a request to change the email address for the account ${args.oldEmail} on ${args.host} to ${args.newEmail}.`,
    'To confirm this change, open this link within a day:',
    { href: args.link, label: 'Confirm the new address' },
    'If you did not ask for this, ignore this mail: nothing changes without the confirmation.',
  ]);
}

/** After a confirmed address change, to the old address. */
export function emailChangedMail(args: {
  realm: RealmRef;
  host: string;
  newEmail: string;
}): ComposedMail {
  return compose(`Email address changed for ${args.host}`, args.realm, [
    `The email address for your account on ${args.realm.name} was changed to ${args.newEmail}.`,
    'If you did not make this change, contact the administrators of the organization at once.',
  ]);
}

/** A password reset link (the account exists and is active). */
export function passwordResetMail(args: {
  realm: RealmRef;
  email: string;
  link: string;
}): ComposedMail {
  return compose(`Reset your password for ${args.realm.name}`, args.realm, [
    `Someone (presumably you) asked to reset the password of the account ${args.email} on ${args.realm.url}.`,
    'To choose a new password, open this link within a day:',
    { href: args.link, label: 'Choose a new password' },
    'If you did not ask for this, ignore this mail: your password stays as it is.',
  ]);
}

/**
 * A reset asked for an address with no active account in the realm: its owner is told, and the
 * page that asked said the same as for any address, so it reveals nothing.
 */
export function passwordResetNoAccountMail(args: {
  realm: RealmRef;
  email: string;
  deactivated: boolean;
}): ComposedMail {
  return compose(`Reset your password for ${args.realm.name}`, args.realm, [
    `Someone (presumably you) asked to reset the password of the account ${args.email} on ${args.realm.url}.`,
    args.deactivated
      ? `The account ${args.email} in ${args.realm.name} has been deactivated, so its password cannot be reset. Ask an administrator of the organization to reactivate it.`
      : `There is no account with the address ${args.email} in ${args.realm.name}. If you have an account there, it may be under another address; an administrator of the organization can invite you.`,
    'If you did not ask for this, ignore this mail.',
  ]);
}

/** The welcome mail to a new account. */
export function welcomeMail(args: {
  realm: RealmRef;
  fullName: string;
  email: string;
}): ComposedMail {
  return compose(`Welcome to ${args.realm.name}`, args.realm, [
    `Welcome, ${args.fullName}!`,
    `Your account ${args.email} in ${args.realm.name} is ready. Log in to the web app with this address:`,
    { href: `${args.realm.url}/`, label: `Open ${args.realm.name}` },
    'Mobile and desktop apps, and the terminal client, connect to the same address.',
    'You can change which mail you get from the server in your personal settings (notifications).',
  ]);
}

/**
 * The notice to a person whose account an administrator deactivated, when asked for
 * (`DELETE /users/{id}` with `deactivation_notification_comment`): with the administrators'
 * text, when they wrote one.
 */
export function deactivationMail(args: { realm: RealmRef; comment: string }): ComposedMail {
  const { realm } = args;
  const blocks: Block[] = [
    `Your account in ${realm.name} (${realm.url}) has been deactivated by its administrators: ` +
      'you can no longer log in, and your API keys no longer work.',
  ];
  if (args.comment.trim() !== '') {
    blocks.push('They wrote:', { quote: args.comment });
  }
  blocks.push('If you think this is a mistake, ask them to reactivate it.');
  return compose(`Your account in ${realm.name} has been deactivated`, realm, blocks);
}
