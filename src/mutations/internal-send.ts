/**
 * The server's own messages (the reference's internal_send_stream_message and
 * internal_send_private_message): move and resolve notices, reports of failed scheduled
 * deliveries. Every one goes through here, and from here through the send path (checkMessage's
 * destination, doSendMessage's rows, flags and events), so a bot message is a message like any
 * other. The sender is the realm's notification bot, which every realm has from creation
 * (src/mutations/realms.ts; migration 0015 for older realms). The content was rendered before the
 * realm actor ran the change (see src/lib/notices.ts); nothing renders here.
 */
import type { MessageDestination, PreparedContent } from '../lib/message-content.js';
import { NOTIFICATION_BOT_EMAIL } from '../lib/notices.js';
import type { RealmView } from '../queries/realm-view.js';
import type { UserRow } from '../storage/users.js';
import type { MutationContext } from './context.js';
import { checkMessage, doSendMessage, type InternalSendOptions } from './messages.js';

/** The realm's notification bot (a missing one is a broken realm: a bug, not a refusal). */
export function notificationBot(view: RealmView): UserRow {
  const bot = view.userByEmail(NOTIFICATION_BOT_EMAIL);
  if (!bot) throw new Error(`realm ${view.id} has no notification bot`);
  return bot;
}

export type InternalMessage = PreparedContent & { to: MessageDestination } & InternalSendOptions;

/**
 * Sends a notification-bot message: no permission checks (the bot may post anywhere, as the
 * reference's system bots), read by the bot itself. `alsoTo`: recipients the read model does not
 * know yet (an account made in this transaction, subscribed to the channel in it).
 */
export function sendInternalMessage(
  ctx: MutationContext,
  m: InternalMessage,
  alsoTo: readonly number[] = [],
): { id: number } {
  const send = {
    sender_id: notificationBot(ctx.realm).id,
    to: m.to,
    content: m.content,
    rendered: m.rendered,
    search_text: m.search_text,
    client: 'Internal',
    read_by_sender: true,
  };
  const checked = checkMessage(ctx, send, true);
  for (const id of alsoTo) if (!checked.recipients.includes(id)) checked.recipients.push(id);
  return doSendMessage(ctx, { cmd: send, checked }, m);
}
