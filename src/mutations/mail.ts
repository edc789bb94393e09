/**
 * The outbox's side of the realm actor (docs/mail.md "The outbox"): a change that causes mail
 * writes it here, in its own transaction, so that a committed change never loses its mail and a
 * refused one sends none; the sender (src/mail/sender.ts) records each delivery's outcome through
 * the commands below, so that a cluster's copies agree on what is still to send.
 */
import type { ComposedMail, MailKind } from '../lib/mail.js';
import { log } from '../observability/log.js';
import type { MutationContext } from './context.js';

/**
 * Puts a mail in the outbox (when the server sends mail: `ctx.mail`). A full outbox drops the new
 * mail with a log line, so that what the outbox holds stays bounded. Returns whether it was kept.
 */
export function enqueueMail(
  ctx: MutationContext,
  kind: MailKind,
  to: string,
  mail: ComposedMail,
): boolean {
  const deps = ctx.mail;
  if (deps === null) return false;
  if (ctx.store.mail.count() >= deps.maxOutbox) {
    const realmId = ctx.realm.id;
    ctx.afterCommit(() =>
      log.error({ realmId, kind, max: deps.maxOutbox }, 'mail dropped: the outbox is full'),
    );
    return false;
  }
  ctx.store.mail.insert({
    realm_id: ctx.realm.id,
    kind,
    recipient: to,
    subject: mail.subject,
    text_body: mail.text,
    html_body: mail.html,
    created_at: ctx.now,
    next_attempt_at: ctx.now,
  });
  ctx.afterCommit(() => deps.wake());
  return true;
}

/** The realm's URL for links in mail (only called when the server sends mail). */
export function mailRealm(ctx: MutationContext): { name: string; url: string } {
  const row = ctx.realm.row;
  return { name: row.name, url: ctx.mail!.realmUrl(row.string_id) };
}

type MailOutcome =
  | { id: number; outcome: 'sent' }
  | { id: number; outcome: 'retry'; attempts: number; next_attempt_at: number; error: string }
  | { id: number; outcome: 'dropped' };

/**
 * The sender's report on one delivery: sent and dropped mail leave the outbox; a failed attempt
 * is recorded with the time of the next. A mail already gone (another report won) changes nothing.
 */
export function doRecordMailOutcome(ctx: MutationContext, cmd: MailOutcome): { recorded: boolean } {
  const row = ctx.store.mail.byId(cmd.id);
  if (!row || row.realm_id !== ctx.realm.id) return { recorded: false };
  if (cmd.outcome === 'retry') {
    ctx.store.mail.setAttempt(cmd.id, cmd.attempts, cmd.next_attempt_at, cmd.error.slice(0, 500));
  } else {
    ctx.store.mail.remove(cmd.id);
  }
  return { recorded: true };
}
