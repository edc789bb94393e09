/**
 * Inline patterns that make links: `[text](url "title")`, bare URLs and the realm's linkifiers,
 * each through the URL rules (a disallowed URL stays text; local links become relative).
 */
import type { InlineState, Pattern } from './inline-pattern.js';
import { AFTER_GROUP, OUTER_GROUP } from './linkifiers.js';
import { El } from './tree.js';
import { rewriteLocalLink, sanitizeUrl, WEB_LINK_RE } from './urls.js';

/** An <a> for a URL, or null when the URL is not allowed (the text then stays text). */
function urlToA(s: InlineState, url: string, text: string): El | null {
  const href = sanitizeUrl(url);
  if (href === null) return null;
  const a = new El('a', { href: rewriteLocalLink(s.ctx.realmUrl, href) });
  a.text = text;
  a.atomic = true;
  return a;
}

let lastLinkData = '';
let lastLinkClose = -1;

/** `[text](url "title")`: the text is taken literally; a disallowed URL leaves it all as text. */
export const link: Pattern = {
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

export const autolink: Pattern = {
  re: WEB_LINK_RE,
  kind: 'first',
  handle: (m, s) => {
    const url = m.groups!.url!;
    return urlToA(s, url, url) ?? { literal: url };
  },
};

export function linkifierPattern(index: number): Pattern {
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
