/**
 * The Welcome Bot's direct message to a new human account (src/lib/welcome.ts; the reference's
 * send_initial_direct_message). doCreateUser (./users.ts) sends it in the transaction that creates
 * the account, after the account's channels and history; a realm's first owner gets it from the
 * realm's set-up (src/realm-setup.ts, `user.welcome.send`), after the realm's first channel
 * messages, as the reference's realm creation orders them. Reactivating an account sends nothing.
 *
 * The message goes through the send path (doSendMessage: its rows, flags, index and event) like
 * every other, with the flags the reference gives it: read by the bot, unread and starred for
 * the new account, no missed-message mail. The destination is built here, not by checkMessage:
 * neither the new account nor a Welcome Bot created for it is in the read model before COMMIT,
 * and the system bot is subject to no sending policy anyway.
 */
import { dmGroupKey } from '../lib/message-content.js';
import { Role } from '../lib/roles.js';
import { WELCOME_BOT, type PreparedWelcome } from '../lib/welcome.js';
import type { MutationContext } from './context.js';
import { doSendMessage, type CheckedMessage } from './messages.js';
import { ensureSystemBot } from './operations.js';

/** Sends the welcome message to `user` (a human account of this realm); its id. */
export function sendWelcomeMessage(
  ctx: MutationContext,
  user: { id: number; role: number },
  welcome: PreparedWelcome,
): { id: number } {
  const { store, realm } = ctx;
  const bot = ensureSystemBot(ctx, WELCOME_BOT);
  const sender = store.users.byId(bot.user_id)!;
  const memberIds = [sender.id, user.id].sort((a, b) => a - b);
  const key = dmGroupKey(memberIds);
  const checked: CheckedMessage = {
    sender,
    channel: null,
    topic: '',
    dm: { existing: store.messages.dmGroupByKey(realm.id, key), key, memberIds },
    recipients: memberIds,
    topicParticipants: null,
  };
  const prepared = user.role <= Role.ADMINISTRATOR ? welcome.admin : welcome.member;
  const cmd = {
    sender_id: sender.id,
    to: { kind: 'direct' as const, ids: [user.id] },
    content: prepared.content,
    rendered: prepared.rendered,
    search_text: prepared.search_text,
    client: 'Internal',
    read_by_sender: true,
  };
  return doSendMessage(
    ctx,
    { cmd, checked },
    { starredFor: user.id, disableExternalNotifications: true },
  );
}

export type SendWelcomeCommand = { user_id: number; welcome: PreparedWelcome };

/**
 * `user.welcome.send`: the welcome message to an account created outside the realm actor (a new
 * realm's owner, made with the realm). Refuses anything but an active human of this realm.
 */
export function doSendWelcome(ctx: MutationContext, cmd: SendWelcomeCommand): { id: number } {
  const u = ctx.store.users.byId(cmd.user_id);
  if (!u || u.realm_id !== ctx.realm.id || !u.is_active || u.is_bot) {
    throw new Error(`user ${cmd.user_id} is no active human of realm ${ctx.realm.id}`);
  }
  return sendWelcomeMessage(ctx, { id: u.id, role: u.role }, cmd.welcome);
}
