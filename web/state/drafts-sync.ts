/**
 * Drafts kept on the server too (the user's `enable_drafts_synchronization`, as the reference's
 * web app): another browser of the user's sees them. Register's `drafts` and the `drafts` events
 * (add, update, remove) bring the server's copies into the browser's drafts (the newer of the two
 * kept); the user's own changes go to /drafts a moment after the typing stops (POST for a new
 * one, PATCH for one the server has, DELETE for one emptied or deleted), one request at a time
 * per conversation. Bounded as the browser's drafts are (web/state/drafts.ts: MAX_DRAFTS, the
 * content as long as a message may be). Failures are not said: a save's draft stays in the
 * browser, and the next change tries again; a deletion is tried again by itself, after a pause
 * doubled each time up to REMOVE_RETRY_MAX_MS while the page lives, at once at each
 * registration, and at the next load (the ids kept beside the drafts in the browser's storage):
 * meanwhile the server's copy (a registration's snapshot, an event) does not bring the draft back. A deletion the server refuses
 * for good (a 4xx: no such draft, synchronization turned off, which deletes them all) is done.
 * Framework-free: the API and the timers are given.
 */
import { ApiError } from '../../src/client/api.js';
import { draftKey, MAX_DRAFTS, type Draft, type DraftTo, type Drafts } from './drafts.js';
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
/** A deletion that failed is tried again after this, doubled at each failure up to the max. */
export const REMOVE_RETRY_MS = 2000;
export const REMOVE_RETRY_MAX_MS = 60_000;
/** The name of the deletions not yet taken, beside the drafts in storage (Drafts.aside). */
export const REMOVING = 'removing';

/**
 * Whether the server refused a deletion for good: an answer of 4xx (the draft is not there, the
 * user's synchronization is off), not a busy or failing server (429, 5xx), not a session to log
 * in again (401), not a request that got no answer.
 */
function refusedForGood(e: unknown): boolean {
  return (
    e instanceof ApiError &&
    e.status >= 400 &&
    e.status < 500 &&
    e.status !== 401 &&
    e.status !== 408 &&
    e.status !== 429
  );
}

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
  /**
   * Deletions the server has not taken yet (by its ids, the oldest first; kept in storage): the
   * pause before the next try, its timer, and whether a request is on its way.
   */
  private readonly removing = new Map<
    number,
    { delay: number; timer: unknown; sending: boolean }
  >();
  /** Stopped (logged out): a deletion failing waits for the next registration (load). */
  private stopped = false;

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
  ) {
    // Deletions an earlier page left to do: tried once the server's snapshot is in (load).
    const kept = drafts.aside(REMOVING);
    if (Array.isArray(kept)) {
      for (const id of kept) {
        if (!Number.isSafeInteger(id)) continue;
        this.gone.add(id as number);
        this.removing.set(id as number, { delay: REMOVE_RETRY_MS, timer: null, sending: false });
      }
    }
  }

  /**
   * Register's snapshot of the server's drafts (each registration's). A deletion not yet taken is
   * tried again at once (the server answers again), whether or not the snapshot has the draft:
   * one created after the snapshot was taken is not in it (a 404 ends one the server has not).
   */
  load(list: readonly ServerDraft[]): void {
    this.stopped = false;
    for (const [id, r] of this.removing) {
      if (r.sending) continue;
      if (r.timer !== null) this.timers.clearTimeout(r.timer);
      r.delay = REMOVE_RETRY_MS;
      void this.sendRemove(id);
    }
    for (const d of list) this.take(d);
  }

  onEvent(e: DraftsEvent): void {
    if (e.op === 'add') for (const d of e.drafts ?? []) this.take(d);
    else if (e.op === 'update') this.take(e.draft);
    else if (e.op === 'remove') {
      // Ours, taken (its answer may have been lost on the way).
      if (this.removing.has(e.draft_id)) this.removed(e.draft_id);
      for (const [key, id] of this.ids) {
        if (id !== e.draft_id) continue;
        this.ids.delete(key);
        // Not while the user is changing it here: theirs is the newer.
        if (this.waiting.has(key) || this.busy.has(key)) return;
        const d = this.drafts.byKey(key);
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
          this.removing.set(id, { delay: REMOVE_RETRY_MS, timer: null, sending: false });
          this.keepRemoving();
          await this.sendRemove(id);
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

  /** A deletion sent (again); failing, tried again after its pause, unless refused for good. */
  private async sendRemove(id: number): Promise<void> {
    const r = this.removing.get(id);
    if (!r || r.sending) return;
    r.timer = null;
    r.sending = true;
    try {
      await this.api.remove(id);
      this.removed(id);
    } catch (e) {
      r.sending = false;
      if (this.removing.get(id) !== r) return;
      if (refusedForGood(e) || !this.enabled()) {
        this.removed(id);
        return;
      }
      if (this.stopped) return;
      const asked = e instanceof ApiError && e.retryAfter !== null ? e.retryAfter * 1000 : 0;
      const wait = Math.min(Math.max(r.delay, asked), REMOVE_RETRY_MAX_MS);
      r.delay = Math.min(r.delay * 2, REMOVE_RETRY_MAX_MS);
      r.timer = this.timers.setTimeout(() => void this.sendRemove(id), wait);
    }
  }

  /** A deletion the server took (or has no draft for): nothing more to do. */
  private removed(id: number): void {
    const r = this.removing.get(id);
    if (!r) return;
    if (r.timer !== null) this.timers.clearTimeout(r.timer);
    this.removing.delete(id);
    this.keepRemoving();
  }

  /** The deletions not yet taken, in storage for the next load (the newest MAX_DRAFTS). */
  private keepRemoving(): void {
    const ids = [...this.removing.keys()].slice(-MAX_DRAFTS);
    this.drafts.setAside(REMOVING, ids.length ? ids : null);
  }

  /** Deletions the server has not taken yet (their ids). */
  get unremoved(): number[] {
    return [...this.removing.keys()];
  }

  /** Whether anything waits to go to the server (for a page about to close). */
  get idle(): boolean {
    return this.waiting.size === 0 && this.busy.size === 0;
  }

  /** No more timers (the deletions not yet taken stay in storage, for the next load). */
  stop(): void {
    this.stopped = true;
    for (const h of this.waiting.values()) this.timers.clearTimeout(h);
    this.waiting.clear();
    for (const r of this.removing.values()) {
      if (r.timer !== null) this.timers.clearTimeout(r.timer);
      r.timer = null;
    }
  }
}
