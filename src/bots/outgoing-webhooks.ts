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
 * - At most 4 requests at once; at most 1,000 waiting (more are dropped with a log line). The
 *   queue is in memory: calls waiting at a restart are not made.
 * - A failure (no connection, a timeout, a 5xx answer) is tried twice more; then, or at once for
 *   another failure (a 4xx, a refused address, an answer that is not JSON), the bot's owner gets
 *   a direct message from the notification bot saying what happened, as the reference's
 *   notify_bot_owner.
 */
import type { RealmRegistry, RealmRuntime } from '../../actors/registry.js';
import type { ServerConfig } from '../config.js';
import type { ServiceBotDeps, ServiceBotTrigger } from '../lib/bots.js';
import {
  normalizeContent,
  preparedContent,
  type MessageDestination,
} from '../lib/message-content.js';
import { NOTIFICATION_BOT_EMAIL } from '../lib/notices.js';
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
const MAX_WAITING = 1000;
const ATTEMPTS = 3;

type Job = {
  realmId: number;
  messageId: number;
  botId: number;
  trigger: ServiceBotTrigger['trigger'];
};

type Failure = { status: number | null; response: string | null; error: string | null };

export class OutgoingWebhooks {
  private readonly waiting: Job[] = [];
  private running = 0;
  private idle: (() => void)[] = [];
  private closed = false;
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
    return {
      dispatch: (realmId, messageId, triggers) => {
        for (const t of triggers)
          this.enqueue({ realmId, messageId, botId: t.bot_id, trigger: t.trigger });
      },
    };
  }

  private enqueue(job: Job): void {
    if (this.closed) return;
    if (this.waiting.length >= MAX_WAITING) {
      log.error(
        { realmId: job.realmId, botId: job.botId },
        'outgoing webhook dropped: the queue is full',
      );
      return;
    }
    this.waiting.push(job);
    this.pump();
  }

  private pump(): void {
    while (this.running < CONCURRENCY && this.waiting.length > 0) {
      const job = this.waiting.shift()!;
      this.running++;
      void this.run(job)
        .catch((err: unknown) => log.error({ err, botId: job.botId }, 'outgoing webhook failed'))
        .finally(() => {
          this.running--;
          this.pump();
          if (this.running === 0 && this.waiting.length === 0) {
            const fns = this.idle;
            this.idle = [];
            for (const f of fns) f();
          }
        });
    }
  }

  /** Resolves once nothing is waiting or running (tests). */
  settled(): Promise<void> {
    if (this.running === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private async run(job: Job): Promise<void> {
    const realm = this.realms.get(job.realmId);
    const bot = this.store.users.byId(job.botId);
    const message = this.store.messages.byId(job.messageId);
    if (!realm || !bot || !bot.is_active || !message) return;
    const [service] = this.store.bots.services(bot.id);
    if (!service) return;
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
        ),
        rendered_content: message.rendered_content,
      },
    };
    const body = JSON.stringify(payload);
    let failure: Failure | null = null;
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      if (this.closed) return;
      try {
        const res = await postJson(service.base_url, body, this.limits, 'ConfabOutgoingWebhook');
        if (res.status >= 200 && res.status < 300) {
          await this.reply(realm, bot, message.sender_id, job, res.body);
          return;
        }
        failure = { status: res.status, response: res.body, error: null };
        if (res.status < 500) break;
      } catch (err) {
        const e = err as Error;
        failure = { status: null, response: null, error: e.message };
        if (err instanceof ProxyFetchError && err.status < 500) break;
      }
    }
    if (failure) await this.notifyOwner(realm, bot, job, failure);
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
    const d = data as { content?: unknown; response_not_required?: unknown };
    if (d.response_not_required === true) return;
    if (typeof d.content !== 'string' || d.content.trim() === '') return;
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
    await this.send(realm, bot.id, to, d.content, 'OutgoingWebhookResponse');
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
    if (f.error !== null && f.status === null) {
      content += `\nWhen trying to send a request to the webhook service, an error occurred:\n\`\`\`\n${f.error}\n\`\`\``;
    } else {
      content += `\nThe webhook got a response with status code *${f.status ?? 0}*.`;
      if (f.error !== null) content += `\n${f.error}`;
      if (f.response)
        content += `\nThe response contains the following payload:\n\`\`\`\n${f.response.slice(0, 2000)}\n\`\`\``;
    }
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
      });
    } catch (err) {
      log.warn({ err, realmId: realm.id, senderId }, 'an outgoing webhook reply was not sent');
    }
  }

  close(): void {
    this.closed = true;
    this.waiting.length = 0;
  }
}
