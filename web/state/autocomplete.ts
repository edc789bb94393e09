/**
 * Compose autocomplete: which token the caret is in (`@name` for people, groups and wildcard
 * mentions, `#name` for channels, `:name` for emoji), the candidates ranked as a person expects
 * (a prefix of the whole name, then of any word, then anywhere), and the text once one is
 * chosen, in the syntax the server's markdown reads: `@**Full Name**` (with `|id` when two
 * people share a name), `@*group*`, `#**channel**`, `:emoji:`. Also the topic box's candidates,
 * and the commands a message may start with (`/poll`, `/todo`, `/me`).
 */
export type TokenKind = 'mention' | 'channel' | 'emoji' | 'command';
export type Token = { kind: TokenKind; query: string; start: number; end: number; silent: boolean };

export type Candidate = {
  kind: 'user' | 'group' | 'wildcard' | 'channel' | 'emoji' | 'topic' | 'command';
  key: string;
  label: string;
  detail?: string;
  /** Text replacing the token (a trailing space is added). */
  insert: string;
  userId?: number;
  emojiCode?: string;
  emojiUrl?: string;
};

const MAX_QUERY = 40;

/** The autocomplete token ending at the caret, if any. */
export function tokenAt(text: string, caret: number): Token | null {
  const before = text.slice(0, caret);
  const lineStart = before.lastIndexOf('\n') + 1;
  const line = before.slice(lineStart);
  // A command: `/` then letters, at the very start of the message.
  const command = /^\/([a-z]{0,10})$/i.exec(before);
  if (command) return { kind: 'command', query: command[1]!, start: 0, end: caret, silent: false };
  // Emoji: `:` then a word, no spaces.
  const emoji = /(^|[\s(])(:)([a-z0-9_+-]{1,40})$/i.exec(line);
  if (emoji) {
    const start = lineStart + emoji.index + emoji[1]!.length;
    return { kind: 'emoji', query: emoji[3]!, start, end: caret, silent: false };
  }
  // Mentions and channels: names may hold spaces; not after a completed `**…**`.
  const m = /(^|[\s(])(@_?|#)(\*{0,2})([^\n*@#]{0,40})$/.exec(line);
  if (!m) return null;
  if (m[4]!.length > MAX_QUERY || /\s{2}/.test(m[4]!) || /^\s/.test(m[4]!)) return null;
  const sigil = m[2]!;
  const start = lineStart + m.index + m[1]!.length;
  return {
    kind: sigil === '#' ? 'channel' : 'mention',
    query: m[4]!,
    start,
    end: caret,
    silent: sigil === '@_',
  };
}

/** 0: the name starts with the query; 1: a word of it does; 2: it contains it; -1: no match. */
export function matchTier(name: string, query: string): number {
  const n = name.toLowerCase();
  const q = query.toLowerCase().trim();
  if (q === '') return 0;
  if (n.startsWith(q)) return 0;
  if (n.split(/[\s_\-.]+/).some((w) => w.startsWith(q))) return 1;
  if (n.includes(q)) return 2;
  return -1;
}

/** Items matching `query`, best first (tier, then the caller's order, then by name). */
export function rank<T>(items: Iterable<T>, query: string, name: (x: T) => string, limit = 8): T[] {
  const scored: { x: T; tier: number; i: number; n: string }[] = [];
  let i = 0;
  for (const x of items) {
    const n = name(x);
    const tier = matchTier(n, query);
    if (tier >= 0) scored.push({ x, tier, i: i, n });
    i++;
  }
  scored.sort((a, b) => a.tier - b.tier || a.i - b.i || a.n.localeCompare(b.n));
  return scored.slice(0, limit).map((s) => s.x);
}

export type People = {
  users: { user_id: number; full_name: string; email: string; is_bot?: boolean }[];
  groups: { id: number; name: string; description: string }[];
  /** Ids of people to offer first (e.g. this conversation's recent senders). */
  recent?: number[];
  /**
   * People not offered (those the user muted), unless the query names one exactly as
   * `Name|id`, the way a mention of someone sharing a name is written.
   */
  hidden?: (id: number) => boolean;
};

/** The person a query names as `Full Name|id` (any case), if it does. */
export function namedById<U extends { user_id: number; full_name: string }>(
  query: string,
  users: readonly U[],
): U | undefined {
  const m = /^(.+)\|(\d+)$/.exec(query.trim());
  if (!m) return undefined;
  const id = Number(m[2]);
  const name = m[1]!.trim().toLowerCase();
  return users.find((u) => u.user_id === id && u.full_name.toLowerCase() === name);
}

const WILDCARDS = [
  { name: 'all', detail: 'Notify everyone here' },
  { name: 'everyone', detail: 'Notify everyone here' },
  { name: 'channel', detail: 'Notify the channel' },
  { name: 'topic', detail: 'Notify people in this topic' },
];

export function mentionCandidates(query: string, p: People, silent: boolean): Candidate[] {
  const recent = new Map((p.recent ?? []).map((id, i) => [id, i]));
  const hidden = p.hidden ?? (() => false);
  const users = p.users
    .filter((u) => !hidden(u.user_id))
    .sort((a, b) => (recent.get(a.user_id) ?? 1e9) - (recent.get(b.user_id) ?? 1e9));
  const nameCount = new Map<string, number>();
  for (const u of p.users) nameCount.set(u.full_name, (nameCount.get(u.full_name) ?? 0) + 1);
  const prefix = silent ? '@_' : '@';
  const userCandidate = (u: People['users'][number]): Candidate => {
    const unique = (nameCount.get(u.full_name) ?? 0) <= 1;
    return {
      kind: 'user',
      key: `u:${u.user_id}`,
      label: u.full_name,
      detail: u.email,
      userId: u.user_id,
      insert: `${prefix}**${u.full_name}${unique ? '' : `|${u.user_id}`}**`,
    };
  };
  // Named exactly (`Name|id`): that person alone, muted or not (as the reference).
  const named = namedById(query, p.users);
  if (named) return [userCandidate(named)];
  const out: Candidate[] = [];
  if (!silent) {
    for (const w of rank(WILDCARDS, query, (w) => w.name, 2)) {
      out.push({
        kind: 'wildcard',
        key: `w:${w.name}`,
        label: w.name,
        detail: w.detail,
        insert: `@**${w.name}**`,
      });
    }
  }
  for (const u of rank(users, query, (u) => u.full_name, 8)) out.push(userCandidate(u));
  const groups = p.groups.filter((g) => !g.name.startsWith('role:'));
  for (const g of rank(groups, query, (g) => g.name, 3)) {
    out.push({
      kind: 'group',
      key: `g:${g.id}`,
      label: g.name,
      detail: g.description,
      insert: `${prefix}*${g.name}*`,
    });
  }
  // Exact and prefix matches of people first, then groups and wildcards.
  return out
    .map((c, i) => ({ c, i, t: matchTier(c.label, query) }))
    .sort((a, b) => a.t - b.t || a.i - b.i)
    .slice(0, 10)
    .map((x) => x.c);
}

export function channelCandidates(
  query: string,
  channels: { stream_id: number; name: string; description: string }[],
): Candidate[] {
  return rank(channels, query, (c) => c.name, 8).map((c) => ({
    kind: 'channel',
    key: `c:${c.stream_id}`,
    label: c.name,
    detail: c.description,
    insert: `#**${c.name}**`,
  }));
}

export type EmojiEntry = {
  name: string;
  code: string;
  kind: 'unicode' | 'realm' | 'extra';
  url?: string;
};

/** Emoji by how well the name matches, then the shorter name (`smile` before `smiley_cat`). */
export function emojiCandidates(query: string, emoji: readonly EmojiEntry[]): Candidate[] {
  const scored: { e: EmojiEntry; tier: number }[] = [];
  for (const e of emoji) {
    const tier = matchTier(e.name, query);
    if (tier >= 0) scored.push({ e, tier });
  }
  scored.sort(
    (a, b) =>
      a.tier - b.tier || a.e.name.length - b.e.name.length || a.e.name.localeCompare(b.e.name),
  );
  return scored.slice(0, 8).map(({ e }) => ({
    kind: 'emoji',
    key: `e:${e.name}`,
    label: e.name,
    insert: `:${e.name}:`,
    emojiCode: e.kind === 'unicode' ? e.code : undefined,
    emojiUrl: e.url,
  }));
}

export function topicCandidates(query: string, topics: readonly string[]): Candidate[] {
  return rank(topics, query, (t) => t, 8).map((t) => ({
    kind: 'topic',
    key: `t:${t}`,
    label: t,
    insert: t,
  }));
}

/**
 * The commands a message may start with, as the reference's compose box offers them: the server
 * makes a poll or a to-do list of the first two (src/lib/widgets.ts), the third is rendered as an
 * action ("/me waves").
 */
const COMMANDS = [
  { name: 'poll', detail: 'Create a poll' },
  { name: 'todo', detail: 'Create a to-do list' },
  { name: 'me', detail: 'Action message' },
] as const;

export function commandCandidates(query: string): Candidate[] {
  const q = query.toLowerCase();
  return COMMANDS.filter((c) => c.name.startsWith(q)).map((c) => ({
    kind: 'command',
    key: c.name,
    label: `/${c.name}`,
    detail: c.detail,
    insert: `/${c.name}`,
  }));
}

/** The text with the token replaced by the choice, and where the caret goes. */
export function applyCandidate(
  text: string,
  token: Token,
  c: Candidate,
): { text: string; caret: number } {
  const insert = c.insert + ' ';
  const next = text.slice(0, token.start) + insert + text.slice(token.end);
  return { text: next, caret: token.start + insert.length };
}

/**
 * The people a message's text mentions so that they are notified: `@**Full Name**` (one person
 * of that name, any case) and `@**Full Name|id**`, in the order written, each once. Not silent
 * mentions (`@_**…**`), wildcards, groups (`@*group*`), nor text in code (a fence or backticks),
 * which the server's markdown leaves as it is.
 */
export function notifiedMentions(
  text: string,
  users: readonly { user_id: number; full_name: string }[],
): number[] {
  const prose = text
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?(?:^\1[^\n]*$|(?![\s\S]))/gm, '')
    .replace(/`[^`\n]*`/g, '');
  const out: number[] = [];
  for (const m of prose.matchAll(/@\*\*([^*\n]+)\*\*/g)) {
    const inside = m[1]!;
    const named = namedById(inside, users);
    let id = named?.user_id;
    if (id === undefined) {
      const name = inside.trim().toLowerCase();
      const same = users.filter((u) => u.full_name.toLowerCase() === name);
      if (same.length === 1) id = same[0]!.user_id;
    }
    if (id !== undefined && !out.includes(id)) out.push(id);
  }
  return out;
}
