/**
 * The message menu's reading and follow-up actions, without the DOM: the text "Quote and reply"
 * puts in the compose box, which of the menu's items a message gets (as the reference's message
 * actions popover decides), the versions of a message's edit history as its dialog lists them,
 * the read receipts' order, and "Mark as unread from here"'s rounds of requests.
 */
import type { NarrowTerm } from '../../src/client/types.js';

/**
 * A code fence that closes none of `content`'s own: a line opening with three or more backticks
 * (up to three spaces before them, as Markdown allows) inside a ```quote block of as many would
 * end it early. The fence is one backtick longer than the longest such run, three at least.
 */
export function unusedFence(content: string): string {
  let longest = 0;
  for (const m of content.matchAll(/^ {0,3}(`{3,})/gm)) longest = Math.max(longest, m[1]!.length);
  return '`'.repeat(Math.max(3, longest + 1));
}

/**
 * The reference's quote of a message: a silent mention of its sender, a link "said" to the
 * message, and its Markdown in a quote block, then an empty line for the reply.
 */
export function quoteText(q: {
  senderName: string;
  senderId: number;
  link: string;
  raw: string;
}): string {
  const fence = unusedFence(q.raw);
  const body = q.raw.replace(/\n+$/, '');
  return `@_**${q.senderName}|${q.senderId}** [said](${q.link}):\n${fence}quote\n${body}\n${fence}\n`;
}

/**
 * What the compose box holds after a quote: the quote alone, or after what the conversation's
 * draft already had (a blank line between), as the reference inserts it where one was writing.
 */
export function withQuote(draft: string, quote: string): string {
  if (draft.trim() === '') return quote;
  return `${draft.replace(/\s+$/, '')}\n\n${quote}`;
}

export type HistoryPolicy = 'all' | 'moves' | 'none';

/**
 * The realm's `message_edit_history_visibility_policy` as register (and `realm` events) give it,
 * falling back on the older `allow_edit_history` where a server sends only that.
 */
export function historyPolicy(settings: Record<string, unknown>): HistoryPolicy {
  const p = settings.realm_message_edit_history_visibility_policy;
  if (p === 'all' || p === 'moves' || p === 'none') return p;
  return settings.realm_allow_edit_history === false ? 'none' : 'all';
}

type Changed = { last_edit_timestamp?: number; last_moved_timestamp?: number };

/**
 * Whether a message's edit history may be opened (its menu's "View edit history", its
 * "(edited)"/"(moved)" label): edited or moved, where the organization shows everything; moved,
 * where it shows only moves; never where it shows none.
 */
export function historyShown(policy: HistoryPolicy, m: Changed): boolean {
  if (policy === 'none') return false;
  if (policy === 'moves') return m.last_moved_timestamp !== undefined;
  return m.last_edit_timestamp !== undefined || m.last_moved_timestamp !== undefined;
}

/**
 * "Mark as unread from here", as the reference offers it: on a message already read, outside
 * channels only in one the user is subscribed to (the server keeps no unread in others).
 */
export function markUnreadShown(m: { type: string }, read: boolean, subscribed: boolean): boolean {
  return read && (m.type !== 'stream' || subscribed);
}

/** One entry of GET /messages/{id}/history's `message_history`. */
export type HistoryEntry = {
  user_id?: number | null;
  timestamp: number;
  topic?: string;
  prev_topic?: string;
  stream?: number;
  prev_stream?: number;
  content?: string;
  rendered_content?: string;
  prev_content?: string;
  prev_rendered_content?: string;
  content_html_diff?: string;
};

export type Version = {
  /** Who made it (the sender for the first), when known. */
  userId: number | null;
  timestamp: number;
  /** "Original", "Edited", "Moved", "Edited and moved". */
  kind: string;
  /** The topic and channel changes, in words. */
  changes: string[];
  /** The content to show (the server's HTML): the changes highlighted where the server gave them. */
  html: string | null;
  /** Whether `html` marks what changed since the version before. */
  diff: boolean;
};

/**
 * The versions of a message, oldest first (as the server lists them), each with what changed in
 * it: a topic ("Topic: old → new"), a channel ("Moved from #a to #b"), the content (the server's
 * `content_html_diff`, else the version whole).
 */
export function historyVersions(
  entries: readonly HistoryEntry[],
  channelName: (id: number) => string,
): Version[] {
  return entries.map((e, i) => {
    const changes: string[] = [];
    if (i > 0 && e.prev_stream !== undefined && e.stream !== undefined)
      changes.push(`Moved from #${channelName(e.prev_stream)} to #${channelName(e.stream)}`);
    if (i > 0 && e.prev_topic !== undefined && e.topic !== undefined)
      changes.push(`Topic: ${e.prev_topic} → ${e.topic}`);
    const edited = i > 0 && (e.prev_content !== undefined || e.prev_rendered_content !== undefined);
    const moved = i > 0 && (e.prev_stream !== undefined || e.prev_topic !== undefined);
    const kind =
      i === 0
        ? 'Original'
        : edited && moved
          ? 'Edited and moved'
          : edited
            ? 'Edited'
            : moved
              ? 'Moved'
              : 'Edited';
    const diff = edited && e.content_html_diff !== undefined;
    // A move alone leaves the content as it was: shown once, in the version that had it.
    const html = diff
      ? e.content_html_diff!
      : i === 0 || edited
        ? (e.rendered_content ?? null)
        : null;
    return { userId: e.user_id ?? null, timestamp: e.timestamp, kind, changes, html, diff };
  });
}

/** The readers of a message, by name as the reference sorts them (unknown ids left out). */
export function receiptRows<U extends { user_id: number; full_name: string }>(
  ids: readonly number[],
  user: (id: number) => U | undefined,
  muted: (id: number) => boolean = () => false,
): U[] {
  const rows = ids
    .filter((id) => !muted(id))
    .map(user)
    .filter((u): u is U => u !== undefined);
  return rows.sort(
    (a, b) =>
      a.full_name.localeCompare(b.full_name, undefined, { sensitivity: 'base' }) ||
      a.user_id - b.user_id,
  );
}

/** One request of "Mark as unread from here" (POST /messages/flags/narrow). */
export type UnreadRound = {
  anchor: number;
  include_anchor: boolean;
  num_before: 0;
  num_after: number;
  narrow: NarrowTerm[];
  op: 'remove';
  flag: 'read';
};

/** Messages per request, and requests at most (as the reference's batches). */
export const UNREAD_BATCH = 1000;
export const UNREAD_MAX_ROUNDS = 20;

/**
 * Marks a message and everything after it in a view unread: a request from the message, then
 * from the last one each answer processed, until the server says it found the newest (or the
 * rounds run out). Returns how many messages were processed.
 */
export async function markUnreadFrom(
  anchor: number,
  narrow: NarrowTerm[],
  send: (r: UnreadRound) => Promise<{
    found_newest?: boolean;
    last_processed_id?: number | null;
    processed_count?: number;
  }>,
  rounds = UNREAD_MAX_ROUNDS,
): Promise<number> {
  let from = anchor;
  let first = true;
  let processed = 0;
  for (let i = 0; i < rounds; i++) {
    const r = await send({
      anchor: from,
      include_anchor: first,
      num_before: 0,
      num_after: UNREAD_BATCH,
      narrow,
      op: 'remove',
      flag: 'read',
    });
    processed += r.processed_count ?? 0;
    if (r.found_newest !== false || r.last_processed_id == null) break;
    from = r.last_processed_id;
    first = false;
  }
  return processed;
}
