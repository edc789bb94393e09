/**
 * One narrow's messages: a contiguous run of message ids fetched from the server (ascending,
 * with whether it reaches the oldest and the newest message of the narrow), and the window of it
 * that the view renders. The window holds at most WINDOW_MAX messages (the DOM never holds more,
 * as the reference and Campfire keep theirs), moved by the view as one scrolls: `showOlder` and
 * `showNewer` slide it, the caller fetches more when it reaches an end that is not the narrow's.
 * The run itself is bounded too (LIST_MAX): when it grows past that, the end farther from the
 * window is dropped and is fetched again if one scrolls back there. So is what is held for a
 * fetch in flight (MAX_HELD arrivals and removals: past it the fetch is made again).
 */
import { signal } from '@preact/signals-core';
import type { Message } from '../../src/client/types.js';
import type { Narrow } from './narrow.js';

/**
 * A search result's highlighting, as the server gave it (`match_content`, `match_subject`: its
 * HTML with `<span class="highlight">` around the words found), with the content and topic it
 * was made from: it is shown only while the message still has them (an edit or a move since
 * makes it stale, and the message is shown as it is), or, for the content, the same text
 * rendered again (rehighlight).
 */
type Highlight = { content?: string; contentOf: string; subject?: string; subjectOf: string };

/** The server's HTML as its tags and its runs of text, in order. */
const PIECES = /<[^>]*>|[^<]+/g;
const HIGHLIGHT = '<span class="highlight">';

/**
 * The server's highlighting (`marked`: its HTML with highlight spans) laid over `html`, another
 * rendering of the same text (rendered again: a thumbnail made, a preview added): the same
 * characters highlighted. Null when the text is not the same (the words were edited: which of
 * them match, only the server can say, when the search is fetched again).
 */
export function rehighlight(marked: string, html: string): string | null {
  // The highlighted ranges, as offsets in the text (the text without the tags).
  const ranges: [number, number][] = [];
  let text = '';
  let start = -1;
  let depth = 0;
  for (const p of marked.match(PIECES) ?? []) {
    if (!p.startsWith('<')) text += p;
    else if (start < 0) {
      if (p === HIGHLIGHT) start = text.length;
    } else if (p.startsWith('<span')) depth++;
    else if (p === '</span>' && depth-- === 0) {
      ranges.push([start, text.length]);
      start = -1;
      depth = 0;
    }
  }
  const out: string[] = [];
  let at = 0;
  let r = 0;
  let open = false;
  for (const p of html.match(PIECES) ?? []) {
    if (p.startsWith('<')) {
      // A highlight across a tag is closed before it and opened again after it.
      out.push(...(open ? ['</span>', p, HIGHLIGHT] : [p]));
      continue;
    }
    const end = at + p.length;
    if (text.slice(at, end) !== p) return null;
    let pos = at;
    while (pos < end) {
      const range = ranges[r];
      if (!open && range && range[0] < end) {
        out.push(p.slice(pos - at, range[0] - at), HIGHLIGHT);
        pos = range[0];
        open = true;
      } else if (open && range![1] <= end) {
        out.push(p.slice(pos - at, range![1] - at), '</span>');
        pos = range![1];
        open = false;
        r++;
      } else {
        out.push(p.slice(pos - at));
        pos = end;
      }
    }
    at = end;
  }
  if (at !== text.length) return null;
  if (open) out.push('</span>');
  return out.join('');
}

/** A message fetched with its highlighting (GET /messages of a search narrow). */
export type FetchedMessage = Message & { match_content?: string; match_subject?: string };

export const WINDOW = 250;
export const WINDOW_MAX = 300;
export const STEP = 100;
export const LIST_MAX = 1500;
/**
 * Arrivals and removals held for the fetches in flight, at most (as ChatState keeps at most
 * MAX_CHANGES_KEPT changes): past that they are dropped, and the fetches that were in flight
 * are made again (their answers, made before what was dropped, are not taken).
 */
export const MAX_HELD = 1000;

export class MessageList {
  readonly narrow: Narrow;
  ids: number[] = [];
  foundOldest = false;
  foundNewest = false;
  /** The first fetch answered (until then the view shows a loading state). */
  loaded = false;
  /** The first fetch is in flight. */
  loading = false;
  /** Counts the first fetches asked for: only the answer to the last one asked is taken. */
  opens = 0;
  /**
   * Counts the runs: bumped when the run is replaced (setInitial, reset), so that a page fetched
   * to border the run before is not put against the new one.
   */
  run = 0;
  loadingOlder = false;
  loadingNewer = false;
  /**
   * Messages that arrived while a fetch that may reach the newest was in flight: the fetch's
   * answer may have been made before them, so they join the run after it if it reached the newest.
   */
  private arrivedMeanwhile: number[] = [];
  /**
   * Messages deleted or moved out of the narrow while a fetch was in flight (the first, or a page):
   * its answer may have been made before that, so they are kept out of what it brings.
   */
  private removedMeanwhile = new Set<number>();
  /**
   * Messages moved into the narrow while the first fetch was in flight: its answer may not hold
   * them, so the run it brings stays stale (fetched again next time it is shown).
   */
  private staleMeanwhile = false;
  /** How many times the held arrivals and removals were dropped (more came than MAX_HELD). */
  private holdsDropped = 0;
  /** Some were dropped since a fetch started with none in flight: a failed one leaves it stale. */
  private heldLost = false;
  /** Moves or edits made the run unreliable: fetch it again before showing it. */
  stale = false;
  /** The fetch failed (shown with a retry). */
  error: string | null = null;
  /** The rendered window, [start, end) into `ids`. */
  start = 0;
  end = 0;
  /** Bumped on every change; views subscribe to it. */
  readonly rev = signal(0);
  /** Search results' highlighting, by message id (only of messages in the run). */
  private readonly highlights = new Map<number, Highlight>();

  constructor(narrow: Narrow) {
    this.narrow = narrow;
  }

  private changed(): void {
    this.rev.value++;
  }

  get size(): number {
    return this.ids.length;
  }

  windowIds(): number[] {
    return this.ids.slice(this.start, this.end);
  }

  /** Whether the window shows the newest message of the narrow. */
  atNewest(): boolean {
    return this.foundNewest && this.end === this.ids.length;
  }

  atOldest(): boolean {
    return this.foundOldest && this.start === 0;
  }

  /** The first fetch: the run and the window around `anchor` (an id, or the newest). */
  setInitial(
    ids: readonly number[],
    foundOldest: boolean,
    foundNewest: boolean,
    anchor: number | null,
  ): void {
    const removed = this.removedMeanwhile;
    this.removedMeanwhile = new Set();
    this.ids = [...new Set(ids)].filter((id) => !removed.has(id)).sort((a, b) => a - b);
    this.run++;
    this.mergeArrived(foundNewest, true);
    this.pruneHighlights();
    this.foundOldest = foundOldest;
    this.foundNewest = foundNewest;
    this.loaded = true;
    this.stale = this.staleMeanwhile;
    this.staleMeanwhile = false;
    this.error = null;
    this.windowAround(anchor);
    this.changed();
  }

  /** Puts the window around an id (or at the newest when null or absent). */
  windowAround(anchor: number | null): void {
    const n = this.ids.length;
    let at = anchor === null ? -1 : this.indexAtOrAfter(anchor);
    if (at < 0 || at >= n) at = n - 1;
    // Most of the window after the anchor is history before it: show some context above.
    this.start = Math.max(0, Math.min(at - Math.floor(WINDOW / 3), n - WINDOW));
    this.end = Math.min(n, this.start + WINDOW);
    this.changed();
  }

  /** The index of the first id at or after `id` (ids.length if none). */
  indexAtOrAfter(id: number): number {
    let lo = 0;
    let hi = this.ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.ids[mid]! < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  has(id: number): boolean {
    const i = this.indexAtOrAfter(id);
    return this.ids[i] === id;
  }

  /** Older messages fetched (all below the run's first id). */
  prepend(ids: readonly number[], foundOldest: boolean): void {
    const first = this.ids[0] ?? Infinity;
    const older = [...ids]
      .filter((id) => id < first && !this.removedMeanwhile.has(id))
      .sort((a, b) => a - b);
    this.ids = [...older, ...this.ids];
    this.start += older.length;
    this.end += older.length;
    this.foundOldest = foundOldest;
    this.trimRun('newer');
    this.changed();
  }

  /** Newer messages fetched (all above the run's last id). */
  append(ids: readonly number[], foundNewest: boolean): void {
    const last = this.ids[this.ids.length - 1] ?? -Infinity;
    const newer = [...ids]
      .filter((id) => id > last && !this.removedMeanwhile.has(id))
      .sort((a, b) => a - b);
    this.ids = [...this.ids, ...newer];
    // A first fetch still in flight takes them too (it replaces this run when answered).
    this.mergeArrived(foundNewest, !this.loading);
    this.foundNewest = foundNewest;
    this.trimRun('older');
    this.changed();
  }

  /**
   * A new message of this narrow arrived live. It joins the run only if the run reaches the
   * newest message (otherwise it will be fetched when one scrolls there). When the window showed
   * the newest message, it grows to include it, dropping its oldest past WINDOW_MAX.
   */
  addLive(id: number): boolean {
    if (this.loading || (!this.foundNewest && this.loadingNewer)) {
      this.arrivedMeanwhile.push(id);
      this.boundHeld();
      return false;
    }
    if (!this.loaded || !this.foundNewest || this.has(id)) return false;
    const followed = this.end === this.ids.length;
    const at = this.indexAtOrAfter(id);
    this.ids.splice(at, 0, id);
    if (at < this.start) {
      this.start++;
      this.end++;
    } else if (at < this.end || followed) {
      this.end++;
    }
    if (followed && this.end - this.start > WINDOW_MAX) this.start = this.end - WINDOW_MAX;
    // Bounded either way: behind a window that follows, or ahead of one scrolled up (then the
    // newest are fetched again when one scrolls down, and later arrivals wait for that).
    this.trimRun(followed ? 'older' : 'newer');
    this.changed();
    return true;
  }

  /** Whether a fetch is in flight (the first, or a page). */
  get fetching(): boolean {
    return this.loading || this.loadingOlder || this.loadingNewer;
  }

  /** A first fetch is asked for (one may be in flight already: the later one counts). */
  startLoading(): void {
    // What fetches that ended (answered or failed) saw is not about this one's answer.
    if (!this.fetching) this.forgetHeld();
    if (!this.loading) this.staleMeanwhile = false;
    this.loading = true;
  }

  /**
   * A fetch ended without an answer (the first when `side` is null, else a page): the messages
   * held for it join the run shown as they would have live, unless another fetch still waits for
   * them (held on, or shown there otherwise). None stays held for a later answer, made after
   * their deletion perhaps.
   */
  fetchFailed(side: 'older' | 'newer' | null): void {
    if (side === null) this.loading = false;
    else if (side === 'older') this.loadingOlder = false;
    else this.loadingNewer = false;
    const arrived = this.arrivedMeanwhile;
    this.arrivedMeanwhile = [];
    for (const id of arrived) this.addLive(id);
    // Arrivals dropped from the hold would have joined the run shown: it lacks them.
    if (this.heldLost && this.loaded) this.stale = true;
    this.changed();
  }

  /** Where the holds are when a fetch starts (for heldLostSince). */
  holdMark(): number {
    return this.holdsDropped;
  }

  /**
   * Whether the held arrivals and removals were dropped since `mark`: a fetch started there may
   * bring messages deleted meanwhile, or lack some that arrived, and is made again.
   */
  heldLostSince(mark: number): boolean {
    return this.holdsDropped > mark;
  }

  private forgetHeld(): void {
    this.removedMeanwhile = new Set();
    this.heldLost = false;
  }

  /** Keeps the holds within MAX_HELD: past it, all are dropped (the fetches are made again). */
  private boundHeld(): void {
    if (this.arrivedMeanwhile.length + this.removedMeanwhile.size <= MAX_HELD) return;
    this.arrivedMeanwhile = [];
    this.removedMeanwhile = new Set();
    this.holdsDropped++;
    this.heldLost = true;
  }

  /** A page is asked for, above or below the run. */
  startPage(side: 'older' | 'newer'): void {
    if (!this.fetching) this.forgetHeld();
    if (side === 'older') this.loadingOlder = true;
    else this.loadingNewer = true;
  }

  /**
   * Messages moved into this narrow: the run may lack them, so it is fetched again next time
   * (and a first fetch in flight brings a run that is stale too).
   */
  markStale(): void {
    this.stale = true;
    if (this.loading) this.staleMeanwhile = true;
    this.changed();
  }

  /** Messages deleted, or moved out of this narrow. */
  remove(ids: readonly number[]): boolean {
    const gone = new Set(ids);
    if (this.fetching) {
      for (const id of ids) this.removedMeanwhile.add(id);
      this.arrivedMeanwhile = this.arrivedMeanwhile.filter((id) => !gone.has(id));
      this.boundHeld();
    }
    if (!this.ids.some((id) => gone.has(id))) return false;
    let start = this.start;
    let end = this.end;
    const kept: number[] = [];
    this.ids.forEach((id, i) => {
      if (!gone.has(id)) {
        kept.push(id);
        return;
      }
      if (i < this.start) start--;
      if (i < this.end) end--;
    });
    this.ids = kept;
    this.pruneHighlights();
    this.start = Math.max(0, start);
    this.end = Math.max(this.start, end);
    this.changed();
    return true;
  }

  /**
   * Keeps the highlighting the server sent with fetched messages (a search narrow's), for the
   * messages the run holds.
   */
  keepHighlights(messages: readonly FetchedMessage[]): void {
    for (const m of messages) {
      if (m.match_content === undefined && m.match_subject === undefined) continue;
      if (!this.has(m.id)) continue;
      this.highlights.set(m.id, {
        content: m.match_content,
        contentOf: m.content,
        subject: m.match_subject,
        subjectOf: m.subject,
      });
    }
  }

  /**
   * The highlighted HTML of a message's content and topic (the topic's HTML-escaped), each
   * undefined when there is none or the message changed since it was made.
   */
  highlighted(m: Message): { content?: string; subject?: string } {
    const h = this.highlights.get(m.id);
    if (!h) return {};
    if (h.content !== undefined && h.contentOf !== m.content) {
      // Rendered again: the words as they were keep their highlighting (laid over the new
      // HTML, once); words edited lose it.
      h.content = rehighlight(h.content, m.content) ?? undefined;
      h.contentOf = m.content;
    }
    return {
      content: h.contentOf === m.content ? h.content : undefined,
      subject: h.subjectOf === m.subject ? h.subject : undefined,
    };
  }

  /** Forgets the highlighting of messages the run no longer holds. */
  private pruneHighlights(): void {
    if (this.highlights.size === 0) return;
    for (const id of this.highlights.keys()) if (!this.has(id)) this.highlights.delete(id);
  }

  /** Whether the window can move up without fetching (the run has more above it). */
  canShowOlder(): boolean {
    return this.start > 0;
  }

  canShowNewer(): boolean {
    return this.end < this.ids.length;
  }

  /** Slides the window up by up to `n` messages; its bottom follows past WINDOW_MAX. */
  showOlder(n = STEP): number {
    const moved = Math.min(n, this.start);
    if (moved === 0) return 0;
    this.start -= moved;
    if (this.end - this.start > WINDOW_MAX) this.end = this.start + WINDOW_MAX;
    this.changed();
    return moved;
  }

  showNewer(n = STEP): number {
    const moved = Math.min(n, this.ids.length - this.end);
    if (moved === 0) return 0;
    this.end += moved;
    if (this.end - this.start > WINDOW_MAX) this.start = this.end - WINDOW_MAX;
    this.changed();
    return moved;
  }

  /** Puts the window at the newest messages the run holds. */
  showNewest(): void {
    this.end = this.ids.length;
    this.start = Math.max(0, this.end - WINDOW);
    this.changed();
  }

  /**
   * Takes the messages that arrived during a fetch, when the fetch reached the newest (`done`:
   * no other fetch waits for them).
   */
  private mergeArrived(reachedNewest: boolean, done: boolean): void {
    const arrived = this.arrivedMeanwhile;
    if (done) this.arrivedMeanwhile = [];
    if (!reachedNewest || arrived.length === 0) return;
    const last = this.ids[this.ids.length - 1] ?? -Infinity;
    const later = arrived.filter((id) => id > last).sort((a, b) => a - b);
    this.ids = [...this.ids, ...new Set(later)];
  }

  /** Keeps the run within LIST_MAX by dropping from the side away from the window. */
  private trimRun(side: 'older' | 'newer'): void {
    const over = this.ids.length - LIST_MAX;
    if (over <= 0) return;
    if (side === 'older') {
      const drop = Math.min(over, this.start);
      if (drop === 0) return;
      this.ids = this.ids.slice(drop);
      this.start -= drop;
      this.end -= drop;
      this.foundOldest = false;
      this.pruneHighlights();
    } else {
      const drop = Math.min(over, this.ids.length - this.end);
      if (drop === 0) return;
      this.ids = this.ids.slice(0, this.ids.length - drop);
      this.foundNewest = false;
      this.pruneHighlights();
    }
  }

  /** Forgets everything (the narrow is fetched again next time it is shown). */
  reset(): void {
    this.run++;
    this.ids = [];
    this.start = this.end = 0;
    this.highlights.clear();
    this.loaded = false;
    this.foundNewest = this.foundOldest = false;
    this.stale = false;
    this.arrivedMeanwhile = [];
    this.removedMeanwhile = new Set();
    this.heldLost = false;
    this.staleMeanwhile = false;
    this.changed();
  }
}
