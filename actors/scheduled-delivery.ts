/**
 * Delivery of scheduled messages: one timer for the whole server, armed at the earliest time any
 * scheduled message falls due (not a timer per message). When it fires, every due message is
 * rendered as its sender's message would be now (the realm may have changed since it was
 * scheduled), then handed to its realm actor (`scheduled_message.deliver`), which checks it again
 * and sends it through the send path, or marks it failed; the notification bot's report of a
 * failure is rendered here too, once the failure is known (`scheduled_message.report_failure`).
 * Then the timer is armed again.
 *
 * - On start, the timer is armed from the store: messages that fell due while the server was down
 *   go out at once (those more than 10 minutes late are marked failed, as the reference does).
 * - Scheduling or rescheduling a message calls `noteScheduled`, which re-arms the timer if the
 *   new time is earlier. Deleting one needs nothing: the timer finds nothing due and re-arms.
 * - Runs never overlap: `deliverDue()` queues behind a run in progress. Tests move the server's
 *   clock (ServerConfig.clock) and await `deliverDue()` instead of waiting for the timer.
 * - Time is the server's clock; a timer longer than setTimeout allows (~24.8 days) fires early,
 *   finds nothing due and re-arms.
 */
import { preparedContent } from '../src/lib/message-content.js';
import { scheduledFailureText } from '../src/lib/notices.js';
import { renderContextFor, renderOptionsFor } from '../src/queries/render-context.js';
import type { ServerConfig } from '../src/config.js';
import type { ScheduledMessageRow } from '../src/storage/scheduled-messages.js';
import type { Store } from '../src/storage/store.js';
import type { RenderPool } from '../workers/pool.js';
import { RealmClosedError } from './realm.machine.js';
import type { RealmRegistry, RealmRuntime } from './registry.js';

/** Longest delay setTimeout takes (2^31 − 1 ms). */
const MAX_TIMER_MS = 2_147_483_647;
/** Due messages read from the store at a time. */
const BATCH = 100;
/** A message still due after this many attempts in one run stops the run (it is logged). */
const MAX_ATTEMPTS = 3;

export class ScheduledDelivery {
  private timer: NodeJS.Timeout | null = null;
  /** The due time (UNIX seconds) the timer is armed for; null when nothing is waiting. */
  private armedFor: number | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly config: ServerConfig,
    private readonly store: Store,
    private readonly realms: RealmRegistry,
    private readonly renderer: RenderPool,
  ) {}

  /** Arms the timer from what is stored (due messages go out at once). */
  start(): void {
    this.arm();
  }

  /** A message was scheduled or rescheduled for `timestamp` (UNIX seconds). */
  noteScheduled(timestamp: number): void {
    if (this.closed) return;
    if (this.armedFor === null || timestamp < this.armedFor) this.arm();
  }

  /**
   * Delivers every message due now, after any run in progress; resolves with how many were
   * handled (sent, failed or found changed).
   */
  deliverDue(): Promise<number> {
    const run = this.chain.then(() => this.runOnce());
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Stops the timer and waits for a run in progress (realms must still be open). */
  async close(): Promise<void> {
    this.closed = true;
    this.clearTimer();
    await this.chain;
  }

  private now(): number {
    return Math.floor(this.config.clock() / 1000);
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = null;
  }

  private arm(): void {
    this.clearTimer();
    if (this.closed) return;
    const next = this.store.scheduledMessages.earliestDue();
    if (next === null) return;
    this.armedFor = next;
    const delay = Math.min(Math.max(0, next * 1000 - this.config.clock()), MAX_TIMER_MS);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.armedFor = null;
      this.deliverDue().catch((err) => console.error('scheduled message delivery failed', err));
    }, delay);
    // A pending delivery does not keep the process alive (shutdown saves nothing for it: the
    // store is the schedule).
    this.timer.unref();
  }

  private async runOnce(): Promise<number> {
    let handled = 0;
    const attempts = new Map<number, number>();
    try {
      for (;;) {
        if (this.closed) break;
        const rows = this.store.scheduledMessages.due(this.now(), BATCH);
        if (rows.length === 0) break;
        for (const row of rows) {
          const n = (attempts.get(row.id) ?? 0) + 1;
          if (n > MAX_ATTEMPTS) {
            console.error(
              `scheduled message ${row.id} is still due after ${MAX_ATTEMPTS} attempts`,
            );
            return handled;
          }
          attempts.set(row.id, n);
          if (!(await this.deliverOne(row))) return handled;
          handled++;
        }
      }
      return handled;
    } finally {
      this.arm();
    }
  }

  /** One due message; false when its realm no longer takes commands (shutting down). */
  private async deliverOne(row: ScheduledMessageRow): Promise<boolean> {
    const realm = this.realms.get(row.realm_id);
    if (!realm) return true;
    try {
      const context = renderContextFor(this.config, this.store, realm.view);
      const r = await this.renderer.render(
        row.content,
        context,
        renderOptionsFor(this.store, realm.view, row.sender_id, row.content),
      );
      const outcome = await realm.ask('scheduled_message.deliver', {
        scheduled_message_id: row.id,
        ...preparedContent(row.content, r),
      });
      if (outcome.outcome === 'failed' && outcome.tell) {
        await this.reportFailure(realm, row, outcome.failure_message);
      }
      return true;
    } catch (err) {
      if (err instanceof RealmClosedError) return false;
      // Not a refusal (those mark the message failed inside the mutation): a bug. The reference
      // marks the message failed with a generic message.
      console.error(`delivering scheduled message ${row.id} failed`, err);
      try {
        const failure = 'Internal server error';
        const { failed } = await realm.ask('scheduled_message.fail', {
          scheduled_message_id: row.id,
          failure_message: failure,
        });
        if (failed) await this.reportFailure(realm, row, failure);
        return true;
      } catch (err2) {
        console.error(`marking scheduled message ${row.id} failed did not work`, err2);
        return false;
      }
    }
  }

  /**
   * The notification bot's direct message telling the sender why a message was not sent,
   * rendered here like every message, after the failure decided what it says.
   */
  private async reportFailure(
    realm: RealmRuntime,
    row: ScheduledMessageRow,
    failure: string,
  ): Promise<void> {
    const text = scheduledFailureText(row.scheduled_timestamp, failure);
    const context = renderContextFor(this.config, this.store, realm.view);
    const r = await this.renderer.render(text, context, {});
    await realm.ask('scheduled_message.report_failure', {
      scheduled_message_id: row.id,
      failure_message: failure,
      notice: preparedContent(text, r),
    });
  }
}
