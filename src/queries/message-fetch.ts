/**
 * Fetching messages by narrow (GET /messages, POST /messages/flags/narrow): resolving a parsed
 * narrow against the realm into conditions the storage layer turns into SQL, choosing whose
 * history to search, and the anchor and range rules. Reference: lib/narrow.py (NarrowBuilder,
 * ok_to_include_history, find_first_unread_anchor, limit_query_to_range,
 * post_process_limited_query), views/message_fetch.py.
 */
import { JsonableError } from '../lib/errors.js';
import { escapeHtml } from '../lib/html.js';
import { WRITE_JSON, type JsonWritable, type JsonWriter } from '../lib/json-bytes.js';
import { topicOperand } from '../lib/message-content.js';
import {
  apiFlagNames,
  HISTORICAL_FLAGS,
  MENTION_FLAGS,
  MESSAGE_FLAG_BITS,
} from '../lib/message-flags.js';
import {
  CHANNEL_NARROW_OPERATORS,
  CHANNELS_NARROW_OPERATORS,
  type NarrowOperand,
  type NarrowParam,
} from '../lib/narrow.js';
import { Role } from '../lib/roles.js';
import { highlightHtml, parseSearch } from '../lib/search.js';
import type { MessageCondition, MessageQuery } from '../storage/message-search.js';
import type { ListedMessageRow } from '../storage/messages.js';
import type { ReadStore } from '../storage/store.js';
import type { UserRow } from '../storage/users.js';
import { dmGroupKey } from '../lib/message-content.js';
import {
  formatMessage,
  reactionsByMessage,
  submessagesByMessage,
  type ApiSubmessage,
  senderFields,
  writeMessage,
  WrittenParts,
  type ApiMessage,
  type ApiReaction,
  type MessageFormat,
  type SenderFields,
} from './messages.js';
import type { RealmView } from './realm-view.js';

export const MAX_MESSAGES_PER_FETCH = 5000;
/** The anchor `newest` stands for (the reference's LARGER_THAN_MAX_MESSAGE_ID). */
export const LARGER_THAN_MAX_MESSAGE_ID = 10_000_000_000_000_000;

/** `anchor` as sent: an integer, `newest`, `oldest` or `first_unread` (null). */
export function parseAnchor(value: string | undefined, useFirstUnread: boolean): number | null {
  if (useFirstUnread) return null;
  if (value === undefined) throw new JsonableError("Missing 'anchor' argument.");
  if (value === 'oldest') return 0;
  if (value === 'newest') return LARGER_THAN_MAX_MESSAGE_ID;
  if (value === 'first_unread') return null;
  if (!/^\s*[-+]?[0-9]+\s*$/.test(value)) throw new JsonableError('Invalid anchor');
  const n = Number(value);
  if (n < 0) return 0;
  return n > LARGER_THAN_MAX_MESSAGE_ID ? LARGER_THAN_MAX_MESSAGE_ID : n;
}

export class BadNarrowError extends JsonableError {
  constructor(desc: string) {
    super(`Invalid narrow operator: ${desc}`, { code: 'BAD_NARROW', extra: { desc } });
  }
}

export type ResolvedNarrow = {
  conditions: MessageCondition[];
  /** Search the realm's messages (not only those the user received): see ok_to_include_history. */
  includeHistory: boolean;
  /** Whether a channel term is present (muting then ignores channel-level muting). */
  hasChannelTerm: boolean;
  /** Folded words to highlight, when the narrow searches. */
  search: string[] | null;
};

function operandText(o: NarrowOperand): string {
  return Array.isArray(o) ? `[${o.join(', ')}]` : String(o);
}

function userByOperand(view: RealmView, operand: NarrowOperand): UserRow | undefined {
  if (typeof operand === 'number') return view.user(operand);
  if (typeof operand === 'string') return view.userByEmail(operand.trim());
  return undefined;
}

/**
 * Resolves a narrow for `user`. Unknown operators, operands and names answer BAD_NARROW;
 * a narrow that can only be empty (a conversation that does not exist) becomes a condition
 * matching nothing.
 */
export function resolveNarrow(
  view: RealmView,
  store: ReadStore,
  user: UserRow,
  narrow: readonly NarrowParam[],
): ResolvedNarrow {
  const conditions: MessageCondition[] = [];
  let channelTerm = false;
  let dmTerm = false;
  let includeHistory = false;
  const searches: string[] = [];
  const markChannel = () => {
    channelTerm = true;
    if (dmTerm)
      throw new BadNarrowError('No message can be both a channel message and direct message');
  };
  const markDm = () => {
    dmTerm = true;
    if (channelTerm)
      throw new BadNarrowError('No message can be both a channel message and direct message');
  };
  for (const term of narrow) {
    const { operator, operand, negated } = term;
    if (CHANNEL_NARROW_OPERATORS.has(operator)) {
      markChannel();
      const ch =
        typeof operand === 'number'
          ? view.channels.byId(operand)
          : typeof operand === 'string'
            ? view.channels.byName(operand)
            : undefined;
      if (!ch) throw new BadNarrowError(`unknown channel ${operandText(operand)}`);
      conditions.push({ kind: 'channel', id: ch.id, negated });
      if (!negated) includeHistory = view.channels.may(user.id, ch, 'history');
      continue;
    }
    if (CHANNELS_NARROW_OPERATORS.has(operator)) {
      markChannel();
      const ids: number[] = [];
      if (operand === 'public') {
        for (const ch of view.channels.all()) if (!ch.invite_only) ids.push(ch.id);
        if (!negated && user.role !== Role.GUEST) includeHistory = true;
      } else if (operand === 'web-public') {
        for (const ch of view.channels.all()) if (ch.is_web_public) ids.push(ch.id);
      } else {
        throw new BadNarrowError(`unknown channels operand ${operandText(operand)}`);
      }
      conditions.push({ kind: 'channels', ids, negated });
      continue;
    }
    switch (operator) {
      case 'topic':
        markChannel();
        conditions.push({ kind: 'topic', topic: topicOperand(operand as string), negated });
        break;
      case 'sender': {
        const u = userByOperand(view, operand);
        if (!u) throw new BadNarrowError(`unknown user ${operandText(operand)}`);
        conditions.push({ kind: 'sender', id: u.id, negated });
        break;
      }
      case 'near':
        break;
      case 'id': {
        const text = String(operand);
        if (!/^[0-9]+$/.test(text)) throw new BadNarrowError('Invalid message ID');
        conditions.push({ kind: 'id', id: Number(text), negated });
        break;
      }
      case 'is':
        conditions.push(isCondition(operand as string, negated, markDm));
        break;
      case 'has':
        if (!['attachment', 'image', 'link', 'reaction'].includes(operand as string)) {
          throw new BadNarrowError(`unknown 'has' operand ${operandText(operand)}`);
        }
        conditions.push({
          kind: 'has',
          what: operand as 'attachment' | 'image' | 'link' | 'reaction',
          negated,
        });
        break;
      case 'in':
        if (operand === 'home') {
          conditions.push({ kind: 'muted', channelLevel: true, negated: !negated });
        } else if (operand !== 'all') {
          throw new BadNarrowError(`unknown 'in' operand ${operandText(operand)}`);
        }
        break;
      case 'dm':
      case 'pm-with':
      case 'pm_with': {
        markDm();
        conditions.push({ ...dmCondition(view, store, user, operand), negated });
        break;
      }
      case 'dm-including':
      case 'group-pm-with':
      case 'group_pm_with': {
        markDm();
        const other = userByOperand(view, operand);
        if (!other) throw new BadNarrowError(`unknown user ${operandText(operand)}`);
        if (operator === 'dm-including' && other.id === user.id) {
          conditions.push({
            kind: 'flags',
            mask: MESSAGE_FLAG_BITS.is_private,
            set: true,
            negated,
          });
        } else {
          conditions.push({
            kind: 'dm_including',
            userId: other.id,
            groupsOnly: operator !== 'dm-including',
            negated,
          });
        }
        break;
      }
      case 'search':
        if (negated) {
          // The reference folds negated search terms into the positive search; here they exclude.
          const q = parseSearch(operand as string);
          if (q) conditions.push({ kind: 'search', fts: q.fts, negated: true });
        } else {
          searches.push(operand as string);
        }
        break;
      default:
        throw new BadNarrowError(`unknown operator ${operator}`);
    }
  }
  // Flags are properties of the user's own rows: there is no history without a row. `is:resolved`,
  // `is:followed` and `is:muted` are not (the topic's name, the user's topic and channel
  // settings): a channel's view asked with `-is:muted` (the web app's) shows the messages sent
  // before the user joined, as the channel alone does.
  if (conditions.some((c) => c.kind === 'flags')) includeHistory = false;
  let search: string[] | null = null;
  if (searches.length > 0) {
    const q = parseSearch(searches.join(' '));
    if (q) {
      conditions.push({ kind: 'search', fts: q.fts, negated: false });
      search = q.prefixes;
    } else {
      conditions.push({ kind: 'nothing', negated: false });
      search = [];
    }
  }
  return { conditions, includeHistory, hasChannelTerm: channelTerm, search };
}

function isCondition(operand: string, negated: boolean, markDm: () => void): MessageCondition {
  switch (operand) {
    case 'dm':
    case 'private':
      markDm();
      return { kind: 'flags', mask: MESSAGE_FLAG_BITS.is_private, set: true, negated };
    case 'starred':
      return { kind: 'flags', mask: MESSAGE_FLAG_BITS.starred, set: true, negated };
    case 'unread':
      return { kind: 'flags', mask: MESSAGE_FLAG_BITS.read, set: false, negated };
    case 'mentioned':
      return { kind: 'flags', mask: MENTION_FLAGS, set: true, negated };
    case 'alerted':
      return { kind: 'flags', mask: MESSAGE_FLAG_BITS.has_alert_word, set: true, negated };
    case 'resolved':
      return { kind: 'resolved', negated };
    case 'followed':
      return { kind: 'followed', negated };
    case 'muted':
      return { kind: 'muted', channelLevel: true, negated };
    default:
      throw new BadNarrowError(`unknown 'is' operand ${operand}`);
  }
}

/** `dm:` — the one direct conversation of exactly these users and the viewer. */
function dmCondition(
  view: RealmView,
  store: ReadStore,
  user: UserRow,
  operand: NarrowOperand,
): MessageCondition {
  const ids: number[] = [];
  const unknown = () => new BadNarrowError(`unknown user in ${operandText(operand)}`);
  if (typeof operand === 'string') {
    for (const email of operand.split(',')) {
      const u = view.userByEmail(email.trim());
      if (!u) throw unknown();
      ids.push(u.id);
    }
  } else if (Array.isArray(operand)) {
    if (operand.length === 0) throw unknown();
    for (const id of operand) {
      if (!view.user(id)) throw unknown();
      ids.push(id);
    }
  } else {
    throw unknown();
  }
  const group = store.messages.dmGroupByKey(view.id, dmGroupKey([...ids, user.id]));
  return group === undefined
    ? { kind: 'nothing', negated: false }
    : { kind: 'dm_group', id: group, negated: false };
}

export function messageQuery(view: RealmView, user: UserRow, n: ResolvedNarrow): MessageQuery {
  return {
    userId: user.id,
    realmId: view.id,
    includeHistory: n.includeHistory,
    conditions: n.conditions,
  };
}

/** The oldest unread message of the narrow the user has not muted, or LARGER_THAN_MAX_MESSAGE_ID. */
export function firstUnreadAnchor(
  store: ReadStore,
  view: RealmView,
  user: UserRow,
  n: ResolvedNarrow,
): number {
  const rows = store.messageSearch.ids(
    {
      userId: user.id,
      realmId: view.id,
      includeHistory: false,
      conditions: [
        ...n.conditions,
        { kind: 'flags', mask: MESSAGE_FLAG_BITS.read, set: false, negated: false },
        { kind: 'muted', channelLevel: !n.hasChannelTerm, negated: true },
      ],
    },
    { dir: 'after', anchor: 0, limit: 1 },
  );
  return rows[0]?.id ?? LARGER_THAN_MAX_MESSAGE_ID;
}

export type RangeResult<R> = {
  rows: R[];
  found_anchor: boolean;
  found_oldest: boolean;
  found_newest: boolean;
  history_limited: boolean;
};

/**
 * The rows around `anchor`: up to `numBefore` older and `numAfter` newer, and the anchor itself
 * when it matches and `includeAnchor`. `fetch` runs one range query (see MessageRange).
 */
export function fetchRange<R extends { id: number }>(
  fetch: (
    range:
      { dir: 'before' | 'after'; anchor: number; limit: number } | { dir: 'ids'; ids: number[] },
  ) => R[],
  anchor: number,
  numBefore: number,
  numAfter: number,
  includeAnchor: boolean,
): RangeResult<R> {
  const left = anchor === 0;
  const right = anchor >= LARGER_THAN_MAX_MESSAGE_ID;
  if (right) numAfter = 0;
  const needBefore = !left && numBefore > 0;
  const needAfter = !right && numAfter > 0;
  let rows: R[] = [];
  if (needBefore && needAfter) {
    const before = fetch({ dir: 'before', anchor: anchor - 1, limit: numBefore });
    const after = fetch({ dir: 'after', anchor, limit: numAfter + 1 });
    rows = [...before.reverse(), ...after];
  } else if (needBefore) {
    const bound = right ? Number.MAX_SAFE_INTEGER : anchor - (includeAnchor ? 0 : 1);
    const limit = numBefore + (!right && includeAnchor ? 1 : 0);
    rows = fetch({ dir: 'before', anchor: bound, limit }).reverse();
  } else if (needAfter) {
    rows = fetch({
      dir: 'after',
      anchor: anchor + (includeAnchor ? 0 : 1),
      limit: numAfter + (includeAnchor ? 1 : 0),
    });
  } else if (!right) {
    rows = fetch({ dir: 'ids', ids: [anchor] });
  }
  let beforeRows: R[];
  let anchorRows: R[];
  let afterRows: R[];
  if (right) {
    beforeRows = rows;
    anchorRows = [];
    afterRows = [];
  } else {
    beforeRows = rows.filter((r) => r.id < anchor);
    anchorRows = rows.filter((r) => r.id === anchor);
    afterRows = rows.filter((r) => r.id > anchor);
  }
  if (numBefore > 0) beforeRows = beforeRows.slice(-numBefore);
  if (numAfter > 0) afterRows = afterRows.slice(0, numAfter);
  return {
    rows: [...beforeRows, ...anchorRows, ...afterRows],
    found_anchor: anchorRows.length === 1,
    found_oldest: left || beforeRows.length < numBefore,
    found_newest: right || afterRows.length < numAfter,
    history_limited: false,
  };
}

const NO_REACTIONS: readonly ApiReaction[] = Object.freeze([]);
const NO_SUBMESSAGES: readonly ApiSubmessage[] = Object.freeze([]);

/**
 * A fetch's messages as the answer's `messages`: written as JSON straight from the rows
 * (writeMessage, for the responder's byte writer, src/lib/json-bytes.ts), or as formatFetched's
 * objects wherever JSON.stringify serializes the answer (toJSON). The same bytes either way; the
 * first makes no object per message (a 100-message fetch allocated ~30 KB of message objects).
 */
export class FetchedMessages implements JsonWritable {
  constructor(
    private readonly store: ReadStore,
    private readonly view: RealmView,
    private readonly rows: readonly ListedMessageRow[],
    private readonly format: MessageFormat,
    private readonly search: readonly string[] | null,
  ) {}

  toJSON(): ApiMessage[] {
    return formatFetched(this.store, this.view, this.rows, this.format, this.search);
  }

  [WRITE_JSON](w: JsonWriter): void {
    const { store, view, rows, format, search } = this;
    const ids = rows.map((r) => r.id);
    const reactions = reactionsByMessage(store, ids);
    const submessages = submessagesByMessage(store, ids);
    // Each sender's fields once per answer (their avatar URL is a string made per call).
    const senders = new Map<number, SenderFields>();
    const written = new WrittenParts();
    w.writeAscii('[');
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      if (i > 0) w.writeAscii(',');
      let sender = senders.get(r.sender_id);
      if (sender === undefined)
        senders.set(r.sender_id, (sender = senderFields(view, r.sender_id, format)));
      writeMessage(
        w,
        store,
        view,
        r,
        format,
        reactions.get(r.id) ?? NO_REACTIONS,
        submessages.get(r.id) ?? NO_SUBMESSAGES,
        apiFlagNames(r.flags ?? HISTORICAL_FLAGS),
        sender,
        search
          ? {
              content: highlightHtml(r.rendered_content, search),
              subject: highlightHtml(escapeHtml(r.topic), search),
            }
          : null,
        written,
      );
    }
    w.writeAscii(']');
  }
}

/** Message objects for fetched rows, with the viewer's flags (and search highlights). */
export function formatFetched(
  store: ReadStore,
  view: RealmView,
  rows: readonly ListedMessageRow[],
  format: MessageFormat,
  search: readonly string[] | null,
): ApiMessage[] {
  const ids = rows.map((r) => r.id);
  const reactions = reactionsByMessage(store, ids);
  const submessages = submessagesByMessage(store, ids);
  return rows.map((r) => {
    const msg = formatMessage(
      store,
      view,
      r,
      format,
      reactions.get(r.id) ?? [],
      submessages.get(r.id) ?? [],
      apiFlagNames(r.flags ?? HISTORICAL_FLAGS),
    );
    if (search) {
      msg.match_content = highlightHtml(r.rendered_content, search);
      msg.match_subject = highlightHtml(escapeHtml(r.topic), search);
    }
    return msg;
  });
}
