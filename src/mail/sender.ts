/**
 * Hands the outbox's mail to the SMTP server (SMTP_URL) with nodemailer, off every request and
 * off the realm actors: one timer for the server, armed at the earliest time a mail falls due
 * (like actors/scheduled-delivery.ts), at most `concurrency` deliveries at once over a pool of
 * SMTP connections, each bounded in time. The realm actor only records each outcome
 * (`mail.outcome`), so a cluster's copies agree on what is still to send, and only the node that
 * owns a realm sends its mail.
 *
 * - Accepted by the SMTP server: the mail leaves the outbox.
 * - Refused for good (a 5xx reply: no such mailbox, message refused) or failed `maxAttempts`
 *   times: dropped, with a log line naming the realm, the kind and the error (never the body).
 * - Any other failure (no connection, a timeout, a 4xx reply): tried again after a back-off that
 *   doubles from `retryBaseSeconds` up to `retryMaxSeconds`.
 * - A mail written by a change wakes the sender after the commit; the timer covers retries and
 *   mail left by an earlier process (delivery is at least once: a crash between the SMTP server's
 *   acceptance and the record of it sends that mail again).
 *
 * Tests move the server's clock and await `runDue()` instead of waiting for the timer.
 */
import type Nodemailer from 'nodemailer';
import type { RealmRegistry } from '../../actors/registry.js';
import type { ServerConfig } from '../config.js';
import { nowSeconds } from '../config.js';
import { log } from '../observability/log.js';
import { DueRunner } from './due-runner.js';
import type { MailFigures } from '../observability/metrics.js';
import type { OutboxRow } from '../storage/mail.js';
import type { Store } from '../storage/store.js';

/** What a transport needs to do: nodemailer's, or a test's. */
export interface MailTransport {
  sendMail(mail: {
    from: string;
    to: string;
    subject: string;
    text: string;
    html: string;
  }): Promise<unknown>;
  close(): void;
}

/** The sender address: MAIL_FROM, or noreply@ the external host's name. */
export function senderAddress(config: Pick<ServerConfig, 'mailFrom' | 'externalHost'>): string {
  if (config.mailFrom !== null) return config.mailFrom;
  const host = config.externalHost.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return `noreply@${host.includes('.') ? host : `${host}.invalid`}`;
}

/**
 * nodemailer is loaded by the first server started with SMTP_URL (loadSmtpTransport), not when the
 * server is imported (~40 modules, ~60 ms of CPU at each process's start): a process that sends
 * no mail never loads it. A missing package still stops the import of the server with the same
 * ERR_MODULE_NOT_FOUND as the static import did (it is resolved here, not loaded; on Node 20.6 and
 * later: before, import.meta.resolve needs a flag, and the start with SMTP_URL fails).
 */
const NODEMAILER_URL = import.meta.resolve?.('nodemailer') ?? 'nodemailer';

let nodemailerLoading: Promise<typeof Nodemailer> | null = null;

/**
 * The SMTP transport for SMTP_URL (a pool), nodemailer loaded first if it is not yet. The server
 * awaits it as it starts (before it opens the store), so a module that fails to load fails the
 * start, as it did when it was imported with the server.
 */
export async function loadSmtpTransport(config: ServerConfig): Promise<() => MailTransport> {
  nodemailerLoading ??= import(NODEMAILER_URL).then(
    (m: { default: typeof Nodemailer }) => m.default,
  );
  const nodemailer = await nodemailerLoading;
  return () => smtpTransport(nodemailer, config);
}

function smtpTransport(nodemailer: typeof Nodemailer, config: ServerConfig): MailTransport {
  const limits = config.mail;
  return nodemailer.createTransport({
    url: config.smtpUrl ?? '',
    pool: true,
    maxConnections: limits.concurrency,
    connectionTimeout: limits.connectTimeoutMs,
    greetingTimeout: limits.connectTimeoutMs,
    socketTimeout: limits.socketTimeoutMs,
  });
}

/** An error's message and SMTP reply code, whatever threw it. */
function failure(err: unknown): { message: string; permanent: boolean } {
  const e = err as { message?: unknown; responseCode?: unknown };
  const code = typeof e.responseCode === 'number' ? e.responseCode : null;
  const message = typeof e.message === 'string' ? e.message : String(err);
  return { message, permanent: code !== null && code >= 500 && code < 600 };
}

export class MailSender {
  private readonly transport: MailTransport;
  private readonly runner: DueRunner;
  private readonly counts = { sent: 0, retried: 0, dropped: 0 };
  private readonly from: string;

  constructor(
    private readonly config: ServerConfig,
    private readonly store: Store,
    private readonly realms: RealmRegistry,
    transport: MailTransport,
  ) {
    this.transport = transport;
    this.from = senderAddress(config);
    this.runner = new DueRunner({
      clock: config.clock,
      nextDue: () => store.mail.nextDue(),
      run: () => this.deliverDue(),
      name: 'the mail sender',
    });
  }

  private get closed(): boolean {
    return this.runner.closed;
  }

  /** Arms the timer from the outbox (mail left by an earlier process goes now). */
  start(): void {
    this.wake();
  }

  /** Something was written to the outbox: a run soon (runs never overlap; wakes coalesce). */
  wake(): void {
    this.runner.wake();
  }

  /** Delivers every mail due now, then arms the timer for the next. Tests await it. */
  runDue(): Promise<void> {
    return this.runner.runDue();
  }

  private async deliverDue(): Promise<void> {
    const limit = this.config.mail.concurrency;
    const tried = new Set<number>();
    for (;;) {
      if (this.closed) return;
      const now = nowSeconds(this.config);
      // Mail this node sends (its realms'), not tried yet in this run, a few at a time.
      const batch = this.store.mail
        .due(now, 100)
        .filter((row) => !tried.has(row.id) && this.realms.owns(row.realm_id))
        .slice(0, limit);
      if (batch.length === 0) return;
      for (const row of batch) tried.add(row.id);
      await Promise.all(batch.map((row) => this.deliver(row)));
    }
  }

  private async deliver(row: OutboxRow): Promise<void> {
    const realm = this.realms.get(row.realm_id);
    if (!realm) return;
    let outcome:
      | { outcome: 'sent' }
      | { outcome: 'dropped' }
      | { outcome: 'retry'; attempts: number; next_attempt_at: number; error: string };
    try {
      await this.transport.sendMail({
        from: this.from,
        to: row.recipient,
        subject: row.subject,
        text: row.text_body,
        html: row.html_body,
      });
      outcome = { outcome: 'sent' };
      this.counts.sent++;
    } catch (err) {
      const { message, permanent } = failure(err);
      const attempts = row.attempts + 1;
      const limits = this.config.mail;
      if (permanent || attempts >= limits.maxAttempts) {
        log.error(
          { realmId: row.realm_id, mailId: row.id, kind: row.kind, attempts, error: message },
          permanent
            ? 'mail dropped: the SMTP server refused it'
            : 'mail dropped: too many failures',
        );
        outcome = { outcome: 'dropped' };
        this.counts.dropped++;
      } else {
        const wait = Math.min(
          limits.retryMaxSeconds,
          limits.retryBaseSeconds * 2 ** (attempts - 1),
        );
        log.warn(
          { realmId: row.realm_id, mailId: row.id, kind: row.kind, attempts, error: message },
          'mail not delivered; will try again',
        );
        outcome = {
          outcome: 'retry',
          attempts,
          next_attempt_at: nowSeconds(this.config) + wait,
          error: message,
        };
        this.counts.retried++;
      }
    }
    try {
      await realm.ask('mail.outcome', { id: row.id, ...outcome });
    } catch (err) {
      // The realm is closing: the mail stays in the outbox and is looked at again at the next
      // start (a mail the SMTP server took is then sent twice, never lost).
      log.warn({ err, realmId: row.realm_id, mailId: row.id }, 'a mail outcome was not recorded');
    }
  }

  /** For /metrics: what waits, and what happened since the start. */
  figures(): MailFigures {
    const oldest = this.store.mail.oldest();
    return {
      waiting: this.store.mail.count(),
      missedWaiting: this.store.missedMessages.count(),
      oldestSeconds: oldest === null ? 0 : Math.max(0, nowSeconds(this.config) - oldest),
      ...this.counts,
    };
  }

  /** Stops (before the realms close, so that outcomes are recorded). */
  async close(): Promise<void> {
    this.runner.stop();
    // Closing the pool fails the deliveries under way (recorded as attempts, tried again later)
    // rather than holding the shutdown for an SMTP server's time limit.
    this.transport.close();
    await this.runner.drained();
  }
}
