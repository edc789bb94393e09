/**
 * Narrows: which messages a view shows, as the reference's web app writes them in the URL's
 * fragment, so that links the server renders (`/#narrow/channel/9-design/topic/logo/near/42`)
 * open inside the app and back/forward work:
 *
 *   #narrow/channel/<id>-<name>            a channel      (older spelling: stream)
 *   #narrow/channel/<id>-<name>/topic/<t>  a topic        (older spelling: subject)
 *   #narrow/dm/<id>,<id>-<slug>            a conversation (older spellings: pm-with, with e-mails)
 *   #narrow/is/dm  #narrow/is/mentioned  #narrow/is/starred  #narrow/is/unread
 *   #narrow/sender/<id>-<slug>             the messages one person sent (older spelling: from)
 *   #narrow/search/<words>                 full-text search (combinable with the above)
 *   …/near/<message id>                    open at a message
 *
 * Each operand is encoded as the reference does: encodeURIComponent, then `%` → `.`, and `.`,
 * `(`, `)` escaped as `.2E`, `.28`, `.29`. An empty fragment, `#all_messages`, `#feed` or
 * `#narrow` alone is the combined feed of all messages (ALL: no terms), which the server is
 * asked for as the reference's web app asks, `in:home`: without muted channels and topics.
 */
import type { Message, NarrowTerm, UpdateMessageEvent } from '../../src/client/types.js';

export type Term = { operator: string; operand: string; negated: boolean };
export type Narrow = { terms: Term[]; near: number | null };

export const ALL: Narrow = { terms: [], near: null };

/** Name lookups the URL scheme needs (names appear in slugs, old URLs name things). */
export type Names = {
  channelName(id: number): string | undefined;
  channelId(name: string): number | undefined;
  userName(id: number): string | undefined;
  userId(email: string): number | undefined;
  selfId: number;
};

const REPLACE: Record<string, string> = { '%': '.', '(': '.28', ')': '.29', '.': '.2E' };

export function encodeHashComponent(s: string): string {
  return encodeURIComponent(s).replace(/[%().]/g, (c) => REPLACE[c]!);
}

export function decodeHashComponent(s: string): string {
  return decodeURIComponent(s.replace(/\./g, '%'));
}

const CANONICAL: Record<string, string> = {
  stream: 'channel',
  subject: 'topic',
  'pm-with': 'dm',
  'group-pm-with': 'dm-including',
  'dm-with': 'dm-including',
  from: 'sender',
};

function canonicalOperand(op: string, operand: string): string {
  if (op === 'is' && operand === 'private') return 'dm';
  return operand;
}

/** The numeric id at the start of a slug (`42-design` → 42), or undefined. */
function slugId(operand: string): number | undefined {
  const m = /^([0-9]+)(?:-|$)/.exec(operand);
  return m ? Number(m[1]) : undefined;
}

/** A `dm` operand: `12,13-group`, `12-Hamlet`, or e-mail addresses; ids sorted, self removed. */
function dmIds(operand: string, names: Names): number[] | undefined {
  const m = /^([0-9]+(?:,[0-9]+)*)(?:-|$)/.exec(operand);
  let ids: number[];
  if (m) ids = m[1]!.split(',').map(Number);
  else {
    const found = operand.split(',').map((e) => names.userId(e.trim()));
    if (found.some((x) => x === undefined)) return undefined;
    ids = found as number[];
  }
  return conversationIds(ids, names.selfId);
}

/** The other participants of a conversation, sorted; a conversation with oneself is [self]. */
export function conversationIds(ids: readonly number[], selfId: number): number[] {
  const others = [...new Set(ids)].filter((id) => id !== selfId).sort((a, b) => a - b);
  return others.length === 0 ? [selfId] : others;
}

/**
 * The narrow a location's fragment names, or null when it is not a narrow (another view of the
 * app, or an operand that names nothing known).
 */
export function parseHash(hash: string, names: Names): Narrow | null {
  const h = hash.replace(/^#/, '');
  if (h === '' || h === 'all_messages' || h === 'feed' || h === 'narrow' || h === 'narrow/') {
    return ALL;
  }
  if (!h.startsWith('narrow/')) return null;
  const parts = h.slice('narrow/'.length).split('/');
  if (parts[parts.length - 1] === '') parts.pop();
  if (parts.length % 2 !== 0) return null;
  const terms: Term[] = [];
  let near: number | null = null;
  for (let i = 0; i < parts.length; i += 2) {
    let op = parts[i]!;
    let negated = false;
    if (op.startsWith('-')) {
      negated = true;
      op = op.slice(1);
    }
    op = CANONICAL[op] ?? op;
    let operand: string;
    try {
      operand = decodeHashComponent(parts[i + 1]!);
    } catch {
      // Old links name people by e-mail, unencoded (the dots are not escapes).
      if (!(op === 'dm' || op === 'dm-including' || op === 'sender')) return null;
      operand = parts[i + 1]!;
    }
    operand = canonicalOperand(op, operand);
    if (op === 'near' || op === 'with' || op === 'id') {
      const id = Number(operand);
      if (!Number.isInteger(id)) return null;
      if (op === 'id') terms.push({ operator: 'id', operand: String(id), negated: false });
      else near = id;
      continue;
    }
    if (op === 'channel') {
      const id = slugId(operand) ?? names.channelId(operand);
      if (id === undefined) return null;
      operand = String(id);
    } else if (op === 'dm' || op === 'dm-including' || op === 'sender') {
      if (op === 'sender' && operand === 'me') operand = String(names.selfId);
      const ids = op === 'dm' ? dmIds(operand, names) : dmIds(operand, { ...names, selfId: -1 });
      if (ids === undefined) return null;
      operand = ids.join(',');
    }
    terms.push({ operator: op, operand, negated });
  }
  return { terms, near };
}

function slug(id: number, name: string | undefined): string {
  return `${id}-${(name ?? 'unknown').replace(/ /g, '-')}`;
}

/** The fragment for a narrow (`#narrow/…`), as the reference writes it. */
export function narrowHash(n: Narrow, names: Names): string {
  if (n.terms.length === 0 && n.near === null) return '#feed';
  const parts: string[] = [];
  for (const t of n.terms) {
    let operand = t.operand;
    if (t.operator === 'channel')
      operand = slug(Number(operand), names.channelName(Number(operand)));
    else if (t.operator === 'dm' || t.operator === 'sender') {
      const ids = operand.split(',').map(Number);
      const tail =
        ids.length === 1 ? (names.userName(ids[0]!) ?? 'user').replace(/ /g, '-') : 'group';
      // The slug is written as it is, as the reference does: ids, a comma, a name (a sender's
      // too: `sender/12-Hamlet`).
      parts.push((t.negated ? '-' : '') + t.operator, `${operand}-${encodeHashComponent(tail)}`);
      continue;
    }
    parts.push((t.negated ? '-' : '') + t.operator, encodeHashComponent(operand));
  }
  if (n.near !== null) parts.push('near', String(n.near));
  return '#narrow/' + parts.join('/');
}

/**
 * The fragment of a link to a message that others open too (quote and reply, "Copy link"): as
 * narrowHash, but a direct conversation is named by all its people, the writer too, sorted, as
 * the reference's permalinks (`12,15-dm`, `12,13,15-group`). A narrow names a conversation by
 * the others only (`12-Hamlet`), which opens, for Hamlet, his conversation with himself.
 */
export function messageHash(n: Narrow, names: Names): string {
  const dm = n.terms.length === 1 ? dmOf(n) : undefined;
  if (dm === undefined) return narrowHash(n, names);
  const ids = [...new Set([...dm, names.selfId])].sort((a, b) => a - b);
  const near = n.near === null ? '' : `/near/${n.near}`;
  return `#narrow/dm/${ids.join(',')}-${ids.length >= 3 ? 'group' : 'dm'}${near}`;
}

// ---- Constructors and questions the views ask ---------------------------------------------

const term = (operator: string, operand: string | number): Term => ({
  operator,
  operand: String(operand),
  negated: false,
});

export const channelNarrow = (id: number): Narrow => ({ terms: [term('channel', id)], near: null });
export const topicNarrow = (id: number, topic: string): Narrow => ({
  terms: [term('channel', id), term('topic', topic)],
  near: null,
});
export const dmNarrow = (ids: readonly number[], selfId: number): Narrow => ({
  terms: [term('dm', conversationIds(ids, selfId).join(','))],
  near: null,
});
export const isNarrow = (what: 'dm' | 'mentioned' | 'starred' | 'unread'): Narrow => ({
  terms: [term('is', what)],
  near: null,
});
/** The messages one person sent (the reference's "View messages sent"). */
export const senderNarrow = (id: number): Narrow => ({ terms: [term('sender', id)], near: null });
export const searchNarrow = (base: Narrow, query: string): Narrow => ({
  terms: [...base.terms.filter((t) => t.operator !== 'search'), term('search', query)],
  near: null,
});

export function find(n: Narrow, operator: string): string | undefined {
  return n.terms.find((t) => t.operator === operator && !t.negated)?.operand;
}

export function channelOf(n: Narrow): number | undefined {
  const c = find(n, 'channel');
  return c === undefined ? undefined : Number(c);
}

/**
 * The channel the compose key `c` addresses, as the reference's compose_actions.start for its
 * compose_hotkey: the user's one channel when subscribed to exactly one (whatever is shown), else
 * the channel shown (`shown`: null in a view of its own, such as Recent conversations), else none:
 * the channel to choose.
 */
export function composeKeyChannel(
  shown: Narrow | null,
  subscribed: readonly number[],
): number | null {
  if (subscribed.length === 1) return subscribed[0]!;
  const ch = shown ? channelOf(shown) : undefined;
  return ch ?? null;
}

export function topicOf(n: Narrow): string | undefined {
  return find(n, 'topic');
}

/** The sender a narrow of one person's messages names (`sender:<id>` alone), or undefined. */
export function senderOf(n: Narrow): number | undefined {
  const id = n.terms.length === 1 ? find(n, 'sender') : undefined;
  return id === undefined ? undefined : Number(id);
}

export function dmOf(n: Narrow): number[] | undefined {
  const d = find(n, 'dm');
  return d === undefined ? undefined : d.split(',').map(Number);
}

/** A stable key for a narrow (caches, the selected item of the sidebar); `near` not included. */
export function narrowKey(n: Narrow): string {
  return n.terms
    .map(
      (t) =>
        `${t.negated ? '-' : ''}${t.operator}:${t.operator === 'topic' ? t.operand.toLowerCase() : t.operand}`,
    )
    .join('/');
}

export function sameNarrow(a: Narrow, b: Narrow): boolean {
  return narrowKey(a) === narrowKey(b);
}

/**
 * Whether a narrow leaves out the user's muted topics as a channel's view does (the reference's
 * Filter.excludes_muted_topics, for the views of one channel): a narrow of one channel that is not
 * one of its topics, a search, starred or mentions (the reference shows a message that mentions
 * the user even in a muted topic: Mentions holds only those, and the server has no operator for
 * that exception, so it is left to Mentions), nor one about muting itself (`in`, `is:muted`). Only
 * topics muted as such are left out (policy "muted"), whether or not the channel is muted: a muted
 * channel's own view shows its other topics (the reference's user_topics.is_topic_muted there).
 * The server is asked without them (apiNarrow). The combined feed's rule is another (`in:home`,
 * muting.ts topicMuted).
 */
export function hidesMutedTopics(n: Narrow): boolean {
  if (find(n, 'channel') === undefined) return false;
  return !n.terms.some(
    (t) =>
      ['topic', 'search', 'in', 'id', 'dm', 'dm-including'].includes(t.operator) ||
      (t.operator === 'is' && ['starred', 'mentioned', 'muted', 'dm'].includes(t.operand)),
  );
}

/**
 * Whether what a narrow holds depends on the user's muting: the combined feed (no terms, asked
 * for as `in:home`), a narrow with an `in:home` term (negated or not), or a channel's view (its
 * muted topics left out: hidesMutedTopics). A search does not (as the reference's: muted messages
 * are found), nor does a topic's view.
 */
export function mutingApplies(n: Narrow): boolean {
  return (
    n.terms.length === 0 ||
    n.terms.some((t) => t.operator === 'in' && t.operand === 'home') ||
    hidesMutedTopics(n)
  );
}

/** The user's muting as apiNarrow needs it (ChatState.channelMuted, ChatState.mutedTopicsIn). */
export type Muting = {
  channelMuted(channelId: number): boolean;
  /** The channel's topics muted as such, by their names. */
  mutedTopicsIn(channelId: number): readonly string[];
};

/**
 * The most terms a narrow may have (the server's MAX_NARROW_TERMS, src/lib/limits.ts: a narrow
 * with more is refused).
 */
export const MAX_NARROW_TERMS = 100;

/**
 * The narrow as `GET /messages` takes it (the combined feed: `in:home`). A channel's view
 * (hidesMutedTopics) is asked without the channel's muted topics, with the user's muting now:
 * a channel not muted with `-is:muted` (muted there is exactly a topic muted as such); a muted
 * channel, where `-is:muted` would leave out every topic but those unmuted or followed, with
 * `-topic:<name>` for each topic muted as such, as many as a narrow may hold (past that, rare,
 * the others are fetched, and shown, as before muting applied to channels' views). Without
 * `muting`, the narrow's own terms only.
 */
export function apiNarrow(n: Narrow, muting?: Muting): NarrowTerm[] {
  if (n.terms.length === 0) return [{ operator: 'in', operand: 'home' }];
  const terms: NarrowTerm[] = n.terms.map((t) => {
    let operand: string | number | number[] = t.operand;
    if (t.operator === 'channel' || t.operator === 'id') operand = Number(t.operand);
    else if (t.operator === 'dm' || t.operator === 'dm-including')
      operand = t.operand.split(',').map(Number);
    else if (t.operator === 'sender') operand = Number(t.operand);
    return t.negated
      ? { operator: t.operator, operand, negated: true }
      : { operator: t.operator, operand };
  });
  const channel = channelOf(n);
  if (muting && channel !== undefined && hidesMutedTopics(n)) {
    if (!muting.channelMuted(channel)) {
      terms.push({ operator: 'is', operand: 'muted', negated: true });
    } else {
      const topics = muting.mutedTopicsIn(channel).slice(0, MAX_NARROW_TERMS - terms.length);
      for (const topic of topics) terms.push({ operator: 'topic', operand: topic, negated: true });
    }
  }
  return terms;
}

/** Topics compare without case, as the server groups them. */
export function sameTopic(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** The other participants of a direct message (sorted; [self] for a message to oneself). */
export function messageDmIds(m: Message, selfId: number): number[] {
  if (typeof m.display_recipient === 'string') return [];
  return conversationIds(
    m.display_recipient.map((r) => r.id),
    selfId,
  );
}

/** The flags of a message that mentions the user (by name, a group of theirs, or @all/@topic). */
const MENTION_FLAGS = [
  'mentioned',
  'stream_wildcard_mentioned',
  'topic_wildcard_mentioned',
  'wildcard_mentioned',
];

/** Whether a message with these flags mentions the user (`is:mentioned`). */
export function mentionsUser(flags: readonly string[]): boolean {
  return flags.some((f) => MENTION_FLAGS.includes(f));
}

/**
 * Whether a view leaves out, as it draws them, the messages of topics muted as such (policy
 * "muted") but those that mention the user: the reference's Filter.excludes_muted_topics with
 * MessageListData.messages_filtered_for_topic_mutes, for the views the server cannot be asked
 * without them (a sender's messages, unread, has:link…: across channels, where `-is:muted` would
 * leave out muted channels' other topics too, which the reference shows there). Not the views
 * that are asked without them (the combined feed and `in:` narrows: in:home; a channel's view:
 * hidesMutedTopics), nor a topic, a search, direct messages, starred, `is:muted`, one message
 * (`id:`), as the reference shows muted topics there. The messages stay in the list (its paging
 * is by its ids): only drawing and the keys skip them.
 */
export function hidesMutedTopicsWhenDrawn(n: Narrow): boolean {
  if (n.terms.length === 0 || hidesMutedTopics(n)) return false;
  if (find(n, 'channel') !== undefined && find(n, 'topic') !== undefined) return false;
  return !n.terms.some(
    (t) =>
      ['search', 'in', 'id', 'dm', 'dm-including'].includes(t.operator) ||
      (t.operator === 'is' && ['starred', 'muted', 'dm'].includes(t.operand)),
  );
}

/** What `matches` needs beyond the message: who asks, its flags, and the user's muting. */
export type MatchContext = {
  selfId: number;
  flags: readonly string[];
  /** Whether a channel's topic is muted for the user (muting.ts, topicMuted). */
  mutedTopic: (streamId: number, topic: string) => boolean;
  /**
   * Whether the topic itself is muted (its policy "muted", whatever its channel's muting): what a
   * channel's view leaves out (hidesMutedTopics).
   */
  topicMutedItself: (streamId: number, topic: string) => boolean;
};

/** Whether a message is in the combined feed (`in:home`): a direct message, or not muted. */
function messageInHome(m: Message, ctx: MatchContext): boolean {
  return m.type !== 'stream' || !ctx.mutedTopic(m.stream_id!, m.subject);
}

/**
 * Whether a message belongs in a narrow, for the terms a client can judge; `undefined` when it
 * cannot (full-text search: the server decides, by fetching).
 */
export function matches(n: Narrow, m: Message, ctx: MatchContext): boolean | undefined {
  if (n.terms.length === 0) return messageInHome(m, ctx);
  let unknown = false;
  for (const t of n.terms) {
    let ok: boolean;
    switch (t.operator) {
      case 'channel':
        ok = m.type === 'stream' && m.stream_id === Number(t.operand);
        break;
      case 'topic':
        ok = m.type === 'stream' && sameTopic(m.subject, t.operand);
        break;
      case 'dm':
        ok = m.type === 'private' && messageDmIds(m, ctx.selfId).join(',') === t.operand;
        break;
      case 'dm-including': {
        const ids =
          typeof m.display_recipient === 'string' ? [] : m.display_recipient.map((r) => r.id);
        ok = m.type === 'private' && t.operand.split(',').every((id) => ids.includes(Number(id)));
        break;
      }
      case 'sender':
        ok = m.sender_id === Number(t.operand);
        break;
      case 'is':
        if (t.operand === 'dm') ok = m.type === 'private';
        else if (t.operand === 'mentioned') ok = mentionsUser(ctx.flags);
        else if (t.operand === 'starred') ok = ctx.flags.includes('starred');
        else if (t.operand === 'unread') ok = !ctx.flags.includes('read');
        else {
          unknown = true;
          ok = true;
        }
        break;
      case 'id':
        ok = m.id === Number(t.operand);
        break;
      case 'in':
        if (t.operand === 'home') ok = messageInHome(m, ctx);
        else if (t.operand === 'all') ok = true;
        else {
          unknown = true;
          ok = true;
        }
        break;
      default:
        unknown = true;
        ok = true;
    }
    if (t.negated) ok = !ok;
    if (!ok) return false;
  }
  if (m.type === 'stream' && hidesMutedTopics(n) && ctx.topicMutedItself(m.stream_id!, m.subject))
    return false;
  return unknown ? undefined : true;
}

/** Whether a narrow is one conversation (a topic or a direct-message conversation). */
export function isConversation(n: Narrow): boolean {
  return (
    (find(n, 'topic') !== undefined && find(n, 'channel') !== undefined && n.terms.length === 2) ||
    (find(n, 'dm') !== undefined && n.terms.length === 1)
  );
}

// ---- Following a topic that moved ------------------------------------------------------------

/** A channel's topic. */
export type Place = { streamId: number; topic: string };

/** A topic that moved onward: from where, to where, and whether all of it went. */
export type TopicMove = { from: Place; to: Place; whole: boolean };

/** An update_message event's fields that say where messages moved (see topicMove). */
type MoveFields = Pick<
  UpdateMessageEvent,
  'stream_id' | 'new_stream_id' | 'orig_subject' | 'subject' | 'topic' | 'propagate_mode'
>;

/**
 * The topic an update_message event moved onward ("this and later messages" or "all messages in
 * the topic", as the reference's web app follows them), or null (a content edit, a move of one
 * message). A move to another channel alone names no topic: `topicNow` is the moved messages'
 * topic, which it kept.
 */
export function topicMove(e: MoveFields, topicNow: string | undefined): TopicMove | null {
  if (e.propagate_mode !== 'change_later' && e.propagate_mode !== 'change_all') return null;
  return messagesMoved(e, topicNow);
}

/**
 * Where an update_message event moved messages from and to, whatever their number (one message
 * too, change_one), or null (a content edit). `whole` when all of the topic moved (change_all).
 * `topicNow` as for topicMove.
 */
export function messagesMoved(e: MoveFields, topicNow: string | undefined): TopicMove | null {
  if (e.stream_id === undefined) return null;
  const newTopic = e.subject ?? e.topic;
  const renamed = newTopic !== undefined && e.orig_subject !== undefined;
  if (!renamed && e.new_stream_id === undefined) return null;
  const fromTopic = renamed ? e.orig_subject! : topicNow;
  const toTopic = renamed ? newTopic : topicNow;
  if (fromTopic === undefined || toTopic === undefined) return null;
  return {
    from: { streamId: e.stream_id, topic: fromTopic },
    to: { streamId: e.new_stream_id ?? e.stream_id, topic: toTopic },
    whole: e.propagate_mode === 'change_all',
  };
}

/** Where a place is after a move: the move's destination if it was the moved topic, else null. */
export function placeAfterMove(p: Place, mv: TopicMove): Place | null {
  return p.streamId === mv.from.streamId && sameTopic(p.topic, mv.from.topic) ? mv.to : null;
}

/**
 * A topic's view after its topic moved: the same view of the topic where it went (a search in
 * it stays a search), or null when the view is not of the moved topic.
 */
export function narrowAfterMove(n: Narrow, mv: TopicMove): Narrow | null {
  const channel = channelOf(n);
  const topic = topicOf(n);
  if (channel === undefined || topic === undefined) return null;
  const to = placeAfterMove({ streamId: channel, topic }, mv);
  if (!to) return null;
  return {
    terms: n.terms.map((t) =>
      t.negated
        ? t
        : t.operator === 'channel'
          ? { ...t, operand: String(to.streamId) }
          : t.operator === 'topic'
            ? { ...t, operand: to.topic }
            : t,
    ),
    near: n.near,
  };
}

// ---- Moving messages: which ones by default ---------------------------------------------------

/** Where a message is in its topic: its first message, its last, or one between. */
export type Placement = 'first' | 'intermediate' | 'last';

export type PropagateMode = 'change_one' | 'change_later' | 'change_all';

/**
 * The move's default for a message's place in its topic, as the reference's web app chooses it:
 * its first message moves the whole topic, its last only itself, one between it and the later.
 */
export const PROPAGATE_FOR: Record<Placement, PropagateMode> = {
  first: 'change_all',
  intermediate: 'change_later',
  last: 'change_one',
};

/** Whether a narrow holds each conversation it shows whole (not a search, a sender, a flag). */
function wholeConversations(n: Narrow): boolean {
  return n.terms.every((t) => !t.negated && (t.operator === 'channel' || t.operator === 'topic'));
}

/**
 * Where a message is in its topic, as far as a view of it tells (null: it does not, ask the
 * server). A search shows a message out of its conversation: moving only it is the default
 * there, as for a topic's last message. In a topic's view the run's ends tell; in a view of whole
 * conversations (a channel, all messages), its topic's other messages there.
 */
export function placementInView(
  view: { narrow: Narrow; ids: readonly number[]; foundOldest: boolean; foundNewest: boolean },
  m: { id: number; stream_id?: number; subject: string },
  get: (id: number) => { stream_id?: number; subject: string } | undefined,
): Placement | null {
  const n = view.narrow;
  if (find(n, 'search') !== undefined) return 'last';
  if (m.stream_id === undefined || !wholeConversations(n)) return null;
  const ids = view.ids.filter((id) => Number.isInteger(id));
  if (!ids.includes(m.id)) return null;
  if (isConversation(n)) {
    if (view.foundOldest && ids[0] === m.id) return 'first';
    if (view.foundNewest && ids.at(-1) === m.id) return 'last';
    return 'intermediate';
  }
  let older = false;
  let newer = false;
  for (const id of ids) {
    if (id === m.id) continue;
    const x = get(id);
    if (!x || x.stream_id !== m.stream_id || !sameTopic(x.subject, m.subject)) continue;
    if (id < m.id) older = true;
    else newer = true;
    if (older && newer) return 'intermediate';
  }
  if (view.foundNewest && !newer) return 'last';
  if (view.foundOldest && !older) return 'first';
  return null;
}

/** Where a message is in its topic, from the server's answer around it (its neighbours). */
export function placementAround(id: number, around: readonly { id: number }[]): Placement {
  if (!around.some((x) => x.id < id)) return 'first';
  if (!around.some((x) => x.id > id)) return 'last';
  return 'intermediate';
}
