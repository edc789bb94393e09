/**
 * Typing notifications, both ways, with the periods register announces (spec: POST /typing):
 *
 * - `TypingSender`: while the user types in a conversation, `start` is sent at once and again
 *   every `server_typing_started_wait_period_milliseconds`; `stop` after
 *   `server_typing_stopped_wait_period_milliseconds` without typing, when the message is sent or
 *   the compose box is emptied, or when the user switches conversation. Nothing is sent to a
 *   conversation `may` refuses (a channel the user may not post in: the server answers 400).
 * - `TypingTracker`: who is typing where, from `typing` events; an entry lapses after
 *   `server_typing_started_expiry_period_milliseconds` without a renewed `start`.
 *
 * Time and timers are injected; nothing runs while nobody types.
 */
import { signal } from '@preact/signals-core';

export type Periods = { startedWaitMs: number; stoppedWaitMs: number; startedExpiryMs: number };

export const DEFAULT_PERIODS: Periods = {
  startedWaitMs: 10_000,
  stoppedWaitMs: 5_000,
  startedExpiryMs: 15_000,
};

export type Timers = {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
};

/** A conversation as POST /typing takes it. */
export type TypingTo =
  { type: 'direct'; to: number[] } | { type: 'stream'; stream_id: number; topic: string };

export function typingKey(to: TypingTo): string {
  return to.type === 'direct'
    ? `dm:${[...to.to].sort((a, b) => a - b).join(',')}`
    : `stream:${to.stream_id}:${to.topic.toLowerCase()}`;
}

export class TypingSender {
  private current: { key: string; to: TypingTo; sentAt: number } | null = null;
  private idleTimer: unknown = null;

  constructor(
    private readonly send: (op: 'start' | 'stop', to: TypingTo) => void,
    private readonly periods: Periods,
    private readonly now: () => number,
    private readonly timers: Timers,
    private readonly may: (to: TypingTo) => boolean = () => true,
  ) {}

  /** The user typed in the compose box addressed to `to` (null: not addressed yet). */
  typed(to: TypingTo | null, empty: boolean): void {
    if (to === null || empty || !this.may(to)) {
      this.stop();
      return;
    }
    const key = typingKey(to);
    if (this.current && this.current.key !== key) this.stop();
    const t = this.now();
    if (!this.current || t - this.current.sentAt >= this.periods.startedWaitMs) {
      this.current = { key, to, sentAt: t };
      this.send('start', to);
    }
    if (this.idleTimer !== null) this.timers.clearTimeout(this.idleTimer);
    this.idleTimer = this.timers.setTimeout(() => {
      this.idleTimer = null;
      this.stop();
    }, this.periods.stoppedWaitMs);
  }

  /** Stop now (sent, emptied, closed, or another conversation). */
  stop(): void {
    if (this.idleTimer !== null) this.timers.clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (!this.current) return;
    const to = this.current.to;
    this.current = null;
    // Refused since the start (the permission taken away, the channel archived): not sent.
    if (this.may(to)) this.send('stop', to);
  }
}

export class TypingTracker {
  /** conversation key → user id → when the entry lapses. */
  private readonly typists = new Map<string, Map<number, number>>();
  private timer: unknown = null;
  readonly rev = signal(0);

  constructor(
    private readonly expiryMs: number,
    private readonly now: () => number,
    private readonly timers: Timers,
  ) {}

  start(key: string, userId: number): void {
    let m = this.typists.get(key);
    if (!m) this.typists.set(key, (m = new Map<number, number>()));
    m.set(userId, this.now() + this.expiryMs);
    this.rev.value++;
    this.arm();
  }

  stop(key: string, userId: number): void {
    const m = this.typists.get(key);
    if (!m?.delete(userId)) return;
    if (m.size === 0) this.typists.delete(key);
    this.rev.value++;
  }

  /** A message from a user ends their typing everywhere (the reference does the same). */
  stopEverywhere(userId: number): void {
    for (const key of [...this.typists.keys()]) this.stop(key, userId);
  }

  /** Who types in a conversation now, in the order they started. */
  who(key: string): number[] {
    const m = this.typists.get(key);
    if (!m) return [];
    const t = this.now();
    return [...m].filter(([, until]) => until > t).map(([id]) => id);
  }

  /** One timer, at the next lapse, only while someone types. */
  private arm(): void {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
    let next = Infinity;
    for (const m of this.typists.values())
      for (const until of m.values()) next = Math.min(next, until);
    if (next === Infinity) return;
    this.timer = this.timers.setTimeout(
      () => {
        this.timer = null;
        this.expire();
      },
      Math.max(0, next - this.now()),
    );
  }

  expire(): void {
    const t = this.now();
    let changed = false;
    for (const [key, m] of this.typists) {
      for (const [id, until] of m) {
        if (until <= t) {
          m.delete(id);
          changed = true;
        }
      }
      if (m.size === 0) this.typists.delete(key);
    }
    if (changed) this.rev.value++;
    this.arm();
  }

  clear(): void {
    this.typists.clear();
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
    this.rev.value++;
  }
}
