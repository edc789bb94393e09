/**
 * The user's scheduled messages as register lists them and the `scheduled_messages` events keep
 * them (the controller's, part of the first load), and the sidebar entry's count. The send times
 * and the compose box's choices (scheduled.ts) load with the compose box.
 */
import { signal } from '@preact/signals-core';

export type ScheduledMessage = {
  scheduled_message_id: number;
  type: 'stream' | 'private';
  /** The channel's id, or the direct message's recipients. */
  to: number | number[];
  topic?: string;
  content: string;
  rendered_content: string;
  /** UNIX seconds. */
  scheduled_delivery_timestamp: number;
  /** The server tried to send it at its time and could not. */
  failed: boolean;
};

export type ScheduledEvent =
  | { type: 'scheduled_messages'; op: 'add'; scheduled_messages: ScheduledMessage[] }
  | { type: 'scheduled_messages'; op: 'update'; scheduled_message: ScheduledMessage }
  | { type: 'scheduled_messages'; op: 'remove'; scheduled_message_id: number };

export class ScheduledMessages {
  private byId = new Map<number, ScheduledMessage>();
  /** Bumped on every change (what draws the list and the count follows it). */
  readonly rev = signal(0);

  constructor(list: readonly ScheduledMessage[] = []) {
    this.reset(list);
  }

  /** The snapshot of a (new) registration. */
  reset(list: readonly ScheduledMessage[]): void {
    this.byId = new Map(list.map((m) => [m.scheduled_message_id, m]));
    this.rev.value++;
  }

  /** Applies a `scheduled_messages` event; whether it changed anything. */
  apply(e: ScheduledEvent): boolean {
    if (e.op === 'add') {
      if (!Array.isArray(e.scheduled_messages)) return false;
      for (const m of e.scheduled_messages) this.byId.set(m.scheduled_message_id, m);
    } else if (e.op === 'update') {
      const m = e.scheduled_message;
      // An update may carry only what changed: it is laid over what is known.
      const old = this.byId.get(m.scheduled_message_id);
      this.byId.set(m.scheduled_message_id, { ...old, ...m });
    } else if (e.op === 'remove') {
      if (!this.byId.delete(e.scheduled_message_id)) return false;
    } else {
      return false;
    }
    this.rev.value++;
    return true;
  }

  get(id: number): ScheduledMessage | undefined {
    return this.byId.get(id);
  }

  /** Soonest first; at the same time, the one scheduled first. */
  all(): ScheduledMessage[] {
    return [...this.byId.values()].sort(
      (a, b) =>
        a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp ||
        a.scheduled_message_id - b.scheduled_message_id,
    );
  }

  get size(): number {
    return this.byId.size;
  }
}

/** The count a sidebar entry shows: none at zero. */
export function sidebarCount(n: number): number | null {
  return n > 0 ? n : null;
}
