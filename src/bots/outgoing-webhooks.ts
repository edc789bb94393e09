/**
 * Outgoing webhooks (docs/integrations.md "Outgoing webhooks"): when an outgoing-webhook bot is
 * mentioned in a channel message or sent a direct message, the realm actor hands the committed
 * message here (after the commit, off every request); the reference's payload
 * (`/zulip-outgoing-webhook` in the OpenAPI description) is POSTed to the bot's URL, and the
 * answer's `content` posted as the bot's reply: in the same topic, or to the same direct message
 * conversation. Reference: zerver/lib/outgoing_webhook.py, zerver/worker/outgoing_webhooks.py.
 *
 * - The request goes through the image proxy's protections (src/media/safe-fetch.ts postJson):
 *   no private, loopback or link-local address unless OUTGOING_WEBHOOK_ALLOW_PRIVATE says so,
 *   every redirect checked, the answer at most 64 KiB, ten seconds in all.
 * - Durable: the send writes each call to `outgoing_webhook_calls` (migration 0024) in its own
 *   transaction; a call leaves it (through the realm actor, so a cluster's copies agree) once it
 *   is done — replied to, nothing to do, or given up with the owner's notice. Calls left at a stop
 *   or crash are made after the next start (at least once: a crash after the call and before its
 *   record makes it again), unless they waited more than MAX_AGE_SECONDS (dropped with a log line).
 * - At most 4 requests at once, at most 2 of them to one bot: a slow or hanging endpoint (up to
 *   three ten-second tries per call) delays its own calls, not other bots'. At most 1,000
 *   waiting (more are dropped with a log line). Only the node that owns a realm calls for it.
 * - A failure (no connection, a timeout, a 5xx answer) is tried twice more; then, or at once for
 *   another failure (a 4xx, a refused address, an answer that is not JSON), the bot's owner gets
 *   a direct message from the notification bot saying what happened, as the reference's
 *   notify_bot_owner.
 */
import type { RealmRegistry, RealmRuntime } from '../../actors/registry.js';
import { nowSeconds, type ServerConfig } from '../config.js';
import type { ServiceBotDeps, ServiceBotTrigger } from '../lib/bots.js';
import {
  normalizeContent,
  preparedContent,
  type MessageDestination,
} from '../lib/message-content.js';
import { JsonableError } from '../lib/errors.js';
import { NOTIFICATION_BOT_EMAIL } from '../lib/notices.js';
import { parseWidgetContent, type WidgetContent } from '../lib/widgets.js';
import { ProxyFetchError, postJson, type FetchLimits } from '../media/safe-fetch.js';
import { log } from '../observability/log.js';
import { formatMessage } from '../queries/messages.js';
import { renderContextFor, renderOptionsFor } from '../queries/render-context.js';
import type { Store } from '../storage/store.js';
import type { UserRow } from '../storage/users.js';
import type { RenderPool } from '../../workers/pool.js';

export const OUTGOING_WEBHOOK_LIMITS: Omit<FetchLimits, 'allowPrivate'> = {
  maxBytes: 64 * 1024,
  timeoutMs: 10_000,
  maxRedirects: 3,
};
const CONCURRENCY = 4;
/** Requests under way to one bot at most (the rest of CONCURRENCY stays for the others). */
export const PER_BOT = 2;
export const MAX_WAITING = 1000;
const ATTEMPTS = 3;
/** A call that waited longer than this (a long stop) is dropped rather than made late. */
export const MAX_AGE_SECONDS = 600;
/** Waiting calls read from the store at a time. */
const WINDOW = 100;
/** How soon calls of realms another node owns (or not recorded) are looked at again (ms). */
const RECHECK_MS = 5_000;

type Job = {
  realmId: number;
  messageId: number;
  botId: number;
  trigger: ServiceBotTrigger['trigger'];
  createdAt: number;
};

const keyOf = (messageId: number, botId: number) => `${messageId}:${botId}`;

/**
 * Why a call failed: its answer's status and body, a transport error; or (`refused`) the reply
 * the answer asked for was refused by the send (an invalid `widget_content`).
 */
type Failure = {
  status: number | null;
  response: string | null;
  error: string | null;
  refused?: string;
};

export class OutgoingWebhooks {
  private running = 0;
  /** Calls being made (message:bot). */
  private readonly inflight = new Set<string>();
  /** Calls being made, by bot. */
  private readonly perBot = new Map<number, number>();
  /** Calls done whose record failed (the realm was closing): left for the next start. */
  private readonly unrecorded = new Set<string>();
  private idle: (() => void)[] = [];
  private closed = false;
  private recheck: NodeJS.Timeout | null = null;
  private readonly limits: FetchLimits;

  constructor(
    private readonly config: ServerConfig,
    private readonly store: Store,
    private readonly realms: RealmRegistry,
    private readonly renderer: RenderPool,
    limits: Partial<Omit<FetchLimits, 'allowPrivate'>> = {},
  ) {
    this.limits = {
      ...OUTGOING_WEBHOOK_LIMITS,
      ...limits,
      allowPrivate: config.outgoingWebhookAllowPrivate,
    };
  }

  /** The realm actor's side (src/mutations/messages.ts). */
  get deps(): ServiceBotDeps {
    return { maxWaiting: MAX_WAITING, wake: () => this.wake() };
  }

  /** Calls left by the last run of the server are made now. */
  start(): void {
    this.wake();
  }

  /** Calls were written: as many are started as the concurrency allows. */
  wake(): void {
    if (this.closed) return;
    let skipped = false;
    while (this.running < CONCURRENCY) {
      const busy = this.inflight.size + this.unrecorded.size;
      const full = [...this.perBot].filter(([, n]) => n >= PER_BOT).map(([bot]) => bot);
      const next = this.store.outgoingWebhookCalls.oldest(WINDOW + busy, full).find((r) => {
        const key = keyOf(r.message_id, r.bot_id);
        if (this.inflight.has(key) || this.unrecorded.has(key)) return false;
        if (this.realms.owns(r.realm_id)) return true;
        skipped = true;
        return false;
      });
      if (!next) break;
      this.begin({
        realmId: next.realm_id,
        messageId: next.message_id,
        botId: next.bot_id,
        trigger: next.trigger,
        createdAt: next.created_at,
      });
    }
    if ((skipped || this.unrecorded.size > 0) && this.recheck === null && !this.closed) {
      this.recheck = setTimeout(() => {
        this.recheck = null;
        this.unrecorded.clear();
        this.wake();
      }, RECHECK_MS);
      this.recheck.unref();
    }
  }

  private begin(job: Job): void {
    const key = keyOf(job.messageId, job.botId);
    this.inflight.add(key);
    this.running++;
    this.perBot.set(job.botId, (this.perBot.get(job.botId) ?? 0) + 1);
    void this.run(job)
      .catch((err: unknown) => {
        log.error({ err, botId: job.botId }, 'outgoing webhook failed');
        return true;
      })
      .then((done) => (done && !this.closed ? this.record(job) : undefined))
      .finally(() => {
        this.inflight.delete(key);
        this.running--;
        const n = (this.perBot.get(job.botId) ?? 1) - 1;
        if (n > 0) this.perBot.set(job.botId, n);
        else this.perBot.delete(job.botId);
        this.wake();
        if (this.running === 0) {
          const fns = this.idle;
          this.idle = [];
          for (const f of fns) f();
        }
      });
  }

  /** The call is done: it leaves the queue (through the realm actor). */
  private async record(job: Job): Promise<void> {
    const realm = this.realms.get(job.realmId);
    try {
      if (!realm) throw new Error('no such realm');
      await realm.ask('outgoing_webhook.done', { message_id: job.messageId, bot_id: job.botId });
    } catch (err) {
      this.unrecorded.add(keyOf(job.messageId, job.botId));
      log.warn({ err, realmId: job.realmId, botId: job.botId }, 'outgoing webhook not recorded');
    }
  }

  /** Resolves once no call is being made (tests). */
  settled(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Makes the call; true when it is done (false: the server is stopping, it stays queued). */
  private async run(job: Job): Promise<boolean> {
    const realm = this.realms.get(job.realmId);
    const bot = this.store.users.byId(job.botId);
    const message = this.store.messages.byId(job.messageId);
    if (!realm || !bot || !bot.is_active || !message) return true;
    const [service] = this.store.bots.services(bot.id);
    if (!service) return true;
    const age = nowSeconds(this.config) - job.createdAt;
    if (age > MAX_AGE_SECONDS) {
      log.warn(
        { realmId: job.realmId, botId: bot.id, messageId: job.messageId, age },
        'outgoing webhook dropped: it waited too long',
      );
      return true;
    }
    const view = realm.view;
    const payload = {
      bot_email: bot.email,
      bot_full_name: bot.full_name,
      data: message.content,
      trigger: job.trigger,
      token: service.token,
      message: {
        ...formatMessage(
          this.store,
          view,
          message,
          { applyMarkdown: false, clientExtAvatar: false, allowEmptyTopicName: true },
          [],
          this.store.submessages.ofMessages([message.id]),
        ),
        rendered_content: message.rendered_content,
      },
    };
    const body = JSON.stringify(payload);
    let failure: Failure | null = null;
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      if (this.closed) return false;
      try {
        const res = await postJson(service.base_url, body, this.limits, 'ConfabOutgoingWebhook');
        if (this.closed) return false;
        if (res.status >= 200 && res.status < 300) {
          await this.reply(realm, bot, message.sender_id, job, res.body);
          return true;
        }
        failure = { status: res.status, response: res.body, error: null };
        if (res.status < 500) break;
      } catch (err) {
        const e = err as Error;
        failure = { status: null, response: null, error: e.message };
        if (err instanceof ProxyFetchError && err.status < 500) break;
      }
    }
    if (this.closed) return false;
    if (failure) await this.notifyOwner(realm, bot, job, failure);
    return true;
  }

  /** The answer's `content`, if any, as the bot's reply where the message was. */
  private async reply(
    realm: RealmRuntime,
    bot: UserRow,
    senderId: number,
    job: Job,
    answer: string,
  ): Promise<void> {
    if (answer.trim() === '') return;
    let data: unknown;
    try {
      data = JSON.parse(answer);
    } catch {
      await this.notifyOwner(realm, bot, job, {
        status: 200,
        response: answer,
        error: 'The response is not JSON.',
      });
      return;
    }
    if (data === null || typeof data !== 'object') return;
    const d = data as {
      content?: unknown;
      response_not_required?: unknown;
      widget_content?: unknown;
    };
    if (d.response_not_required === true) return;
    if (typeof d.content !== 'string' || d.content.trim() === '') return;
    // A widget for the reply (the reference's process_success_response): JSON text, checked as
    // POST /messages checks it; refused, the owner is told and nothing is sent.
    let widget: WidgetContent | undefined;
    if (d.widget_content !== undefined && d.widget_content !== null) {
      try {
        widget = parseWidgetContent(typeof d.widget_content === 'string' ? d.widget_content : '');
      } catch (err) {
        if (!(err instanceof JsonableError)) throw err;
        await this.notifyOwner(realm, bot, job, {
          status: 200,
          response: answer,
          error: null,
          refused: err.message,
        });
        return;
      }
    }
    const message = this.store.messages.byId(job.messageId)!;
    let to: MessageDestination;
    if (message.stream_id !== null) {
      to = { kind: 'channel', channel: message.stream_id, topic: message.topic };
    } else {
      const members = this.store.messages
        .dmGroupMembers(message.dm_group_id!)
        .filter((id) => id !== bot.id);
      to = { kind: 'direct', ids: members.length > 0 ? [...members] : [senderId] };
    }
    await this.send(realm, bot.id, to, d.content, 'OutgoingWebhookResponse', widget);
  }

  private async notifyOwner(
    realm: RealmRuntime,
    bot: UserRow,
    job: Job,
    f: Failure,
  ): Promise<void> {
    log.warn(
      { realmId: job.realmId, botId: bot.id, status: f.status, error: f.error },
      'outgoing webhook failed; the bot owner is told',
    );
    if (bot.bot_owner_id === null) return;
    const notifier = realm.view.userByEmail(NOTIFICATION_BOT_EMAIL);
    if (!notifier) return;
    const url = `${new URL('/', `${this.config.externalScheme}://${this.config.externalHost}`).href}#narrow/id/${job.messageId}`;
    let content = `[A message](${url}) to your bot @_**${bot.full_name}** triggered an outgoing webhook.`;
    // A call that got no answer has no payload to show.
    const unanswered = f.refused === undefined && f.error !== null && f.status === null;
    if (f.refused !== undefined) {
      content += `\nThe outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> ${f.refused}`;
    } else if (unanswered) {
      content += `\nWhen trying to send a request to the webhook service, an error occurred:\n\`\`\`\n${f.error}\n\`\`\``;
    } else {
      content += `\nThe webhook got a response with status code *${f.status ?? 0}*.`;
      if (f.error !== null) content += `\n${f.error}`;
    }
    if (f.response && !unanswered)
      content += `\nThe response contains the following payload:\n\`\`\`\n${f.response.slice(0, 2000)}\n\`\`\``;
    await this.send(
      realm,
      notifier.id,
      { kind: 'direct', ids: [bot.bot_owner_id] },
      content,
      'Internal',
    );
  }

  private async send(
    realm: RealmRuntime,
    senderId: number,
    to: MessageDestination,
    raw: string,
    client: string,
    widget?: WidgetContent,
  ): Promise<void> {
    const content = normalizeContent(raw);
    const r = await this.renderer.render(
      content,
      renderContextFor(this.config, this.store, realm.view),
      renderOptionsFor(this.store, realm.view, senderId, content),
    );
    try {
      await realm.ask('message.send', {
        sender_id: senderId,
        to,
        ...preparedContent(content, r),
        client,
        read_by_sender: true,
        queue_id: undefined,
        local_id: undefined,
        widget_content: widget,
      });
    } catch (err) {
      log.warn({ err, realmId: realm.id, senderId }, 'an outgoing webhook reply was not sent');
    }
  }

  /** Stops starting calls; those under way are left queued for the next start. */
  close(): void {
    this.closed = true;
    if (this.recheck !== null) clearTimeout(this.recheck);
    this.recheck = null;
  }
}
