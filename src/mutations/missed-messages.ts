/**
 * Missed-message mail, the realm actor's side (docs/mail.md "Missed messages"): a send (or an edit
 * that adds a mention) schedules, in its own transaction, the messages each away recipient is to
 * be mailed about; when a user's batch is due, src/mail/missed-messages.ts composes the mail off
 * the actor and `doMailMissedMessages` moves it into the outbox, taking the batch's rows in the
 * same transaction. A user's last event queue going away without fetching some messages schedules
 * those (`doNoteQueueGone`). Reference: tornado/event_queue.py (maybe_enqueue_notifications,
 * missedmessage_hook, maybe_enqueue_notifications_for_message_update),
 * worker/missedmessage_emails.py (the batch's timestamp).
 *
 * Only when the server sends mail (`ctx.mail`): otherwise nothing is scheduled.
 */
import type { ComposedMail, MailDeps } from '../lib/mail.js';
import { MESSAGE_FLAG_BITS as B } from '../lib/message-flags.js';
import {
  emailTrigger,
  IDLE_AFTER_SECONDS,
  isIdle,
  MAX_PENDING_PER_USER,
  MENTION_TRIGGERS,
  VisibilityPolicy,
  type EmailTrigger,
} from '../lib/missed-messages.js';
import { realmPresence } from '../queries/presence.js';
import type { MessageRow } from '../storage/messages.js';
import type { UserRow } from '../storage/users.js';
import type { MutationContext } from './context.js';
import { enqueueMail } from './mail.js';

/** One recipient's mail for one message, decided before the message is stored. */
export type MissedMessagePlan = {
  userId: number;
  trigger: EmailTrigger;
  groupId: number | null;
};

/** What a send (or an edit, or a queue gone) knows of one message for the decision. */
export type MissedMessageFacts = {
  senderId: number;
  /** The channel, or null for a direct message. */
  channel: { id: number; topic: string } | null;
  /** Users mentioned by name, and groups mentioned (for the group a mention came through). */
  mentionedUserIds: ReadonlySet<number>;
  mentionedGroupIds: readonly number[];
};

/**
 * The topic's visibility policy of each user who has one (one query per message); the map a
 * decision looks users up in.
 */
function topicPolicies(ctx: MutationContext, facts: MissedMessageFacts): Map<number, number> {
  const out = new Map<number, number>();
  if (facts.channel === null) return out;
  for (const r of ctx.store.messageEdits.topicUserPolicies(facts.channel.id, facts.channel.topic))
    out.set(r.user_id, r.visibility_policy);
  return out;
}

/** The smallest mentioned group that reached the user, when no mention named them. */
function mentionGroup(ctx: MutationContext, facts: MissedMessageFacts, userId: number) {
  if (facts.mentionedUserIds.has(userId)) return null;
  let best: { id: number; size: number } | null = null;
  for (const groupId of facts.mentionedGroupIds) {
    const members = ctx.realm.recursiveMembers(groupId);
    if (members.has(userId) && (best === null || members.size < best.size))
      best = { id: groupId, size: members.size };
  }
  return best?.id ?? null;
}

/** Why `user` would be mailed about the message with these flags, if away (null: never). */
function triggerFor(
  ctx: MutationContext,
  facts: MissedMessageFacts,
  policies: ReadonlyMap<number, number>,
  user: UserRow | undefined,
  flags: number,
): EmailTrigger | null {
  if (!user || user.is_active !== 1 || user.is_bot === 1 || user.id === facts.senderId) return null;
  // Read already: the sender was muted, or the message reports the user's own action.
  if ((flags & (B.read | B.email_notified)) !== 0) return null;
  const channel = facts.channel;
  const sub = channel === null ? undefined : ctx.realm.channels.subscription(user.id, channel.id);
  return emailTrigger({
    settings: ctx.realm.userSettings(user.id),
    direct: channel === null,
    mentioned: (flags & B.mentioned) !== 0,
    streamWildcardMentioned: (flags & B.stream_wildcard_mentioned) !== 0,
    topicWildcardMentioned: (flags & B.topic_wildcard_mentioned) !== 0,
    subscription: sub
      ? {
          is_muted: sub.is_muted === 1,
          email_notifications: sub.email_notifications === null ? null : !!sub.email_notifications,
          wildcard_mentions_notify:
            sub.wildcard_mentions_notify === null ? null : !!sub.wildcard_mentions_notify,
        }
      : null,
    visibilityPolicy: policies.get(user.id) ?? VisibilityPolicy.INHERIT,
  });
}

/** Whether the user is away now (no message queue, or not active lately). */
function away(ctx: MutationContext, deps: MailDeps, userId: number): boolean {
  return isIdle({
    hasMessageQueue: deps.hasMessageQueue(ctx.realm.id, userId),
    presenceDisabled: ctx.realm.settings.presence_disabled,
    lastActiveTime: realmPresence(ctx.store, ctx.realm).get(userId)?.last_active_time ?? null,
    now: ctx.now,
    idleAfterSeconds: IDLE_AFTER_SECONDS,
  });
}

/**
 * For a message about to be stored: which recipients are away and would be mailed about it. Their
 * flags get `email_notified` (so that no later path mails the message again); `schedule` writes
 * the rows once the message has its id.
 */
export function planMissedMessageMail(
  ctx: MutationContext,
  facts: MissedMessageFacts,
  recipients: readonly number[],
  flags: number[],
): MissedMessagePlan[] {
  const deps = ctx.mail;
  if (deps === null) return [];
  const policies = topicPolicies(ctx, facts);
  const plan: MissedMessagePlan[] = [];
  for (let i = 0; i < recipients.length; i++) {
    const userId = recipients[i]!;
    const trigger = triggerFor(ctx, facts, policies, ctx.realm.user(userId), flags[i]!);
    if (trigger === null || !away(ctx, deps, userId)) continue;
    flags[i] = flags[i]! | B.email_notified;
    plan.push({ userId, trigger, groupId: mentionGroup(ctx, facts, userId) });
  }
  return plan;
}

/**
 * Writes the plan's rows: each joins the user's waiting batch, or starts one due after the user's
 * batching period. A user with MAX_PENDING_PER_USER messages waiting gets no more in that batch.
 */
export function scheduleMissedMessageMail(
  ctx: MutationContext,
  messageId: number,
  plan: readonly MissedMessagePlan[],
): void {
  const deps = ctx.mail;
  if (deps === null || plan.length === 0) return;
  let scheduled = false;
  for (const p of plan) {
    const pending = ctx.store.missedMessages.pendingOf(p.userId);
    if (pending.n >= MAX_PENDING_PER_USER) continue;
    const period = ctx.realm.userSettings(p.userId).email_notifications_batching_period_seconds;
    scheduled =
      ctx.store.missedMessages.insert({
        user_id: p.userId,
        message_id: messageId,
        realm_id: ctx.realm.id,
        trigger: p.trigger,
        mentioned_user_group_id: p.groupId,
        scheduled_at: pending.due ?? ctx.now + period,
      }) || scheduled;
  }
  if (scheduled) ctx.afterCommit(() => deps.wakeMissedMessages());
}

/**
 * An edit of a channel message's content: users it now mentions who were not mentioned before
 * and are away get mailed about it, unless the message was mailed to them already (the reference
 * sends nothing new for direct messages and for what channel or followed-topic settings already
 * mailed). `flagsBefore`/`flagsAfter`: each recipient's flags around the edit; the ones planned
 * get `email_notified` in `flagsAfter`.
 */
export function planMissedMessageMailForEdit(
  ctx: MutationContext,
  message: MessageRow,
  editorId: number,
  facts: MissedMessageFacts,
  flagsBefore: ReadonlyMap<number, number>,
  flagsAfter: Map<number, number>,
): MissedMessagePlan[] {
  const deps = ctx.mail;
  if (deps === null || message.stream_id === null) return [];
  const MENTIONS = B.mentioned | B.stream_wildcard_mentioned | B.topic_wildcard_mentioned;
  let policies: Map<number, number> | null = null;
  const plan: MissedMessagePlan[] = [];
  for (const [userId, after] of flagsAfter) {
    const before = flagsBefore.get(userId) ?? 0;
    if ((after & MENTIONS) === 0 || (before & MENTIONS) !== 0 || userId === editorId) continue;
    policies ??= topicPolicies(ctx, facts);
    const trigger = triggerFor(ctx, facts, policies, ctx.realm.user(userId), after);
    if (trigger === null || !MENTION_TRIGGERS.has(trigger) || !away(ctx, deps, userId)) continue;
    flagsAfter.set(userId, after | B.email_notified);
    plan.push({ userId, trigger, groupId: mentionGroup(ctx, facts, userId) });
  }
  return plan;
}

/** Messages a gone queue held at most that are looked at (the newest). */
const QUEUE_GONE_LIMIT = 100;

export type QueueGoneCommand = {
  user_id: number;
  /** When the queue's client last fetched (UNIX seconds): later messages it never saw. */
  since: number;
};

/**
 * The user's last event queue that took messages went away (collected, or deleted) without its
 * client fetching what came after `since`: those unread messages the user would have been mailed
 * about if away then are scheduled now, as the reference's missedmessage_hook does for the
 * message events left in a collected queue.
 */
export function doNoteQueueGone(
  ctx: MutationContext,
  cmd: QueueGoneCommand,
): { scheduled: number } {
  const deps = ctx.mail;
  const user = ctx.realm.user(cmd.user_id);
  if (deps === null || !user || user.is_active !== 1 || user.is_bot === 1) return { scheduled: 0 };
  // A client of theirs registered again meanwhile: they are back.
  if (deps.hasMessageQueue(ctx.realm.id, user.id)) return { scheduled: 0 };
  const rows = ctx.store.missedMessages.unreadSince(user.id, cmd.since, QUEUE_GONE_LIMIT);
  let scheduled = 0;
  for (const row of rows.reverse()) {
    const facts = messageFacts(ctx, row);
    const flags = row.flags ?? 0;
    const trigger = triggerFor(ctx, facts, topicPolicies(ctx, facts), user, flags);
    if (trigger === null) continue;
    ctx.store.messages.setFlag(user.id, [row.id], B.email_notified);
    scheduleMissedMessageMail(ctx, row.id, [
      { userId: user.id, trigger, groupId: mentionGroup(ctx, facts, user.id) },
    ]);
    scheduled++;
  }
  return { scheduled };
}

/** The decision's facts about a stored message (its mentions read back from the flags). */
function messageFacts(ctx: MutationContext, row: MessageRow): MissedMessageFacts {
  return {
    senderId: row.sender_id,
    channel: row.stream_id === null ? null : { id: row.stream_id, topic: row.topic },
    // The flags say whether the user was mentioned; which group it came through is not kept
    // once stored, so such a mail names no group.
    mentionedUserIds: new Set(),
    mentionedGroupIds: [],
  };
}

export type MailMissedMessagesCommand = {
  user_id: number;
  /** The batch's messages the mailer composed the mail from (their rows are taken). */
  message_ids: number[];
  mails: ComposedMail[];
};

/**
 * A user's due batch, composed by src/mail/missed-messages.ts: its rows leave the schedule and its
 * mail enters the outbox, in one transaction. Nothing is mailed when the rows are gone already
 * (another run took them) or the user can no longer get mail.
 */
export function doMailMissedMessages(
  ctx: MutationContext,
  cmd: MailMissedMessagesCommand,
): { mailed: number } {
  let taken = 0;
  for (const id of cmd.message_ids) if (ctx.store.missedMessages.remove(cmd.user_id, id)) taken++;
  const user = ctx.realm.user(cmd.user_id);
  if (taken === 0 || !user || user.is_active !== 1 || ctx.mail === null) return { mailed: 0 };
  let mailed = 0;
  for (const mail of cmd.mails) {
    if (enqueueMail(ctx, 'missed_messages', user.delivery_email, mail)) mailed++;
  }
  return { mailed };
}
