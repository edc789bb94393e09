/**
 * Drafts: what the user typed and did not send, one per conversation (a channel's topic, a
 * channel before a topic was chosen, a direct-message conversation), kept in the browser's
 * storage so that they survive narrowing elsewhere and reloads. Bounded: at most MAX_DRAFTS, the
 * least recently edited dropped first, and none older than MAX_AGE_DAYS.
 */
import { signal } from '@preact/signals-core';

export type StorageLike = {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
};

export type DraftTo =
  { type: 'stream'; streamId: number; topic: string } | { type: 'direct'; userIds: number[] };

export type Draft = { to: DraftTo; content: string; updated: number };

export const MAX_DRAFTS = 100;
export const MAX_AGE_DAYS = 30;
const KEY_PREFIX = 'confab.drafts.';

export function draftKey(to: DraftTo): string {
  return to.type === 'stream'
    ? `stream:${to.streamId}:${to.topic.toLowerCase()}`
    : `dm:${[...to.userIds].sort((a, b) => a - b).join(',')}`;
}

export class Drafts {
  private drafts = new Map<string, Draft>();
  /** Messages on their way (sending), by conversation: their text. */
  private readonly inFlight = new Map<string, { content: string }>();
  private readonly storageKey: string;
  /** Bumped on every change (the Drafts view and its count follow it). */
  readonly rev = signal(0);
  /** Told of the user's own changes (not of those `put` and `forget` make): the server's copy. */
  onChange: ((to: DraftTo) => void) | null = null;

  /** `account` separates users sharing a browser (e.g. the user id and the realm). */
  constructor(
    private readonly storage: StorageLike | null,
    account: string,
    private readonly now: () => number,
  ) {
    this.storageKey = KEY_PREFIX + account;
    this.load();
  }

  private load(): void {
    let raw: string | null;
    try {
      raw = this.storage?.getItem(this.storageKey) ?? null;
    } catch {
      raw = null;
    }
    if (!raw) return;
    try {
      const list = JSON.parse(raw) as Draft[];
      const oldest = this.now() - MAX_AGE_DAYS * 86_400_000;
      for (const d of list) {
        if (d && typeof d.content === 'string' && d.updated >= oldest)
          this.drafts.set(draftKey(d.to), d);
      }
    } catch {
      // a damaged entry is dropped; the next save writes a good one
    }
  }

  private save(): void {
    const list = [...this.drafts.values()]
      .sort((a, b) => b.updated - a.updated)
      .slice(0, MAX_DRAFTS);
    this.drafts = new Map(list.map((d) => [draftKey(d.to), d]));
    this.rev.value++;
    try {
      if (list.length === 0) this.storage?.removeItem(this.storageKey);
      else this.storage?.setItem(this.storageKey, JSON.stringify(list));
    } catch {
      // storage full or forbidden: drafts live for this page only
    }
  }

  get(to: DraftTo): string {
    return this.drafts.get(draftKey(to))?.content ?? '';
  }

  /** Keeps (or, when blank, forgets) the draft of a conversation. */
  set(to: DraftTo, content: string): void {
    const key = draftKey(to);
    if (content.trim() === '') {
      if (!this.drafts.delete(key)) return;
    } else {
      const old = this.drafts.get(key);
      if (old?.content === content) return;
      this.drafts.set(key, { to, content, updated: this.now() });
    }
    this.save();
    this.onChange?.(to);
  }

  delete(to: DraftTo): void {
    if (!this.drafts.delete(draftKey(to))) return;
    this.save();
    this.onChange?.(to);
  }

  /** The draft of a conversation, with when it was last edited. */
  entry(to: DraftTo): Draft | undefined {
    return this.drafts.get(draftKey(to));
  }

  /** A draft as another browser left it (the server's copy): `onChange` is not told. */
  put(to: DraftTo, content: string, updated: number): void {
    if (content.trim() === '') return this.forget(to);
    const old = this.drafts.get(draftKey(to));
    if (old?.content === content) return;
    this.drafts.set(draftKey(to), { to, content, updated });
    this.save();
  }

  /** A draft deleted elsewhere (another browser, through the server): `onChange` is not told. */
  forget(to: DraftTo): void {
    if (this.drafts.delete(draftKey(to))) this.save();
  }

  /**
   * A value kept beside this account's drafts, in the same storage (DraftSync's deletions the
   * server has not taken yet); undefined when none or unreadable.
   */
  aside(name: string): unknown {
    try {
      const raw = this.storage?.getItem(`${this.storageKey}.${name}`);
      return raw ? (JSON.parse(raw) as unknown) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Keeps (or, null, removes) a value beside this account's drafts. */
  setAside(name: string, value: unknown): void {
    try {
      if (value === null) this.storage?.removeItem(`${this.storageKey}.${name}`);
      else this.storage?.setItem(`${this.storageKey}.${name}`, JSON.stringify(value));
    } catch {
      // storage full or forbidden: it lasts as long as the page
    }
  }

  /**
   * A message being sent, `content` to `to`: no draft while it is on its way, as the reference's
   * (its draft kept, marked as sending, counted and listed by nothing): all() and size leave out
   * the conversation's draft while it holds that text (typed over meanwhile, it is a draft
   * again). The draft is kept for a send that fails; the returned function ends the sending
   * (after a success, delete the draft first).
   */
  sending(to: DraftTo, content: string): () => void {
    const key = draftKey(to);
    const mine = { content };
    this.inFlight.set(key, mine);
    this.rev.value++;
    return () => {
      // Not another send's, to the same conversation since.
      if (this.inFlight.get(key) !== mine) return;
      this.inFlight.delete(key);
      this.rev.value++;
    };
  }

  /** The drafts, the most recently edited first (not those of messages being sent). */
  all(): Draft[] {
    return [...this.drafts.entries()]
      .filter(([key, d]) => this.inFlight.get(key)?.content !== d.content)
      .map(([, d]) => d)
      .sort((a, b) => b.updated - a.updated);
  }

  /** The draft of a conversation by its key (draftKey), being sent or not. */
  byKey(key: string): Draft | undefined {
    return this.drafts.get(key);
  }

  get size(): number {
    return this.inFlight.size === 0 ? this.drafts.size : this.all().length;
  }
}
