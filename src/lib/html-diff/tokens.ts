/**
 * Tokens of the HTML diff: a parsed fragment flattened into words (with their trailing
 * whitespace), `<img>` tags and link targets, each carrying the tags around it (lxml htmldiff's
 * tokenize).
 */
import { isBlank, parseFragment, START_WS_RE, TRAILING_WS_RE, WORDS_RE, type El } from './tree.js';

export type Token = {
  key: string;
  html: string;
  pre: string[];
  post: string[];
  ws: string;
  /** Link targets are shown only when they changed. */
  hideWhenEqual: boolean;
};

type Chunk = string | { img: string | null; tag: string } | { href: string };

/** Tags that need no end tag, as lxml's diff knows them. */
export const EMPTY_TAGS = new Set([
  'param',
  'img',
  'area',
  'br',
  'basefont',
  'input',
  'base',
  'meta',
  'link',
  'col',
]);
/** Python's html.escape(s, quote=True). */
function pyEscape(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#x27;');
}

function startTag(el: El): string {
  let out = `<${el.tag}`;
  for (const [name, value] of el.attrs) out += ` ${name}="${pyEscape(value ?? '')}"`;
  return out + '>';
}

function endTag(el: El): string {
  return `</${el.tag}>${START_WS_RE.test(el.tail) ? ' ' : ''}`;
}

function splitWords(text: string): string[] {
  if (isBlank(text)) return [];
  return text.match(WORDS_RE) ?? [];
}

function attr(el: El, name: string): string | null {
  const found = el.attrs.find(([k]) => k === name);
  return found ? found[1] : null;
}

function flatten(el: El, out: Chunk[], skipTag: boolean): void {
  if (!skipTag) {
    if (el.tag === 'img') out.push({ img: attr(el, 'src'), tag: startTag(el) });
    else out.push(startTag(el));
  }
  if (EMPTY_TAGS.has(el.tag) && el.text === '' && el.children.length === 0 && el.tail === '') {
    return;
  }
  for (const w of splitWords(el.text)) out.push(pyEscape(w));
  for (const child of el.children) flatten(child, out, false);
  if (el.tag === 'a') {
    const href = attr(el, 'href');
    if (href) out.push({ href });
  }
  if (!skipTag) {
    out.push(endTag(el));
    for (const w of splitWords(el.tail)) out.push(pyEscape(w));
  }
}

function splitTrailingWhitespace(word: string): [string, string] {
  const m = TRAILING_WS_RE.exec(word);
  return m ? [word.slice(0, m.index), m[0]] : [word, ''];
}

export function tokenize(html: string): Token[] {
  const cleaned = html.replace(/<\/?(ins|del).*?>/gis, '');
  const chunks: Chunk[] = [];
  flatten(parseFragment(cleaned), chunks, true);
  let accum: string[] = [];
  let current: Token | null = null;
  const result: Token[] = [];
  const push = (t: Token) => {
    current = t;
    accum = [];
    result.push(t);
  };
  for (const chunk of chunks) {
    if (typeof chunk !== 'string') {
      if ('img' in chunk) {
        // Equal when their sources are (the reference compares "<type>: src").
        push({
          key: `\0img: ${chunk.img ?? 'None'}`,
          html: chunk.tag,
          pre: accum,
          post: [],
          ws: '',
          hideWhenEqual: false,
        });
      } else {
        push({
          key: chunk.href,
          html: ` Link: ${chunk.href}`,
          pre: accum,
          post: [],
          ws: ' ',
          hideWhenEqual: true,
        });
      }
    } else if (!chunk.startsWith('<')) {
      const [word, ws] = splitTrailingWhitespace(chunk);
      push({ key: word, html: word, pre: accum, post: [], ws, hideWhenEqual: false });
    } else if (!chunk.startsWith('</')) {
      accum.push(chunk);
    } else if (accum.length > 0 || current === null) {
      accum.push(chunk);
    } else {
      (current as Token).post.push(chunk);
    }
  }
  if (result.length === 0) {
    return [{ key: '', html: '', pre: accum, post: [], ws: '', hideWhenEqual: false }];
  }
  result[result.length - 1]!.post.push(...accum);
  return result;
}
