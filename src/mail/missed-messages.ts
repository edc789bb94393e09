/**
 * Missed-message mail, the batches' side (docs/mail.md "Missed messages"): one timer for the
 * server, armed at the earliest time a user's batch falls due (like the mail sender's). When it
 * fires, each due user's batch is composed here — off the realm actor: the messages still unread
 * (read ones, deleted ones and those of a user who turned the mail off or left are not mailed),
 * one mail per conversation, least recently active first, with a few earlier messages of the
 * topic for context when the user was mentioned — and handed to the realm actor
 * (`missed_messages.mail`), which takes the batch's rows and puts the mail in the outbox in one
 * transaction; the mail sender delivers it. Only the node that owns a realm mails its users.
 *
 * A mark-as-read between the composing and the actor's commit (a few milliseconds) does not stop
 * that mail. Tests move the server's clock and await `runDue()`.
 */
import type { RealmRegistry } from '../../actors/registry.js';
import type { ServerConfig } from '../config.js';
import { nowSeconds } from '../config.js';
import type { ComposedMail } from '../lib/mail.js';
import { MESSAGE_FLAG_BITS } from '../lib/message-flags.js';
import {
  CONTEXT_MESSAGES,
  CONTEXT_SECONDS,
  missedMessageMail,
  type MailedConversation,
  type MailedMessage,
} from '../lib/missed-message-mail.js';
import { EmailTrigger, MENTION_TRIGGERS } from '../lib/missed-messages.js';
import { realmUrl } from '../lib/urls.js';
import { log } from '../observability/log.js';
import { DueRunner } from './due-runner.js';
import type { RealmView } from '../queries/realm-view.js';
import type { MessageRow } from '../storage/messages.js';
import type { MissedMessageRow } from '../storage/missed-messages.js';
import type { Store } from '../storage/store.js';

/** Due users read from the store at a time. */
const BATCH = 100;

/** realm_name_in_email_notifications_policy */
const RealmNamePolicy = { AUTOMATIC: 1, ALWAYS: 2, NEVER: 3 } as const;

type Bucket = {
  conversation: MailedConversation;
  messages: MailedMessage[];
  firstMissed: MessageRow;
  maxId: number;
};

export class MissedMessageMailer {
  private readonly runner: DueRunner;

  constructor(
    private readonly config: ServerConfig,
    private readonly store: Store,
    private readonly realms: RealmRegistry,
  ) {
    this.runner = new DueRunner({
      clock: config.clock,
      nextDue: () => store.missedMessages.nextDue(),
      run: () => this.mailDue(),
      name: 'missed-message mail',
    });
  }

  private get closed(): boolean {
    return this.runner.closed;
  }

  /** Arms the timer from the schedule (batches that fell due while the server was down go now). */
  start(): void {
    this.wake();
  }

  /** Something was scheduled: a run soon (runs never overlap; wakes coalesce). */
  wake(): void {
    this.runner.wake();
  }

  /** Mails every batch due now, then arms the timer for the next. Tests await it. */
  runDue(): Promise<void> {
    return this.runner.runDue();
  }

  private async mailDue(): Promise<void> {
    const tried = new Set<number>();
    for (;;) {
      if (this.closed) return;
      const now = nowSeconds(this.config);
      const due = this.store.missedMessages
        .dueUsers(now, BATCH)
        .filter((u) => !tried.has(u.user_id) && this.realms.owns(u.realm_id));
      if (due.length === 0) return;
      for (const u of due) {
        tried.add(u.user_id);
        await this.mailUser(u.realm_id, u.user_id, now);
      }
    }
  }

  /** One user's due batch: composed here, committed by the realm actor. */
  private async mailUser(realmId: number, userId: number, now: number): Promise<void> {
    const realm = this.realms.get(realmId);
    if (!realm) return;
    const rows = this.store.missedMessages.ofUser(userId).filter((r) => r.scheduled_at <= now);
    if (rows.length === 0) return;
    let mails: ComposedMail[] = [];
    try {
      mails = this.compose(realm.view, userId, rows);
    } catch (err) {
      // A bug must not keep the batch (and the timer) coming back: it is dropped, logged.
      log.error({ err, realmId, userId }, 'composing missed-message mail failed; batch dropped');
    }
    try {
      await realm.ask('missed_messages.mail', {
        user_id: userId,
        message_ids: rows.map((r) => r.message_id),
        mails,
      });
    } catch (err) {
      // The realm is closing: the batch stays scheduled and goes after the next start.
      log.warn({ err, realmId, userId }, 'missed-message mail was not recorded');
    }
  }

  /** The batch's mail: none when the user can no longer get it or read everything meanwhile. */
  private compose(
    view: RealmView,
    userId: number,
    rows: readonly MissedMessageRow[],
  ): ComposedMail[] {
    const user = view.user(userId);
    if (!user || user.is_active !== 1 || user.is_bot === 1) return [];
    const settings = view.userSettings(userId);
    if (!settings.enable_offline_email_notifications) return [];
    const byId = new Map(rows.map((r) => [r.message_id, r]));
    const ids = [...byId.keys()];
    const flags = this.store.messages.userFlagsIn(userId, ids);
    const unread = this.store.messages
      .byIds(ids)
      .filter((m) => {
        const f = flags.get(m.id);
        return f !== undefined && (f & MESSAGE_FLAG_BITS.read) === 0;
      })
      .sort((a, b) => a.id - b.id);
    if (unread.length === 0) return [];

    const senderName = (id: number) => view.user(id)?.full_name ?? 'Unknown user';
    const mailed = (m: MessageRow, trigger: string | null): MailedMessage => ({
      id: m.id,
      sender_id: m.sender_id,
      sender_name: senderName(m.sender_id),
      content: m.content,
      rendered_content: m.rendered_content,
      trigger,
    });
    const buckets = new Map<string, Bucket>();
    for (const m of unread) {
      const key =
        m.stream_id !== null ? `c:${m.stream_id}:${m.topic.toLowerCase()}` : `d:${m.dm_group_id}`;
      let b = buckets.get(key);
      if (!b) {
        b = {
          conversation: this.conversation(view, userId, m),
          messages: [],
          firstMissed: m,
          maxId: 0,
        };
        buckets.set(key, b);
      }
      b.messages.push(mailed(m, byId.get(m.id)!.trigger));
      b.maxId = Math.max(b.maxId, m.id);
    }

    const realmRow = view.row;
    const realm = { name: realmRow.name, url: realmUrl(this.config, realmRow.string_id) };
    const contentHiddenBy = !view.settings.message_content_allowed_in_email_notifications
      ? 'realm'
      : !settings.message_content_in_email_notifications
        ? 'user'
        : null;
    const policy = settings.realm_name_in_email_notifications_policy;
    const realmInSubject =
      policy === RealmNamePolicy.ALWAYS ||
      (policy === RealmNamePolicy.AUTOMATIC &&
        this.store.missedMessages.accountsOf(user.delivery_email) > 1);

    const mails: ComposedMail[] = [];
    for (const b of [...buckets.values()].sort((x, y) => x.maxId - y.maxId)) {
      const first = b.firstMissed;
      // A mention in a channel comes with what was said just before it in the topic.
      if (first.stream_id !== null && b.messages.some((m) => MENTION_TRIGGERS.has(m.trigger!))) {
        const have = new Set(b.messages.map((m) => m.id));
        const context = this.store.missedMessages
          .topicContext(
            userId,
            first.stream_id,
            first.topic,
            first.id,
            first.date_sent - CONTEXT_SECONDS,
            CONTEXT_MESSAGES,
          )
          .filter((m) => !have.has(m.id))
          .map((m) => mailed(m, null));
        b.messages = [...context, ...b.messages].sort((x, y) => x.id - y.id);
      }
      mails.push(
        missedMessageMail({
          realm,
          conversation: b.conversation,
          messages: b.messages,
          realmInSubject,
          contentHiddenBy,
          mentionedGroupName: this.mentionedGroupName(view, b, byId),
        }),
      );
    }
    return mails;
  }

  private conversation(view: RealmView, userId: number, m: MessageRow): MailedConversation {
    if (m.stream_id !== null) {
      const ch = view.channels.byId(m.stream_id);
      return {
        kind: 'channel',
        channel_id: m.stream_id,
        channel_name: ch?.name ?? 'unknown channel',
        topic: m.topic,
      };
    }
    const members = this.store.messages.dmGroupMembers(m.dm_group_id!);
    const others = members
      .filter((id) => id !== userId)
      .map((id) => ({ id, name: view.user(id)?.full_name ?? 'Unknown user' }));
    return { kind: 'direct', others };
  }

  /**
   * The group named as the reason: when every mention of the user in the conversation came
   * through a group, the smallest of those groups (get_mentioned_user_group).
   */
  private mentionedGroupName(
    view: RealmView,
    b: Bucket,
    rows: ReadonlyMap<number, MissedMessageRow>,
  ): string | null {
    let best: { name: string; size: number } | null = null;
    for (const m of b.messages) {
      const row = rows.get(m.id);
      if (!row || row.trigger !== EmailTrigger.MENTION) continue;
      if (row.mentioned_user_group_id === null) return null;
      const g = view.group(row.mentioned_user_group_id);
      if (!g) continue;
      const size = view.recursiveMembers(g.id).size;
      if (best === null || size < best.size) best = { name: g.name, size };
    }
    return best?.name ?? null;
  }

  /** Stops (before the realms close). */
  async close(): Promise<void> {
    this.runner.stop();
    await this.runner.drained();
  }
}
