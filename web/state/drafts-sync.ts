/**
 * Drafts kept on the server too (the user's `enable_drafts_synchronization`, as the reference's
 * web app): another browser of the user's sees them. Register's `drafts` and the `drafts` events
 * (add, update, remove) bring the server's copies into the browser's drafts (the newer of the two
 * kept); the user's own changes go to /drafts a moment after the typing stops (POST for a new
 * one, PATCH for one the server has, DELETE for one emptied or deleted), one request at a time
 * per conversation. Bounded as the browser's drafts are (web/state/drafts.ts: MAX_DRAFTS, the
 * content as long as a message may be). Failures are not said: the draft stays in the browser,
 * and the next change tries again. Framework-free: the API and the timers are given.
 */
import { draftKey, type Draft, type DraftTo, type Drafts } from './drafts.js';
import type { Timers } from './typing.js';

/** A Draft object of the API. */
export type ServerDraft = {
  id: number;
  type: '' | 'stream' | 'private';
  to: number[];
  topic: string;
  content: string;
  /** UNIX seconds of its last edit. */
  timestamp: number;
};

export type DraftValues = Omit<ServerDraft, 'id'>;

export type DraftsEvent =
  | { type: 'drafts'; op: 'add'; drafts: ServerDraft[] }
  | { type: 'drafts'; op: 'update'; draft: ServerDraft }
  | { type: 'drafts'; op: 'remove'; draft_id: number };

export type DraftsApi = {
  create(d: DraftValues): Promise<number>;
  edit(id: number, d: DraftValues): Promise<void>;
  remove(id: number): Promise<void>;
};

/** How long after the last change a draft goes to the server. */
export const SYNC_DELAY_MS = 1000;

/** The API's Draft values for a draft of the browser's. */
export function toServer(d: Pick<Draft, 'to' | 'content' | 'updated'>): DraftValues {
  const base = { content: d.content, timestamp: Math.floor(d.updated / 1000) };
  return d.to.type === 'stream'
    ? { type: 'stream', to: [d.to.streamId], topic: d.to.topic, ...base }
    : { type: 'private', to: [...d.to.userIds], topic: '', ...base };
}

/** The conversation of a server's draft; null for one without (type ''), kept out. */
export function fromServer(d: ServerDraft, selfId: number): DraftTo | null {
  if (d.type === 'stream' && d.to.length === 1) {
    return { type: 'stream', streamId: d.to[0]!, topic: d.topic };
  }
  if (d.type === 'private') {
    return { type: 'direct', userIds: d.to.length ? [...d.to] : [selfId] };
  }
  return null;
}

export class DraftSync {
  /** The server's id of each conversation's draft. */
  private readonly ids = new Map<string, number>();
  /** Changes waiting for the typing to stop. */
  private readonly waiting = new Map<string, unknown>();
  /** Conversations with a request on its way, and those changed meanwhile. */
  private readonly busy = new Set<string>();
  private readonly again = new Map<string, DraftTo>();
  /**
   * The server's ids of drafts this browser deleted (sent, scheduled, emptied, deleted): an event
   * or a registration's snapshot still carrying one (an echo of this browser's own POST or PATCH
   * coming after the deletion, a snapshot taken before it) does not bring it back.
   */
  private readonly gone = new Set<number>();

  constructor(
    private readonly drafts: Drafts,
    private readonly api: DraftsApi,
    private readonly timers: Timers,
    private readonly selfId: number,
    /** Whether the user's setting is on (checked at each change). */
    private readonly enabled: () => boolean,
    /**
     * Whether the server would keep a draft to this conversation now (a channel the user still
     * sees): one to a channel the user was removed from stays in the browser, not refused.
     */
    private readonly mayKeep: (to: DraftTo) => boolean = () => true,
  ) {}

  /** Register's snapshot of the server's drafts (each registration's). */
  load(list: readonly ServerDraft[]): void {
    for (const d of list) this.take(d);
  }

  onEvent(e: DraftsEvent): void {
    if (e.op === 'add') for (const d of e.drafts ?? []) this.take(d);
    else if (e.op === 'update') this.take(e.draft);
    else if (e.op === 'remove') {
      for (const [key, id] of this.ids) {
        if (id !== e.draft_id) continue;
        this.ids.delete(key);
        // Not while the user is changing it here: theirs is the newer.
        if (this.waiting.has(key) || this.busy.has(key)) return;
        const d = this.drafts.all().find((x) => draftKey(x.to) === key);
        if (d) this.drafts.forget(d.to);
        return;
      }
    }
  }

  /** The server's copy of a draft: the browser's takes it unless its own is newer or changing. */
  private take(d: ServerDraft): void {
    if (this.gone.has(d.id)) return;
    const to = fromServer(d, this.selfId);
    if (!to) return;
    const key = draftKey(to);
    this.ids.set(key, d.id);
    if (this.waiting.has(key) || this.busy.has(key)) return;
    const local = this.drafts.entry(to);
    // Seconds on the server, milliseconds here: within the same second, the server's.
    if (local && Math.floor(local.updated / 1000) > d.timestamp) return;
    this.drafts.put(to, d.content, d.timestamp * 1000);
  }

  /** The user changed a conversation's draft (typed, emptied, deleted, sent). */
  changed(to: DraftTo): void {
    if (!this.enabled()) return;
    const key = draftKey(to);
    const before = this.waiting.get(key);
    if (before !== undefined) this.timers.clearTimeout(before);
    this.waiting.delete(key);
    // Gone (sent, emptied, deleted): at once, not after a pause (the page may close right after).
    if (!this.drafts.entry(to)) {
      void this.flush(key, to);
      return;
    }
    this.waiting.set(
      key,
      this.timers.setTimeout(() => {
        this.waiting.delete(key);
        void this.flush(key, to);
      }, SYNC_DELAY_MS),
    );
  }

  private async flush(key: string, to: DraftTo): Promise<void> {
    if (this.busy.has(key)) {
      this.again.set(key, to);
      return;
    }
    this.busy.add(key);
    const id = this.ids.get(key);
    const d = this.drafts.entry(to);
    try {
      if (!d) {
        if (id !== undefined) {
          this.ids.delete(key);
          this.gone.add(id);
          await this.api.remove(id);
        }
      } else if (!this.mayKeep(d.to)) {
        // Left as it is on the server (if there): the browser's copy is the newer one.
      } else if (id !== undefined) {
        await this.api.edit(id, toServer(d));
      } else {
        this.ids.set(key, await this.api.create(toServer(d)));
      }
    } catch {
      // Kept in the browser. One the server no longer has is created anew next time.
      if (id !== undefined && d) this.ids.delete(key);
    } finally {
      this.busy.delete(key);
      const next = this.again.get(key);
      if (next) {
        this.again.delete(key);
        void this.flush(key, next);
      }
    }
  }

  /** Whether anything waits to go to the server (for a page about to close). */
  get idle(): boolean {
    return this.waiting.size === 0 && this.busy.size === 0;
  }

  stop(): void {
    for (const h of this.waiting.values()) this.timers.clearTimeout(h);
    this.waiting.clear();
  }
}
