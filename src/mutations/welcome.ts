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
 *
 * Also the bot's answers to the direct messages people send it (the reference's
 * send_welcome_bot_response): `message.send` says which new messages get one (welcomeBotAnswers),
 * and POST /messages asks `user.welcome.reply` for it after the commit; same send path, not
 * starred.
 */
import { dmGroupKey, type PreparedContent } from '../lib/message-content.js';
import { Role } from '../lib/roles.js';
import {
  invitationAcceptedNotice,
  joinedNotice,
  SIGNUPS_TOPIC,
  WELCOME_BOT,
  type PreparedWelcome,
} from '../lib/welcome.js';
import type { MutationContext } from './context.js';
import { doSendMessage, type CheckedMessage } from './messages.js';
import { sendInternalMessage } from './internal-send.js';
import { ensureSystemBot } from './operations.js';

/**
 * A direct message from the Welcome Bot (`botId`; made on first need by ensureSystemBot, which
 * the read model learns of only after COMMIT) to `userId` (a human account of this realm) through
 * the send path: read by the bot, unread for the account, no missed-message mail; `starred`: starred
 * for the account (the welcome message). Its id.
 */
function sendAsWelcomeBot(
  ctx: MutationContext,
  botId: number,
  userId: number,
  prepared: PreparedContent,
  starred: boolean,
): { id: number } {
  const { store, realm } = ctx;
  const sender = store.users.byId(botId)!;
  const memberIds = [sender.id, userId].sort((a, b) => a - b);
  const key = dmGroupKey(memberIds);
  const checked: CheckedMessage = {
    sender,
    channel: null,
    topic: '',
    dm: { existing: store.messages.dmGroupByKey(realm.id, key), key, memberIds },
    recipients: memberIds,
    topicParticipants: null,
  };
  const cmd = {
    sender_id: sender.id,
    to: { kind: 'direct' as const, ids: [userId] },
    content: prepared.content,
    rendered: prepared.rendered,
    search_text: prepared.search_text,
    client: 'Internal',
    read_by_sender: true,
  };
  return doSendMessage(
    ctx,
    { cmd, checked },
    { disableExternalNotifications: true, ...(starred ? { starredFor: userId } : {}) },
  );
}

/**
 * Sends the welcome message to `user` (a human account of this realm), then the invitation's
 * custom text if it has one (unread, not starred); the welcome message's id.
 */
export function sendWelcomeMessage(
  ctx: MutationContext,
  user: { id: number; role: number },
  welcome: PreparedWelcome,
): { id: number } {
  const prepared = user.role <= Role.ADMINISTRATOR ? welcome.admin : welcome.member;
  const botId = ensureSystemBot(ctx, WELCOME_BOT).user_id;
  const sent = sendAsWelcomeBot(ctx, botId, user.id, prepared, true);
  if (welcome.custom) sendAsWelcomeBot(ctx, botId, user.id, welcome.custom, false);
  return sent;
}

/**
 * Whether a message the send path just stored is one the Welcome Bot answers (the reference's
 * check in do_send_messages): a direct message between one human and the Welcome Bot alone, not
 * from the bot. Group direct messages, bots' messages and the bot's own get no answer, so the bot
 * never answers itself or another bot (no loop).
 */
export function welcomeBotAnswers(ctx: MutationContext, checked: CheckedMessage): boolean {
  if (checked.dm === null || checked.dm.memberIds.length !== 2) return false;
  if (checked.sender.is_bot) return false;
  const bot = ctx.realm.userByEmail(WELCOME_BOT.email);
  if (bot === undefined || !bot.is_bot || !bot.is_active) return false;
  return bot.id !== checked.sender.id && checked.dm.memberIds.includes(bot.id);
}

/**
 * `user.welcome.reply`: the Welcome Bot's answer to `message_id`, a direct message `user_id` sent
 * it (src/endpoints/messages.ts asks once per such message, after its commit; the answer was
 * rendered there, from welcomeBotReply). Checked again here, since the realm may have changed
 * in between: the message is still there, from that active human to the bot alone.
 */
export type WelcomeReplyCommand = { user_id: number; message_id: number; reply: PreparedContent };

export function doWelcomeBotReply(ctx: MutationContext, cmd: WelcomeReplyCommand): { id: number } {
  const { store, realm } = ctx;
  const u = realm.user(cmd.user_id);
  if (!u || !u.is_active || u.is_bot) {
    throw new Error(`user ${cmd.user_id} is no active human of realm ${realm.id}`);
  }
  const bot = realm.userByEmail(WELCOME_BOT.email);
  const row = store.messages.byId(cmd.message_id);
  if (
    !bot ||
    !row ||
    row.realm_id !== realm.id ||
    row.sender_id !== u.id ||
    row.dm_group_id === null ||
    row.dm_group_id !== store.messages.dmGroupByKey(realm.id, dmGroupKey([u.id, bot.id]))
  ) {
    throw new Error(`message ${cmd.message_id} is no direct message from ${u.id} to Welcome Bot`);
  }
  return sendAsWelcomeBot(ctx, bot.id, u.id, cmd.reply, false);
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

/**
 * The Notification Bot's "<new account> joined this organization." in the realm's signup
 * announcements channel, topic "signups" (notify_new_user), when the realm has one and it is not
 * archived. `user` was created in this transaction, subscribed to `channelIds` in it: the read
 * model knows neither yet, so the account is added to the message's recipients when the channel
 * is one of those.
 */
export function announceNewUser(
  ctx: MutationContext,
  user: { id: number; full_name: string },
  channelIds: readonly number[],
): void {
  const { realm } = ctx;
  const channel = realm.channels.byId(realm.settings.signup_announcements_stream_id);
  if (channel === undefined || channel.deactivated) return;
  sendInternalMessage(
    ctx,
    { ...joinedNotice(user), to: { kind: 'channel', channel: channel.id, topic: SIGNUPS_TOPIC } },
    channelIds.includes(channel.id) ? [user.id] : [],
  );
}

/**
 * The Notification Bot's direct message to an invitation's sender when the account it invited is
 * made (process_new_human_user), if the invitation asked for it and the sender is still active.
 */
export function tellReferrer(
  ctx: MutationContext,
  referrerId: number,
  user: { id: number; full_name: string },
): void {
  const referrer = ctx.realm.user(referrerId);
  if (referrer === undefined || !referrer.is_active) return;
  sendInternalMessage(ctx, {
    ...invitationAcceptedNotice(user),
    to: { kind: 'direct', ids: [referrer.id] },
  });
}
