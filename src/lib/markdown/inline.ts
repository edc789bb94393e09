/**
 * Inline markup, processed the way the reference's Markdown engine does it: an ordered list of
 * patterns; each pattern in turn replaces every match in the text with a placeholder for the
 * element it built; the text inside a built element is then processed with the patterns after it
 * (unless it is atomic, like code or link text). Order decides precedence, so `**[a](b)**` is a
 * link inside bold, and `@**Name**` is a mention before it could be bold.
 *
 * Order: code spans, ***strong-em***, user mentions, channel/topic/message links, group mentions,
 * [links](url), bare URLs, linkifiers, **strong**, *em*, ~~del~~, :emoji:, emoticons, newlines,
 * Unicode emoji.
 */
import { emojiCodeForName, emojiCodeOf, emojiNameForCode } from '../emoji/index.js';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../events.js';
import type { RenderOptions } from './context.js';
import type { PreparedContext, RenderState } from './prepare.js';
import { AFTER_GROUP, OUTER_GROUP } from './linkifiers.js';
import { renderTex } from './tex.js';
import { parseTimestamp } from './timestamp.js';
import { El } from './tree.js';
import {
  encodeChannel,
  hashUtilEncode,
  rewriteLocalLink,
  sanitizeUrl,
  WEB_LINK_RE,
} from './urls.js';

/** What a pattern's handler returns: an element, literal text (kept as is), or no match. */
type Made = El | { literal: string } | null;

type Pattern = {
  re: RegExp;
  /**
   * `search`: on a miss, keep searching after the match. `first`: the reference's older
   * patterns, which look only at the leftmost match; a miss ends the pattern for this text.
   */
  kind: 'search' | 'first';
  /** Whether an element's text is processed by the later patterns (false: atomic). */
  handle(m: RegExpExecArray, s: InlineState): Made | { el: Made; start: number; end: number };
};

export type InlineState = {
  ctx: PreparedContext;
  opts: RenderOptions;
  /** The channels links may point to (null: all of the context's). */
  linkable: ReadonlySet<number> | null;
  out: RenderState;
  inBlockquote: boolean;
  stash: (El | { literal: string })[];
};

// eslint-disable-next-line no-control-regex -- our placeholders are delimited by STX/ETX
const PH_RE = /\u0002(\d+)\u0003/g;
const BEFORE_MENTION = `(?<![^\\s'"\\(\\{\\[\\/<])`;

function emojiEl(code: string, display: string): El {
  const title = display.slice(1, -1).replace(/_/g, ' ');
  const el = new El('span', {
    class: `emoji emoji-${code}`,
    title,
    role: 'img',
    'aria-label': title,
  });
  el.text = display;
  el.atomic = true;
  return el;
}

function imageEmojiEl(src: string, display: string): El {
  const el = new El('img', {
    src,
    class: 'emoji',
    alt: display,
    title: display.slice(1, -1).replace(/_/g, ' '),
  });
  el.atomic = true;
  return el;
}

/** An <a> for a URL, or null when the URL is not allowed (the text then stays text). */
function urlToA(s: InlineState, url: string, text: string): El | null {
  const href = sanitizeUrl(url);
  if (href === null) return null;
  const a = new El('a', { href: rewriteLocalLink(s.ctx.realmUrl, href) });
  a.text = text;
  a.atomic = true;
  return a;
}

function simpleTag(tag: string, re: RegExp, group = 1): Pattern {
  return {
    re,
    kind: 'first',
    handle: (m) => {
      const el = new El(tag);
      el.text = m[group]!;
      return el;
    },
  };
}

const userMention: Pattern = {
  re: new RegExp(`${BEFORE_MENTION}@(_?)\\*\\*([^*]+)\\*\\*`, 'gsu'),
  kind: 'search',
  handle: (m, s) => {
    let name = m[2]!;
    let silent = m[1] === '_' || s.inBlockquote;
    const topicWildcard = name === 'topic';
    const channelWildcard = ['all', 'everyone', 'stream', 'channel'].includes(name);
    let userId: string | null = null;
    if (channelWildcard) {
      if (!silent) s.out.mentionsStreamWildcard = true;
      userId = '*';
    } else if (topicWildcard) {
      if (!silent) s.out.mentionsTopicWildcard = true;
    } else {
      const idSyntax = /^(.+)?\|(\d+)$/s.exec(name);
      let user;
      if (idSyntax) {
        user = s.ctx.usersById.get(Number(idSyntax[2]));
        if (
          idSyntax[1] !== undefined &&
          user &&
          user.full_name.toLowerCase() !== idSyntax[1].toLowerCase()
        )
          return null;
      } else {
        user = s.ctx.usersByName.get(name.toLowerCase());
      }
      if (!user) return null;
      if (!user.is_active) silent = true;
      if (!silent) s.out.mentionsUserIds.add(user.id);
      name = user.full_name;
      userId = String(user.id);
    }
    const el = new El('span');
    if (userId !== null) el.attrs['data-user-id'] = userId;
    let cls = topicWildcard
      ? 'topic-mention'
      : channelWildcard
        ? 'user-mention channel-wildcard-mention'
        : 'user-mention';
    if (silent) cls += ' silent';
    el.attrs.class = cls;
    el.text = silent ? name : `@${name}`;
    el.atomic = true;
    return el;
  },
};

const groupMention: Pattern = {
  re: new RegExp(`${BEFORE_MENTION}@(_?)\\*([^*]+)\\*`, 'gsu'),
  kind: 'search',
  handle: (m, s) => {
    const group = s.ctx.groupsByName.get(m[2]!.toLowerCase());
    if (!group) return null;
    const silent = m[1] === '_' || s.inBlockquote || group.deactivated;
    if (!silent) s.out.mentionsGroupIds.add(group.id);
    const el = new El('span', {
      class: silent ? 'user-group-mention silent' : 'user-group-mention',
      'data-user-group-id': String(group.id),
    });
    const name = SYSTEM_GROUP_DISPLAY_NAMES[group.name] ?? group.name;
    el.text = silent ? name : `@${name}`;
    el.atomic = true;
    return el;
  },
};

/** The id of the channel named `name`, if it exists and the content may link to it. */
function linkableChannel(s: InlineState, name: string): number | undefined {
  const id = s.ctx.channelsByName.get(name);
  if (id === undefined || (s.linkable !== null && !s.linkable.has(id))) return undefined;
  return id;
}

/**
 * Every name that `#**…**` syntax in `content` could refer to as a channel (before rendering,
 * to find which of them the sender may link: RenderOptions.linkable_channel_ids). A superset:
 * names inside code blocks are included too.
 */
export function possibleChannelNames(content: string): Set<string> {
  const names = new Set<string>();
  for (const m of content.matchAll(/#\*\*([^*]+)\*\*/g)) {
    const inner = m[1]!;
    names.add(inner);
    const gt = inner.indexOf('>');
    if (gt >= 0) names.add(inner.slice(0, gt));
  }
  return names;
}

/** The (channel, topic) pairs `#**channel>topic**` links in `content` name (not message links). */
export function possibleTopicLinks(content: string): { channel: string; topic: string }[] {
  const out: { channel: string; topic: string }[] = [];
  const seen = new Set<string>();
  for (const m of content.matchAll(/#\*\*([^*>]+)>([^*]*)\*\*/g)) {
    if (/@\d+$/.test(m[2]!)) continue;
    const key = `${m[1]!}\n${m[2]!}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ channel: m[1]!, topic: m[2]! });
  }
  return out;
}

/** The name a group mention shows: system groups by their display names, as the reference. */
const SYSTEM_GROUP_DISPLAY_NAMES: Record<string, string> = {
  'role:nobody': 'Nobody',
  'role:owners': 'Owners',
  'role:administrators': 'Administrators',
  'role:moderators': 'Moderators',
  'role:fullmembers': 'Full members',
  'role:members': 'Members',
  'role:everyone': 'Everyone',
  'role:internet': 'Everyone on the internet',
};

/** `#channel > topic` (the empty topic shown as an emphasized "general chat"), then `after`. */
function topicLinkText(el: El, channel: string, topic: string, after: string): void {
  el.atomic = true;
  if (topic !== '') {
    el.text = `#${channel} > ${topic}${after}`;
    return;
  }
  el.text = `#${channel} > `;
  const em = el.append(new El('em'));
  em.text = EMPTY_TOPIC_DISPLAY_NAME;
  em.atomic = true;
  em.tail = after;
}

const messageLink: Pattern = {
  re: new RegExp(`${BEFORE_MENTION}#\\*\\*([^*>]+)>([^*]*)@(\\d+)\\*\\*`, 'gsu'),
  kind: 'search',
  handle: (m, s) => {
    const id = linkableChannel(s, m[1]!);
    if (id === undefined) return null;
    const el = new El('a', {
      class: 'message-link',
      href: `/#narrow/channel/${encodeChannel(id, m[1]!)}/topic/${hashUtilEncode(m[2]!)}/near/${m[3]!}`,
    });
    topicLinkText(el, m[1]!, m[2]!, ' @ 💬');
    return el;
  },
};

const topicLink: Pattern = {
  re: new RegExp(`${BEFORE_MENTION}#\\*\\*([^*>]+)>([^*]*)\\*\\*`, 'gsu'),
  kind: 'search',
  handle: (m, s) => {
    const id = linkableChannel(s, m[1]!);
    if (id === undefined) return null;
    const withId = s.opts.topic_first_message?.[`${m[1]!}\n${m[2]!}`];
    const el = new El('a', {
      class: 'stream-topic',
      'data-stream-id': String(id),
      href:
        `/#narrow/channel/${encodeChannel(id, m[1]!)}/topic/${hashUtilEncode(m[2]!)}` +
        (withId !== undefined ? `/with/${withId}` : ''),
    });
    topicLinkText(el, m[1]!, m[2]!, '');
    return el;
  },
};

const channelLink: Pattern = {
  re: new RegExp(`${BEFORE_MENTION}#\\*\\*([^*]+)\\*\\*`, 'gsu'),
  kind: 'search',
  handle: (m, s) => {
    const id = linkableChannel(s, m[1]!);
    if (id === undefined) return null;
    const el = new El('a', {
      class: 'stream',
      'data-stream-id': String(id),
      href: `/#narrow/channel/${encodeChannel(id, m[1]!)}`,
    });
    el.text = `#${m[1]!}`;
    el.atomic = true;
    return el;
  },
};

let lastLinkData = '';
let lastLinkClose = -1;

/** `[text](url "title")`: the text is taken literally; a disallowed URL leaves it all as text. */
const link: Pattern = {
  re: /(?<!!)\[/g,
  kind: 'search',
  handle: (m, s) => {
    const data = m.input;
    // A link needs a `](` after its `[`: without one, skip the bracket scan (which would make a
    // run of `[` quadratic).
    if (data !== lastLinkData) {
      lastLinkData = data;
      lastLinkClose = data.lastIndexOf('](');
    }
    if (lastLinkClose < m.index) return null;
    let i = m.index + 1;
    let depth = 1;
    const textStart = i;
    for (; i < data.length; i++) {
      if (data[i] === '[') depth++;
      else if (data[i] === ']' && --depth === 0) break;
    }
    if (depth !== 0) return null;
    const text = data.slice(textStart, i);
    i++;
    if (data[i] !== '(') return null;
    i++;
    while (i < data.length && /\s/.test(data[i]!)) i++;
    let inner: string;
    if (data[i] === '<') {
      const close = data.indexOf('>', i);
      if (close < 0) return null;
      inner = data.slice(i + 1, close);
      i = close + 1;
      const rest = /^\s*(?:("[^"]*"|'[^']*')\s*)?\)/.exec(data.slice(i));
      if (!rest) return null;
      i += rest[0].length;
      inner = rest[1] ? `${inner} ${rest[1]}` : inner;
    } else {
      const start = i;
      let parens = 1;
      for (; i < data.length; i++) {
        if (data[i] === '(') parens++;
        else if (data[i] === ')' && --parens === 0) break;
      }
      if (parens !== 0) return null;
      inner = data.slice(start, i);
      i++;
    }
    let href = inner.trim();
    let title: string | null = null;
    const t = /^(.*?)\s+("([^"]*)"|'([^']*)')$/s.exec(href);
    if (t) {
      href = t[1]!.trim();
      title = (t[3] ?? t[4] ?? '').replace(/\s+/g, ' ');
    }
    const a = urlToA(s, href, text);
    if (!a) return null;
    if (!a.text.trim()) a.text = a.attrs.href!;
    if (title !== null) a.attrs.title = title;
    return { el: a, start: m.index, end: i };
  },
};

const autolink: Pattern = {
  re: WEB_LINK_RE,
  kind: 'first',
  handle: (m, s) => {
    const url = m.groups!.url!;
    return urlToA(s, url, url) ?? { literal: url };
  },
};

const EMOTICONS: Record<string, string> = {
  ':)': 'smile',
  '(:': 'smile',
  ':(': 'frown',
  '<3': 'heart',
  ':|': 'neutral',
  ':/': 'confused',
  ';)': 'wink',
  ':D': 'grinning',
  ':o': 'open_mouth',
  ':O': 'open_mouth',
  ':p': 'stuck_out_tongue',
  ':P': 'stuck_out_tongue',
};
const TERMINALS = `\\s,.;?!()\\[\\]"'`;
const emoticon: Pattern = {
  re: new RegExp(
    `(?<![^${TERMINALS}])(${Object.keys(EMOTICONS)
      .map((e) => e.replace(/[()|/]/g, '\\$&'))
      .join('|')})(?![^${TERMINALS}])`,
    'gu',
  ),
  kind: 'first',
  handle: (m, s) => {
    if (!s.opts.translate_emoticons) return null;
    const name = EMOTICONS[m[1]!]!;
    return emojiEl(emojiCodeForName(name)!, `:${name}:`);
  },
};

const emoji: Pattern = {
  re: /:[\p{L}\p{N}_\-+]+:/gu,
  kind: 'first',
  handle: (m, s) => {
    const name = m[0].slice(1, -1);
    const custom = s.ctx.realmEmoji.get(name);
    if (custom !== undefined) return imageEmojiEl(custom, m[0]);
    if (name === 'zulip')
      return imageEmojiEl('/static/generated/emoji/images/emoji/unicode/zulip.png', m[0]);
    const code = emojiCodeForName(name);
    return code ? emojiEl(code, m[0]) : { literal: m[0] };
  },
};

const MOD = `(?:\\p{Emoji_Modifier}|\\uFE0F\\u20E3?|[\\u{E0020}-\\u{E007E}]+\\u{E007F})`;
const unicodeEmoji: Pattern = {
  re: new RegExp(
    `\\p{Regional_Indicator}\\p{Regional_Indicator}|\\p{Emoji}${MOD}?(?:\\u200D(?:\\p{Regional_Indicator}\\p{Regional_Indicator}|\\p{Emoji}${MOD}?))*`,
    'gu',
  ),
  kind: 'search',
  handle: (m) => {
    if (/^\P{Emoji_Presentation}\u20E3?$/u.test(m[0])) return null;
    const code = emojiCodeOf(m[0]);
    const name = emojiNameForCode(code);
    return name ? emojiEl(code, `:${name}:`) : null;
  },
};

function linkifierPattern(index: number): Pattern {
  return {
    re: /$^/g, // replaced per context in patternsFor()
    kind: 'search',
    handle: (m, s) => {
      const l = s.ctx.linkifiers[index]!;
      const groups = m.groups ?? {};
      const a = urlToA(s, l.expand(groups), groups[OUTER_GROUP] ?? '');
      if (!a) return null;
      const idx = (
        m as RegExpExecArray & {
          indices?: [number, number][] & { groups?: Record<string, [number, number]> };
        }
      ).indices!.groups![OUTER_GROUP]!;
      void AFTER_GROUP;
      return { el: a, start: idx[0], end: idx[1] };
    },
  };
}

const notStrong: Pattern = {
  re: /(?:^|(?<=\s))(?:\*{1,3}|_{1,3})(?=\s|$)/gu,
  kind: 'search',
  handle: (m) => ({ literal: m[0] }),
};

const newline: Pattern = {
  re: /\n/g,
  kind: 'search',
  handle: () => new El('br'),
};

/** `$$…$$` (not `$$$`, not touching a word, no newline, not starting with `_`): inline TeX. */
const tex: Pattern = {
  re: /(?<![\p{L}\p{N}_$])\$\$([^\n_$](?:\\\$|[^$\n])*)\$\$(?!\$)(?![\p{L}\p{N}_])/gu,
  kind: 'first',
  handle: (m) => {
    const html = renderTex(m[1]!, false);
    if (html !== null) return El.rawInline(html);
    const el = new El('span', { class: 'tex-error' });
    el.text = `$$${m[1]!}$$`;
    el.atomic = true;
    el.verbatim = true;
    return el;
  },
};

/** `<time:…>`: a `<time>` the clients show in the reader's time zone, or the reference's error. */
const timestamp: Pattern = {
  re: /<time:([^>]*?)>/g,
  kind: 'first',
  handle: (m) => {
    const text = m[1]!;
    const iso = parseTimestamp(text);
    const el = iso
      ? new El('time', { datetime: iso })
      : new El('span', { class: 'timestamp-error' });
    el.text = iso ? text : `Invalid time format: ${text}`;
    el.atomic = true;
    el.verbatim = true;
    return el;
  },
};

const BEFORE_LINKIFIERS: Pattern[] = [
  {
    re: /(?<!\\)((?:\\{2})+)(?=`+)|(?<!\\)(`+)(.+?)(?<!`)\2(?!`)/gsu,
    kind: 'search',
    handle: (m) => {
      if (m[3] !== undefined) {
        const el = new El('code');
        el.text = m[3];
        el.atomic = true;
        el.verbatim = true;
        return el;
      }
      return { literal: m[1]!.slice(0, m[1]!.length / 2) };
    },
  },
  {
    re: /\*\*\*(?!\s+)([^*^\n]+)(?<!\s)\*\*\*/gsu,
    kind: 'first',
    handle: (m) => {
      const strong = new El('strong');
      const em = strong.append(new El('em'));
      em.text = m[1]!;
      return strong;
    },
  },
  userMention,
  tex,
  messageLink,
  topicLink,
  channelLink,
  timestamp,
  groupMention,
  link,
  autolink,
];

const AFTER_LINKIFIERS: Pattern[] = [
  simpleTag('strong', /\*\*([^\n]+?)\*\*/gsu),
  simpleTag('em', /\*(?!\s+)([^*^\n]+)(?<!\s)\*/gsu),
  simpleTag('del', /(?<!~)~~([^~\n]+?)~~(?!~)/gsu),
  notStrong,
  emoji,
  emoticon,
  newline,
  unicodeEmoji,
];

const patternCache = new WeakMap<PreparedContext, Pattern[]>();

function patternsFor(ctx: PreparedContext): Pattern[] {
  let list = patternCache.get(ctx);
  if (!list) {
    const linkifiers = ctx.linkifiers.map((l, i): Pattern => ({
      ...linkifierPattern(i),
      re: l.re,
    }));
    list = [...BEFORE_LINKIFIERS, ...linkifiers, ...AFTER_LINKIFIERS];
    patternCache.set(ctx, list);
  }
  return list;
}

function stash(s: InlineState, item: El | { literal: string }): string {
  s.stash.push(item);
  return `\u0002${s.stash.length - 1}\u0003`;
}

/** Applies one pattern once; returns the new text, or null when it does not match. */
function applyPattern(
  patterns: Pattern[],
  index: number,
  data: string,
  startIndex: number,
  s: InlineState,
): { data: string; resumeAt: number } | null {
  const p = patterns[index]!;
  let from = startIndex;
  for (;;) {
    p.re.lastIndex = from;
    const m = p.re.exec(data);
    if (!m) return null;
    let made = p.handle(m, s);
    let start = m.index;
    let end = m.index + m[0].length;
    if (made !== null && 'start' in made) {
      start = made.start;
      end = made.end;
      made = made.el;
    }
    if (made === null) {
      if (p.kind === 'first') return null;
      from = end > from ? end : from + 1;
      if (from > data.length) return null;
      continue;
    }
    if (made instanceof El && !made.atomic) {
      for (const el of [made, ...made.children]) {
        if (el.text) el.text = handleInline(patterns, el.text, index + 1, s);
      }
    }
    const placeholder = stash(s, made);
    // The reference searches again from the start; for `search` patterns nothing before the
    // replacement can match now (it did not before, and the placeholder matches nothing), so
    // resume after it, which keeps many matches linear rather than quadratic.
    return {
      data: data.slice(0, start) + placeholder + data.slice(end),
      resumeAt: p.kind === 'search' ? start + placeholder.length : 0,
    };
  }
}

function handleInline(
  patterns: Pattern[],
  data: string,
  patternIndex: number,
  s: InlineState,
): string {
  let i = patternIndex;
  let from = 0;
  while (i < patterns.length) {
    const r = applyPattern(patterns, i, data, from, s);
    if (r) {
      data = r.data;
      from = r.resumeAt;
    } else {
      i++;
      from = 0;
    }
  }
  return data;
}

/** Fills `el` (text and children) from processed text holding placeholders. */
function expandInto(el: El, data: string, s: InlineState): void {
  el.text = '';
  el.children = [];
  let last = 0;
  let prev: El | null = null;
  const addText = (t: string) => {
    if (!t) return;
    if (prev) prev.tail += t;
    else el.text += t;
  };
  for (const m of data.matchAll(PH_RE)) {
    addText(data.slice(last, m.index));
    last = m.index + m[0].length;
    const item = s.stash[Number(m[1])];
    if (item === undefined) continue;
    if (item instanceof El) {
      resolve(item, s);
      el.children.push(item);
      prev = item;
    } else {
      addText(item.literal);
    }
  }
  addText(data.slice(last));
}

function resolve(el: El, s: InlineState): void {
  const kids = el.children;
  if (el.text.includes('\u0002')) {
    expandInto(el, el.text, s);
    el.children.push(...kids);
  }
  for (const k of kids) resolve(k, s);
}

/** Renders the inline content of a block element into it. */
export function renderInline(el: El, text: string, s: InlineState): void {
  // Placeholder delimiters are ours alone.
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0002\u0003]/g, '\ufffd');
  const data = handleInline(patternsFor(s.ctx), clean, 0, s);
  expandInto(el, data, s);
}
