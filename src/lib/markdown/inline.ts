/**
 * Inline markup, processed the way the reference's Markdown engine does it: an ordered list of
 * patterns; each pattern in turn replaces every match in the text with a placeholder for the
 * element it built; the text inside a built element is then processed with the patterns after it
 * (unless it is atomic, like code or link text). Order decides precedence, so `**[a](b)**` is a
 * link inside bold, and `@**Name**` is a mention before it could be bold.
 *
 * Order: code spans, ***strong-em***, user mentions, channel/topic/message links, group mentions,
 * [links](url), bare URLs, linkifiers, **strong**, *em*, ~~del~~, :emoji:, emoticons, newlines,
 * Unicode emoji. The pattern families live beside it: inline-mentions.ts (mentions and channel,
 * topic and message links), inline-links.ts (links, URLs, linkifiers), inline-emoji.ts.
 */
import { emoji, emoticon, unicodeEmoji } from './inline-emoji.js';
import { autolink, link, linkifierPattern } from './inline-links.js';
import {
  channelLink,
  groupMention,
  messageLink,
  topicLink,
  userMention,
} from './inline-mentions.js';
import type { InlineState, Pattern } from './inline-pattern.js';
import type { PreparedContext } from './prepare.js';
import { renderTex } from './tex.js';
import { parseTimestamp } from './timestamp.js';
import { El } from './tree.js';

// eslint-disable-next-line no-control-regex -- our placeholders are delimited by STX/ETX
const PH_RE = /\u0002(\d+)\u0003/g;

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
