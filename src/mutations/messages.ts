/**
 * Sending and deleting messages. Reference: actions/message_send.py (check_message,
 * do_send_messages, create_user_messages), views/message_edit.py validate_can_delete_message,
 * actions/message_delete.py.
 *
 * The endpoint normalized the content and topic and rendered the markdown before asking (the
 * realm actor never waits on a renderer); everything that depends on the realm's state — the
 * channel, its permissions, who receives the message, their flags — is decided here, inside the
 * transaction, so a send sees exactly the state it commits against.
 */
import crypto from 'node:crypto';
import { checkChannelName, effectiveTopicsPolicy } from '../lib/channel-rules.js';
import {
  JsonableError,
  NoPostPermissionError,
  StreamDoesNotExistError,
  StreamWithIdDoesNotExistError,
} from '../lib/errors.js';
import type { WireEvent } from '../lib/events.js';
import { escapeHtml } from '../lib/html.js';
import {
  dmGroupKey,
  type MessageDestination,
  type RenderedMessage,
} from '../lib/message-content.js';
import { apiFlagNames, MESSAGE_FLAG_BITS } from '../lib/message-flags.js';
import type { MessageType } from '../lib/notices.js';
import { BotType } from '../lib/roles.js';
import type { Channel } from '../queries/channels-view.js';
import {
  accessMessage,
  EVENT_FORMAT,
  formatMessage,
  messageEventAudience,
} from '../queries/messages.js';
import { userGroupSetting } from '../queries/user-groups.js';
import type { MessageRow, ShownMessageRow } from '../storage/messages.js';
import type { UserRow } from '../storage/users.js';
import type { ServiceBotTrigger } from '../lib/bots.js';
import { log } from '../observability/log.js';
import { claimAttachments, releaseMessageAttachments } from './attachments.js';
import { followOnAct, followWhereMentioned } from './auto-follow.js';
import { actingUser, type MutationContext } from './context.js';
import { finishThumbnails } from './thumbnails.js';
import { planMissedMessageMail, scheduleMissedMessageMail } from './missed-messages.js';
import { welcomeBotAnswers } from './welcome.js';
import { writeWidget } from './submessages.js';
import { widgetFromContent, type WidgetContent } from '../lib/widgets.js';

export type SendMessageCommand = {
  sender_id: number;
  to: MessageDestination;
  /** Normalized content (see src/lib/message-content.ts). */
  content: string;
  rendered: RenderedMessage;
  /** The text of the rendered content, for the full-text index. */
  search_text: string;
  client: string;
  read_by_sender: boolean;
  /** The sending client's queue and its local id for the message (local echo). */
  queue_id?: string | undefined;
  local_id?: string | undefined;
  /** A widget sent with the message (`widget_content`, checked): it overrides one of the content. */
  widget_content?: WidgetContent | undefined;
};

/** Up to this many channel subscribers or topic participants, anyone may use wildcard mentions. */
export const WILDCARD_MENTION_THRESHOLD = 15;

function resolveChannel(ctx: MutationContext, target: string | number): Channel {
  const channels = ctx.realm.channels;
  if (typeof target === 'number') {
    const ch = channels.byId(target);
    if (!ch) throw new StreamWithIdDoesNotExistError(target);
    return ch;
  }
  const name = target.trim();
  checkChannelName(name);
  const ch = channels.byName(name);
  if (!ch) throw new StreamDoesNotExistError(escapeHtml(name));
  return ch;
}

function checkChannelSend(ctx: MutationContext, sender: UserRow, ch: Channel, topic: string): void {
  const decision = ctx.realm.channels.sendMessageDecision(sender.id, ch);
  if (decision === 'not_allowed') {
    throw new NoPostPermissionError();
  }
  if (decision === 'unauthorized') {
    throw new JsonableError(`Not authorized to send to channel '${ch.name}'`);
  }
  const policy = effectiveTopicsPolicy(ch.topics_policy, ctx.realm.settings.topics_policy);
  if (policy === 'disable_empty_topic' && topic === '') {
    throw new JsonableError('Sending messages to the general chat is not allowed in this channel.');
  }
  if (policy === 'empty_topic_only' && topic !== '') {
    throw new JsonableError('Only the general chat topic is allowed in this channel.');
  }
}

/** The users of a direct message (sender included), refusing unknown and deactivated ones. */
function resolveDirectRecipients(ctx: MutationContext, to: MessageDestination): UserRow[] {
  const view = ctx.realm;
  const users: UserRow[] = [];
  if ('emails' in to) {
    if (to.emails.length === 0) throw new JsonableError('Message must have recipients');
    for (const email of to.emails) {
      const u = view.userByEmail(email);
      if (!u) throw new JsonableError(`Invalid email '${email}'`);
      users.push(u);
    }
  } else if ('ids' in to) {
    if (to.ids.length === 0) throw new JsonableError('Message must have recipients');
    for (const id of to.ids) {
      const u = view.user(id);
      if (!u) throw new JsonableError(`Invalid user ID ${id}`);
      users.push(u);
    }
  }
  for (const u of users) {
    if (!u.is_active) throw new JsonableError(`'${u.email}' is no longer using Zulip.`);
  }
  return users;
}

/**
 * The realm's direct-message policies: some participant must be in
 * direct_message_permission_group, and the sender must be in direct_message_initiator_group
 * unless the conversation already has messages. Bots, and messages only to bots or oneself, are
 * exempt.
 */
function checkDirectSend(
  ctx: MutationContext,
  sender: UserRow,
  recipients: readonly UserRow[],
  existingGroupId: number | undefined,
): void {
  if (sender.is_bot) return;
  if (recipients.every((u) => u.is_bot || u.id === sender.id)) return;
  const view = ctx.realm;
  const permission = view.groupSetting('direct_message_permission_group');
  const everyone = [sender, ...recipients];
  if (!everyone.some((u) => view.isUserInGroupSetting(u.id, permission))) {
    if (permission === view.systemGroupId('role:nobody')) {
      throw new JsonableError('Direct messages are disabled in this organization.');
    }
    throw new JsonableError('This conversation does not include any users who can authorize it.');
  }
  if (view.hasRealmPermission(sender.id, 'direct_message_initiator_group')) return;
  if (existingGroupId !== undefined && ctx.store.messages.dmGroupHasMessages(existingGroupId))
    return;
  throw new JsonableError('You do not have permission to initiate direct message conversations.');
}

/**
 * Wildcard and group mentions the sender may not use (sending, and editing content).
 * `topicParticipants` is needed only when the content has a topic wildcard mention.
 */
export function checkMentionPermissions(
  ctx: MutationContext,
  sender: UserRow,
  rendered: RenderedMessage,
  ch: Channel | null,
  topicParticipants: Set<number> | null,
): void {
  const view = ctx.realm;
  const manyOk = () => view.hasRealmPermission(sender.id, 'can_mention_many_users_group');
  if (ch && rendered.mentions_stream_wildcard) {
    if (view.channels.subscriberIds(ch.id).length > WILDCARD_MENTION_THRESHOLD && !manyOk()) {
      throw new JsonableError(
        'You do not have permission to use channel wildcard mentions in this channel.',
        { code: 'STREAM_WILDCARD_MENTION_NOT_ALLOWED' },
      );
    }
  }
  if (ch && rendered.mentions_topic_wildcard && topicParticipants) {
    if (topicParticipants.size > WILDCARD_MENTION_THRESHOLD && !manyOk()) {
      throw new JsonableError(
        'You do not have permission to use topic wildcard mentions in this topic.',
        { code: 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED' },
      );
    }
  }
  for (const groupId of rendered.mentions_user_group_ids) {
    const g = view.group(groupId);
    if (!g) continue;
    if (!view.isUserInGroupSetting(sender.id, userGroupSetting(view, g, 'can_mention_group'))) {
      throw new JsonableError(`You are not allowed to mention user group '${g.name}'.`);
    }
  }
}

/**
 * What check_message decided about a send: the sender, the destination resolved against the
 * realm, and who receives it. Nothing is written until doSendMessage.
 */
export type CheckedMessage = {
  sender: UserRow;
  channel: Channel | null;
  topic: string;
  /** A direct message's conversation: its existing group, or the key and members of a new one. */
  dm: { existing: number | undefined; key: string; memberIds: number[] } | null;
  recipients: number[];
  topicParticipants: Set<number> | null;
};

/**
 * The reference's check_message: validates the destination and the sender's permissions (posting,
 * direct-message policies, wildcard and group mentions) without writing anything. Scheduled
 * messages run it when they are scheduled or edited, and again when they are delivered.
 * `internal`: the server's own messages (src/mutations/internal-send.ts) resolve their
 * destination the same way but are not subject to the permissions, as the reference's system bots.
 */
export function checkMessage(
  ctx: MutationContext,
  cmd: Pick<SendMessageCommand, 'sender_id' | 'to' | 'rendered'>,
  internal = false,
): CheckedMessage {
  const { store, realm: view } = ctx;
  const sender = actingUser(view, cmd.sender_id);
  const r = cmd.rendered;

  let channel: Channel | null = null;
  let topic = '';
  let dm: CheckedMessage['dm'] = null;
  let recipients: number[];
  let topicParticipants: Set<number> | null = null;
  if (cmd.to.kind === 'channel') {
    channel = resolveChannel(ctx, cmd.to.channel);
    topic = cmd.to.topic;
    if (!internal) checkChannelSend(ctx, sender, channel, topic);
    if (r.mentions_topic_wildcard) {
      topicParticipants = store.messages.topicParticipants(channel.id, topic);
      topicParticipants.add(sender.id);
    }
    if (!internal) checkMentionPermissions(ctx, sender, r, channel, topicParticipants);
    recipients = view.channels.subscriberIds(channel.id);
    // Default bots get the channel messages they are mentioned in, subscribed or not.
    const subscribed = new Set(recipients);
    for (const id of r.mentions_user_ids) {
      const u = view.user(id);
      if (u && u.is_active && u.is_bot && u.bot_type === BotType.DEFAULT && !subscribed.has(id)) {
        recipients.push(id);
      }
    }
  } else {
    const users = resolveDirectRecipients(ctx, cmd.to);
    const members = new Set(users.map((u) => u.id));
    members.add(sender.id);
    const key = dmGroupKey(members);
    const existing = store.messages.dmGroupByKey(view.id, key);
    if (!internal) {
      checkDirectSend(ctx, sender, users, existing);
      checkMentionPermissions(ctx, sender, r, null, null);
    }
    const memberIds = [...members].sort((a, b) => a - b);
    dm = { existing, key, memberIds };
    recipients = memberIds;
  }
  return { sender, channel, topic, dm, recipients, topicParticipants };
}

/** A message to send and what check_message found for it. */
export type SendPlan = { cmd: SendMessageCommand; checked: CheckedMessage };

/**
 * POST /messages: validates the destination and permissions; doSendMessage then stores the
 * message with one user_messages row (with flags) per recipient, indexes it for search, and emits
 * one `message` event to every recipient.
 */
export function checkSendMessage(ctx: MutationContext, cmd: SendMessageCommand): SendPlan {
  return { cmd, checked: checkMessage(ctx, cmd) };
}

/**
 * How the server's own messages differ (internal_send_*): read for the user whose action they
 * report (`readFor`); with `unreadOnlyFor`, unread only for those users; starred for one user
 * (`starredFor`: the welcome message); no missed-message mail (`disableExternalNotifications`,
 * the reference's disable_external_notifications); a message type.
 */
export type InternalSendOptions = {
  readFor?: number;
  unreadOnlyFor?: ReadonlySet<number> | null;
  starredFor?: number;
  disableExternalNotifications?: boolean;
  type?: MessageType;
};

/** Stores and announces a message check_message accepted (the reference's do_send_messages). */
export function doSendMessage(
  ctx: MutationContext,
  { cmd, checked }: SendPlan,
  internal: InternalSendOptions = {},
): { id: number } {
  const { store, realm: view } = ctx;
  const { sender, channel, topic, recipients, topicParticipants } = checked;
  const r = cmd.rendered;
  const dmGroupId =
    checked.dm === null
      ? null
      : (checked.dm.existing ??
        store.messages.createDmGroup(view.id, checked.dm.key, checked.dm.memberIds));

  // Flags, per recipient (create_user_messages).
  const mentioned = new Set(r.mentions_user_ids);
  for (const groupId of r.mentions_user_group_ids) {
    for (const id of view.recursiveMembers(groupId)) mentioned.add(id);
  }
  const alerted = new Set(r.user_ids_with_alert_words);
  let base = 0;
  if (r.mentions_stream_wildcard) base |= MESSAGE_FLAG_BITS.stream_wildcard_mentioned;
  if (dmGroupId !== null) base |= MESSAGE_FLAG_BITS.is_private;
  // Recipients who muted the sender get the message already read (create_user_messages).
  const muters = new Set(store.mutedUsers.mutersOf(sender.id));
  const flags = recipients.map((id) => {
    let f = base;
    if (id === sender.id && cmd.read_by_sender) f |= MESSAGE_FLAG_BITS.read;
    if (muters.has(id)) f |= MESSAGE_FLAG_BITS.read;
    if (id === internal.readFor) f |= MESSAGE_FLAG_BITS.read;
    if (id === internal.starredFor) f |= MESSAGE_FLAG_BITS.starred;
    if (internal.unreadOnlyFor && !internal.unreadOnlyFor.has(id)) f |= MESSAGE_FLAG_BITS.read;
    if (mentioned.has(id)) f |= MESSAGE_FLAG_BITS.mentioned;
    if (alerted.has(id)) f |= MESSAGE_FLAG_BITS.has_alert_word;
    if (r.mentions_topic_wildcard && topicParticipants?.has(id)) {
      f |= MESSAGE_FLAG_BITS.topic_wildcard_mentioned;
    }
    return f;
  });
  // Recipients who are away and are to be mailed about it (docs/mail.md "Missed messages").
  const missed = internal.disableExternalNotifications
    ? []
    : planMissedMessageMail(
        ctx,
        {
          senderId: sender.id,
          channel: channel ? { id: channel.id, topic } : null,
          mentionedUserIds: new Set(r.mentions_user_ids),
          mentionedGroupIds: r.mentions_user_group_ids,
        },
        recipients,
        flags,
      );

  const row = {
    realm_id: view.id,
    sender_id: sender.id,
    stream_id: channel ? channel.id : null,
    dm_group_id: dmGroupId,
    topic,
    content: cmd.content,
    // A thumbnail made since the rendering shows at once (the rendering saw a placeholder).
    rendered_content: finishThumbnails(store, view.id, r.rendered_content),
    date_sent: ctx.now,
    has_attachment: r.has_attachment ? 1 : 0,
    has_image: r.has_image ? 1 : 0,
    has_link: r.has_link ? 1 : 0,
    sending_client: cmd.client,
  };
  const id = store.messages.insert(
    internal.type === undefined ? row : { ...row, type: internal.type },
  );
  store.messages.insertUserMessages(id, recipients, flags);
  scheduleMissedMessageMail(ctx, id, missed);
  store.messages.index(id, topic, cmd.search_text);
  // Topics followed or unmuted by sending or being mentioned (./auto-follow.ts): their events
  // come before the message's, as the reference's.
  if (channel !== null) {
    followOnAct(ctx, sender.id, channel, topic, id);
    followWhereMentioned(ctx, channel, topic, r.mentions_user_ids, recipients);
  }
  if (dmGroupId !== null) queueServiceBots(ctx, sender, id, recipients, 'direct_message');
  else queueServiceBots(ctx, sender, id, r.mentions_user_ids, 'mention');
  if (r.potential_attachment_path_ids.length > 0) {
    // Links to uploads the sender may share become claims; a message whose links name no such
    // upload does not count as having an attachment (do_claim_attachments).
    const { claimed } = claimAttachments(ctx, {
      senderId: sender.id,
      messageId: id,
      pathIds: r.potential_attachment_path_ids,
    });
    if (claimed.length === 0) {
      row.has_attachment = 0;
      store.messages.setHasAttachment(id, false);
    }
  }

  // What the message object shows, named field by field. Made as a spread of `row`
  // (`{ ...row, id, … }`), it was an object of 1.1–1.3 KB (V8's sampling heap profiler) that
  // outlived the young generation, ~1.8 KB per send left in the old one until its next collection
  // (docs/benchmarks.md "What a send leaves in the old generation").
  const shown: ShownMessageRow = {
    id,
    sender_id: row.sender_id,
    stream_id: row.stream_id,
    dm_group_id: row.dm_group_id,
    topic: row.topic,
    content: row.content,
    rendered_content: row.rendered_content,
    date_sent: row.date_sent,
    last_edit_time: null,
    last_moved_time: null,
    edit_history: null,
    sending_client: row.sending_client,
  };
  // A poll or to-do list (`/poll …`, `/todo …`), or the widget sent with it: its first submessage.
  const widget = cmd.widget_content ?? widgetFromContent(cmd.content);
  const submessages = widget ? writeWidget(store, id, sender.id, widget) : [];
  const message = formatMessage(store, view, shown, EVENT_FORMAT, [], submessages);
  const flagsByUser: Record<number, readonly string[]> = {};
  for (let i = 0; i < recipients.length; i++) flagsByUser[recipients[i]!] = apiFlagNames(flags[i]!);
  ctx.emit({ type: 'message', message }, recipients, {
    flags: flagsByUser,
    message: {
      rawContent: cmd.content,
      senderAvatarIsExternal: sender.avatar_source === 'G' && view.settings.external_avatars,
      publicChannel: channel !== null && channel.invite_only === 0,
      ...(cmd.queue_id !== undefined && cmd.local_id !== undefined
        ? { senderQueueId: cmd.queue_id, localId: cmd.local_id }
        : {}),
    },
  });
  return { id };
}

/** How long a send's local id is remembered for the client's retries (seconds). */
export const SENT_LOCAL_ID_SECONDS = 3600;

/** A send's destination and content, as a short digest (a retry repeats both). */
function sendDigest(cmd: SendMessageCommand): string {
  return crypto
    .createHash('sha256')
    .update(JSON.stringify([cmd.to, cmd.content]))
    .digest('base64url')
    .slice(0, 22);
}

/**
 * What `message.send` answers: the message's id; `welcome_bot_answers` when the message is new
 * and one the Welcome Bot answers (src/mutations/welcome.ts welcomeBotAnswers): the endpoint
 * then asks for the answer, after this commit. A retried send (below) never has it, so a message
 * gets at most one answer.
 */
export type SentMessage = { id: number; welcome_bot_answers?: true };

function sendNew(ctx: MutationContext, cmd: SendMessageCommand): SentMessage {
  const plan = checkSendMessage(ctx, cmd);
  const { id } = doSendMessage(ctx, plan);
  return welcomeBotAnswers(ctx, plan.checked) ? { id, welcome_bot_answers: true } : { id };
}

/**
 * POST /messages as the realm actor runs it. A send carrying the client's `queue_id` and
 * `local_id` that this sender already sent with the same pair, to the same destination with the
 * same content, within the last hour, is that client asking again after a failure that left it
 * unsure (a connection reset, a timeout, a 503 while a cluster moved the realm) with the first
 * attempt stored after all: it is answered with the stored message's id, and nothing is written
 * or announced again. Sends without the pair are always new messages, as in the reference.
 */
export function sendMessageOnce(ctx: MutationContext, cmd: SendMessageCommand): SentMessage {
  const { queue_id: queueId, local_id: localId } = cmd;
  if (queueId === undefined || localId === undefined) return sendNew(ctx, cmd);
  const digest = sendDigest(cmd);
  const sent = ctx.store.sentLocalIds.find(cmd.sender_id, queueId, localId);
  if (sent !== undefined && sent.digest === digest) return { id: sent.message_id };
  const result = sendNew(ctx, cmd);
  ctx.store.sentLocalIds.record(
    cmd.sender_id,
    queueId,
    localId,
    result.id,
    digest,
    ctx.now,
    ctx.now - SENT_LOCAL_ID_SECONDS,
  );
  return result;
}

export type DeleteMessageCommand = { acting_user_id: number; message_id: number };

/**
 * DELETE /messages/{id}: who may delete is the realm's and the channel's delete permissions
 * (anyone's messages, or one's own and one's bots' within the realm's time limit).
 */
export function checkDeleteMessage(ctx: MutationContext, cmd: DeleteMessageCommand): MessageRow {
  const { store, realm: view } = ctx;
  const { row } = accessMessage(store, view, cmd.acting_user_id, cmd.message_id, true);
  const user = view.user(cmd.acting_user_id)!;
  const ch = row.stream_id !== null ? view.channels.byId(row.stream_id) : undefined;
  const denied = () => new JsonableError("You don't have permission to delete this message");
  const anyAllowed =
    view.hasRealmPermission(user.id, 'can_delete_any_message_group') ||
    (ch !== undefined && view.channels.may(user.id, ch, 'delete_any_message'));
  if (!anyAllowed) {
    const sender = view.user(row.sender_id);
    if (row.sender_id !== user.id && sender?.bot_owner_id !== user.id) throw denied();
    if (!view.hasRealmPermission(user.id, 'can_delete_own_message_group')) {
      if (!ch || !view.channels.may(user.id, ch, 'delete_own_message')) throw denied();
    }
    const limit = view.settings.message_content_delete_limit_seconds;
    if (limit !== null && ctx.now - row.date_sent > limit) {
      throw new JsonableError('The time limit for deleting this message has passed');
    }
  }
  return row;
}

/**
 * Deletes a message with its rows, reactions and upload claims, and tells everyone who could see
 * it (do_delete_messages). No permission check: callers decided.
 */
export function doDeleteMessage(ctx: MutationContext, row: MessageRow): void {
  const audience = messageEventAudience(ctx.store, ctx.realm, row);
  releaseMessageAttachments(ctx, { messageIds: [row.id] });
  ctx.store.messages.delete(row.id);
  const event: WireEvent = {
    type: 'delete_message',
    message_ids: [row.id],
    message_type: row.stream_id !== null ? 'stream' : 'private',
  };
  if (row.stream_id !== null) {
    event.stream_id = row.stream_id;
    event.topic = row.topic;
  }
  ctx.emit(event, audience);
}

/**
 * Outgoing-webhook bots the message is for: mentioned by name in a channel message, or among a
 * direct message's recipients (the reference's get_service_bot_events); written to the durable
 * queue in the send's transaction and called after the commit (src/bots/outgoing-webhooks.ts),
 * never for their own messages or another such bot's (no loops between bots).
 */
function queueServiceBots(
  ctx: MutationContext,
  sender: UserRow,
  messageId: number,
  candidates: readonly number[],
  trigger: ServiceBotTrigger['trigger'],
): void {
  const deps = ctx.serviceBots;
  if (deps === null || (sender.is_bot && sender.bot_type === BotType.OUTGOING_WEBHOOK)) return;
  const triggers: ServiceBotTrigger[] = [];
  for (const id of new Set(candidates)) {
    if (id === sender.id) continue;
    const u = ctx.realm.user(id);
    if (u && u.is_active && u.is_bot && u.bot_type === BotType.OUTGOING_WEBHOOK)
      triggers.push({ bot_id: id, trigger });
  }
  if (triggers.length === 0) return;
  const realmId = ctx.realm.id;
  const calls = ctx.store.outgoingWebhookCalls;
  let written = false;
  for (const t of triggers) {
    if (calls.count() >= deps.maxWaiting) {
      const botId = t.bot_id;
      ctx.afterCommit(() =>
        log.error({ realmId, botId, messageId }, 'outgoing webhook dropped: the queue is full'),
      );
      continue;
    }
    written =
      calls.insert({
        message_id: messageId,
        bot_id: t.bot_id,
        realm_id: realmId,
        trigger: t.trigger,
        created_at: ctx.now,
      }) || written;
  }
  if (written) ctx.afterCommit(() => deps.wake());
}
