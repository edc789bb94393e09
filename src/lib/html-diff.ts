/**
 * `content_html_diff` of an edit (GET /messages/{id}/history), as the reference computes it
 * (zerver/lib/html_diff.py: lxml's `htmldiff`, then `<ins>`/`<del>` turned into
 * `<span class="highlight_text_inserted">`/`<span class="highlight_text_deleted">`, the whole
 * wrapped in a `<div>`). This module reproduces that behaviour (checked against lxml 4.9 /
 * libxml2 2.9 on the reference's rendering test cases; see test/unit/html-diff.test.ts):
 *
 *  1. Both versions are parsed (htmlparser2) into an element tree and flattened into *tokens*:
 *     words (with their trailing whitespace), `<img>` tags, and the `href` of each link (shown
 *     only when it changed, as " Link: <href>"); the tags around a word ride on it.
 *  2. The token sequences are compared as Python's difflib.SequenceMatcher does (longest
 *     matching blocks, recursively; tokens frequent in long texts are not used as anchors), and
 *     matches of two tokens or fewer amid changes are dropped.
 *  3. The new version is rebuilt with each changed run wrapped: an insertion in `<ins>`, then the
 *     deletion it replaces in `<del>` (moved to where its unbalanced tags fit, or losing them).
 *  4. Insertions and deletions that span block elements are pushed inside them, and the result
 *     is serialized as libxml2's HTML serializer writes it.
 *
 * Pure; runs in the render worker (workers/render.worker.ts).
 */
import { QuoteType, Tokenizer } from 'htmlparser2';

// ---- a tiny element tree, text and tail as lxml models them ---------------------------------

type El = {
  tag: string;
  attrs: [string, string | null][];
  text: string;
  children: El[];
  tail: string;
  parent: El | null;
};

function element(tag: string, attrs: [string, string | null][] = []): El {
  return { tag, attrs, text: '', children: [], tail: '', parent: null };
}

function appendChild(parent: El, child: El): void {
  child.parent = parent;
  parent.children.push(child);
}

/** Elements written without an end tag (HTML 4's empty elements, as libxml2 knows them). */
const VOID_TAGS = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'link',
  'meta',
  'param',
]);

/** Python's str.isspace() characters (what `\s`, strip() and split() mean in the reference). */
const WS =
  ' \\t\\n\\r\\x0b\\x0c\\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const WORDS_RE = new RegExp(`[^${WS}]+(?:[${WS}]+|$)`, 'gu');
const ALL_WS_RE = new RegExp(`^[${WS}]*$`, 'u');
const TRAILING_WS_RE = new RegExp(`[${WS}]+$`, 'u');
const LEADING_WS_RE = new RegExp(`^[${WS}]+`, 'u');
const START_WS_RE = /^[ \t\n\r]/;

const isBlank = (s: string) => ALL_WS_RE.test(s);
const pyStrip = (s: string) => s.replace(LEADING_WS_RE, '').replace(TRAILING_WS_RE, '');

/**
 * Start tags that close the open element before them (libxml2's htmlStartClose, as its
 * behaviour shows): `<li>` closes an open `<p>` and `<li>`, `<p>` an open `<b>`, and so on.
 */
const START_CLOSES: Readonly<Record<string, readonly string[]>> = {
  a: ['a'],
  address: ['p', 'ul'],
  blockquote: ['p'],
  caption: ['p'],
  center: ['b', 'font', 'i', 'p'],
  col: ['caption', 'p'],
  colgroup: ['caption', 'colgroup', 'p'],
  dd: ['address', 'dir', 'dt', 'menu', 'p', 'pre'],
  dir: ['p'],
  div: ['p'],
  dl: ['address', 'dir', 'dt', 'menu', 'p', 'pre'],
  dt: ['address', 'dd', 'dir', 'menu', 'p', 'pre'],
  form: [
    'address',
    'dir',
    'dl',
    'form',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'menu',
    'ol',
    'p',
    'pre',
    'ul',
  ],
  h1: ['p'],
  h2: ['p'],
  h3: ['p'],
  h4: ['p'],
  h5: ['p'],
  h6: ['p'],
  hr: ['p'],
  li: ['address', 'dl', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'li', 'p', 'pre'],
  menu: ['p', 'ul'],
  ol: ['p', 'ul'],
  option: ['option'],
  p: ['b', 'big', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'i', 'p', 's', 'small', 'strike', 'tt', 'u'],
  pre: ['p', 'ul'],
  table: ['a', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'pre'],
  tbody: ['caption', 'colgroup', 'p', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr'],
  td: ['a', 'b', 'font', 'i', 'p', 'span', 'td', 'th', 'u'],
  tfoot: ['caption', 'colgroup', 'p', 'tbody', 'td', 'th', 'thead', 'tr'],
  th: ['a', 'b', 'font', 'i', 'p', 'span', 'td', 'th', 'u'],
  thead: ['caption', 'colgroup'],
  tr: ['caption', 'colgroup', 'p', 'td', 'th', 'tr'],
  ul: ['address', 'dir', 'menu', 'ol', 'p', 'pre'],
};

/** An end tag closes only elements of lower or equal priority (libxml2's htmlEndPriority). */
const END_PRIORITY: Readonly<Record<string, number>> = {
  div: 150,
  td: 160,
  th: 160,
  tr: 170,
  thead: 180,
  tbody: 180,
  tfoot: 180,
  table: 190,
};
const priorityOf = (tag: string) => END_PRIORITY[tag] ?? 100;

/**
 * Parses an HTML fragment into a `div` holding it, building the tree as libxml2's HTML parser
 * does (lxml's fragment_fromstring with a created parent): htmlparser2 tokenizes and decodes
 * entities; elements close as libxml2 closes them; stray end tags are ignored; leading text is
 * kept only when it is more than whitespace.
 */
function parseFragment(html: string): El {
  const root = element('div');
  const stack: El[] = [root];
  const top = () => stack[stack.length - 1]!;
  let pending: El | null = null;
  let attrName = '';
  let attrValue = '';
  const addText = (text: string) => {
    const t = top();
    const last = t.children[t.children.length - 1];
    if (last) last.tail += text;
    else t.text += text;
  };
  const openTag = (el: El) => {
    const closes = START_CLOSES[el.tag];
    while (closes && stack.length > 1 && closes.includes(top().tag)) stack.pop();
    appendChild(top(), el);
    if (!VOID_TAGS.has(el.tag)) stack.push(el);
  };
  const source = html.replace(/\r\n?/g, '\n');
  const tokenizer = new Tokenizer(
    { decodeEntities: true },
    {
      ontext: (start, end) => addText(source.slice(start, end)),
      ontextentity: (cp) => addText(String.fromCodePoint(cp)),
      onopentagname: (start, end) => {
        pending = element(source.slice(start, end).toLowerCase());
      },
      onattribname: (start, end) => {
        attrName = source.slice(start, end).toLowerCase();
        attrValue = '';
      },
      onattribdata: (start, end) => {
        attrValue += source.slice(start, end);
      },
      onattribentity: (cp) => {
        attrValue += String.fromCodePoint(cp);
      },
      onattribend: (quote) => {
        if (pending && !pending.attrs.some(([k]) => k === attrName)) {
          pending.attrs.push([attrName, quote === QuoteType.NoValue ? null : attrValue]);
        }
      },
      onopentagend: () => {
        if (pending) openTag(pending);
        pending = null;
      },
      onselfclosingtag: () => {
        if (pending) openTag(pending);
        pending = null;
      },
      onclosetag: (start, end) => {
        const name = source.slice(start, end).toLowerCase();
        const priority = priorityOf(name);
        for (let i = stack.length - 1; i > 0; i--) {
          if (stack[i]!.tag === name) {
            stack.length = i;
            return;
          }
          if (priorityOf(stack[i]!.tag) > priority) return;
        }
      },
      oncdata: () => {},
      oncomment: () => {},
      ondeclaration: () => {},
      onprocessinginstruction: () => {},
      onend: () => {},
    },
  );
  tokenizer.write(source);
  tokenizer.end();
  if (isBlank(root.text)) root.text = '';
  return root;
}

// ---- tokens ---------------------------------------------------------------------------------

/** A diffable unit: compared by `key` only; `pre`/`post` are the tags around it. */
type Token = {
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
const EMPTY_TAGS = new Set([
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

const BLOCK_TAGS = new Set([
  'address',
  'blockquote',
  'center',
  'dir',
  'div',
  'dl',
  'fieldset',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'isindex',
  'menu',
  'noframes',
  'noscript',
  'ol',
  'p',
  'pre',
  'table',
  'ul',
  'dd',
  'dt',
  'frameset',
  'li',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'tr',
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

function tokenize(html: string): Token[] {
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

// ---- difflib.SequenceMatcher, as lxml's InsensitiveSequenceMatcher uses it -------------------

type Block = [number, number, number];

function matchingBlocks(a: readonly string[], b: readonly string[]): Block[] {
  // b2j: where each token occurs in b; tokens frequent in long sequences are not anchors.
  const b2j = new Map<string, number[]>();
  b.forEach((t, j) => {
    const list = b2j.get(t);
    if (list) list.push(j);
    else b2j.set(t, [j]);
  });
  if (b.length >= 200) {
    const limit = Math.floor(b.length / 100) + 1;
    for (const [t, list] of b2j) if (list.length > limit) b2j.delete(t);
  }
  const longest = (alo: number, ahi: number, blo: number, bhi: number): Block => {
    let besti = alo;
    let bestj = blo;
    let bestsize = 0;
    let j2len = new Map<number, number>();
    for (let i = alo; i < ahi; i++) {
      const next = new Map<number, number>();
      for (const j of b2j.get(a[i]!) ?? []) {
        if (j < blo) continue;
        if (j >= bhi) break;
        const k = (j2len.get(j - 1) ?? 0) + 1;
        next.set(j, k);
        if (k > bestsize) {
          besti = i - k + 1;
          bestj = j - k + 1;
          bestsize = k;
        }
      }
      j2len = next;
    }
    while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) {
      besti--;
      bestj--;
      bestsize++;
    }
    while (
      besti + bestsize < ahi &&
      bestj + bestsize < bhi &&
      a[besti + bestsize] === b[bestj + bestsize]
    ) {
      bestsize++;
    }
    return [besti, bestj, bestsize];
  };
  const found: Block[] = [];
  const queue: [number, number, number, number][] = [[0, a.length, 0, b.length]];
  while (queue.length > 0) {
    const [alo, ahi, blo, bhi] = queue.pop()!;
    const m = longest(alo, ahi, blo, bhi);
    const [i, j, k] = m;
    if (k > 0) {
      found.push(m);
      if (alo < i && blo < j) queue.push([alo, i, blo, j]);
      if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
    }
  }
  found.sort((x, y) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2]);
  const merged: Block[] = [];
  let [i1, j1, k1] = [0, 0, 0];
  for (const [i2, j2, k2] of found) {
    if (i1 + k1 === i2 && j1 + k1 === j2) k1 += k2;
    else {
      if (k1) merged.push([i1, j1, k1]);
      [i1, j1, k1] = [i2, j2, k2];
    }
  }
  if (k1) merged.push([i1, j1, k1]);
  merged.push([a.length, b.length, 0]);
  // Insensitive: no tiny matches amid changes.
  const threshold = Math.min(2, b.length / 4);
  return merged.filter(([, , size]) => size > threshold || size === 0);
}

type Opcode = ['equal' | 'replace' | 'delete' | 'insert', number, number, number, number];

function opcodes(a: readonly string[], b: readonly string[]): Opcode[] {
  const out: Opcode[] = [];
  let i = 0;
  let j = 0;
  for (const [ai, bj, size] of matchingBlocks(a, b)) {
    if (i < ai && j < bj) out.push(['replace', i, ai, j, bj]);
    else if (i < ai) out.push(['delete', i, ai, j, bj]);
    else if (j < bj) out.push(['insert', i, ai, j, bj]);
    i = ai + size;
    j = bj + size;
    if (size) out.push(['equal', ai, i, bj, j]);
  }
  return out;
}

// ---- rebuilding the new version with <ins> and <del> ----------------------------------------

const DEL_START = Symbol('del start');
const DEL_END = Symbol('del end');
type Piece = string | typeof DEL_START | typeof DEL_END;

function expand(tokens: readonly Token[], equal: boolean): string[] {
  const out: string[] = [];
  for (const t of tokens) {
    out.push(...t.pre);
    if (!equal || !t.hideWhenEqual) out.push(t.html + t.ws);
    out.push(...t.post);
  }
  return out;
}

/** `chunk.split()[0].strip(chars)`. */
function tagName(chunk: string, chars: string): string {
  let name = chunk.split(new RegExp(`[${WS}]+`, 'u')).find((s) => s !== '') ?? '';
  while (name !== '' && chars.includes(name[0]!)) name = name.slice(1);
  while (name !== '' && chars.includes(name[name.length - 1]!)) name = name.slice(0, -1);
  return name;
}

/** [tags opened but not closed, the balanced rest, tags closed but not opened]. */
function splitUnbalanced(chunks: readonly string[]): [string[], string[], string[]] {
  const start: string[] = [];
  const end: string[] = [];
  let stack: [string, number, string][] = [];
  const balanced: (string | null)[] = [];
  for (const chunk of chunks) {
    if (!chunk.startsWith('<')) {
      balanced.push(chunk);
      continue;
    }
    const isEnd = chunk[1] === '/';
    const name = tagName(chunk, '<>/');
    if (EMPTY_TAGS.has(name)) {
      balanced.push(chunk);
      continue;
    }
    if (isEnd) {
      if (stack.length > 0 && stack[stack.length - 1]![0] === name) {
        balanced.push(chunk);
        const [, pos, tag] = stack.pop()!;
        balanced[pos] = tag;
      } else if (stack.length > 0) {
        start.push(...stack.map(([, , tag]) => tag));
        stack = [];
        end.push(chunk);
      } else {
        end.push(chunk);
      }
    } else {
      stack.push([name, balanced.length, chunk]);
      balanced.push(null);
    }
  }
  start.push(...stack.map(([, , tag]) => tag));
  return [start, balanced.filter((c): c is string => c !== null), end];
}

function addSpace(doc: Piece[]): void {
  const last = doc[doc.length - 1];
  if (typeof last === 'string' && !last.endsWith(' ')) doc[doc.length - 1] = last + ' ';
}

function trimLastSpace(chunks: string[]): void {
  const last = chunks[chunks.length - 1];
  if (last !== undefined && last.endsWith(' ')) chunks[chunks.length - 1] = last.slice(0, -1);
}

function mergeInsert(chunks: string[], doc: Piece[]): void {
  const [start, balanced, end] = splitUnbalanced(chunks);
  doc.push(...start);
  addSpace(doc);
  doc.push('<ins>');
  trimLastSpace(balanced);
  doc.push(...balanced, '</ins> ', ...end);
}

function locateUnbalancedStart(unbalanced: string[], pre: Piece[], post: Piece[]): void {
  while (unbalanced.length > 0 && post.length > 0) {
    const next = post[0]!;
    if (typeof next !== 'string' || !next.startsWith('<') || next[1] === '/') break;
    const name = tagName(next, '<>');
    if (name === 'ins') break;
    if (name !== tagName(unbalanced[0]!, '<>')) break;
    unbalanced.shift();
    pre.push(post.shift()!);
  }
}

function locateUnbalancedEnd(unbalanced: string[], pre: Piece[], post: Piece[]): void {
  while (unbalanced.length > 0 && pre.length > 0) {
    const next = pre[pre.length - 1]!;
    if (typeof next !== 'string' || !next.startsWith('</')) break;
    const name = tagName(next, '<>/');
    if (name === 'ins' || name === 'del') break;
    if (name !== tagName(unbalanced[unbalanced.length - 1]!, '<>/')) break;
    unbalanced.pop();
    post.unshift(pre.pop()!);
  }
}

function cleanupDelete(chunks: Piece[]): string[] {
  for (;;) {
    const pos = chunks.indexOf(DEL_START);
    if (pos === -1) break;
    const pos2 = chunks.indexOf(DEL_END);
    const pre = chunks.slice(0, pos);
    const deleted = chunks.slice(pos + 1, pos2) as string[];
    const post = chunks.slice(pos2 + 1);
    const [start, balanced, end] = splitUnbalanced(deleted);
    locateUnbalancedStart(start, pre, post);
    locateUnbalancedEnd(end, pre, post);
    addSpace(pre);
    pre.push('<del>');
    trimLastSpace(balanced);
    pre.push(...balanced, '</del> ', ...post);
    chunks = pre;
  }
  return chunks as string[];
}

function diffTokens(oldTokens: Token[], newTokens: Token[]): string {
  const doc: Piece[] = [];
  const a = oldTokens.map((t) => t.key);
  const b = newTokens.map((t) => t.key);
  for (const [op, i1, i2, j1, j2] of opcodes(a, b)) {
    if (op === 'equal') {
      doc.push(...expand(newTokens.slice(j1, j2), true));
      continue;
    }
    if (op === 'insert' || op === 'replace')
      mergeInsert(expand(newTokens.slice(j1, j2), false), doc);
    if (op === 'delete' || op === 'replace') {
      doc.push(DEL_START, ...expand(oldTokens.slice(i1, i2), false), DEL_END);
    }
  }
  return pyStrip(cleanupDelete(doc).join(''));
}

// ---- moving <ins>/<del> inside block elements -----------------------------------------------

function containsBlock(el: El): boolean {
  return BLOCK_TAGS.has(el.tag) || el.children.some(containsBlock);
}

function descendantsOrSelf(el: El, tag: string, out: El[] = []): El[] {
  if (el.tag === tag) out.push(el);
  for (const c of el.children) descendantsOrSelf(c, tag, out);
  return out;
}

function replaceChildren(el: El, children: El[]): void {
  el.children = [];
  for (const c of children) appendChild(el, c);
}

function moveInsideBlock(el: El, tag: string): void {
  if (!el.children.some(containsBlock)) {
    const wrapper = element(tag);
    wrapper.text = el.text;
    el.text = '';
    replaceChildren(wrapper, el.children);
    replaceChildren(el, [wrapper]);
    return;
  }
  const result: El[] = [];
  for (const child of el.children) {
    if (containsBlock(child)) {
      moveInsideBlock(child, tag);
      result.push(child);
      if (child.tail !== '') {
        const tailWrapper = element(tag);
        tailWrapper.text = child.tail;
        child.tail = '';
        result.push(tailWrapper);
      }
    } else {
      // The child moves into the wrapper, its tail with it.
      const wrapper = element(tag);
      appendChild(wrapper, child);
      result.push(wrapper);
    }
  }
  if (el.text !== '') {
    const textWrapper = element(tag);
    textWrapper.text = el.text;
    el.text = '';
    result.unshift(textWrapper);
  }
  replaceChildren(el, result);
}

/** lxml's drop_tag: the element goes, its text, children and tail stay in place. */
function dropTag(el: El): void {
  const parent = el.parent!;
  const index = parent.children.indexOf(el);
  const previous = index > 0 ? parent.children[index - 1]! : null;
  if (el.text !== '') {
    if (previous) previous.tail += el.text;
    else parent.text += el.text;
  }
  if (el.tail !== '') {
    if (el.children.length > 0) el.children[el.children.length - 1]!.tail += el.tail;
    else if (previous) previous.tail += el.tail;
    else parent.text += el.tail;
  }
  for (const c of el.children) c.parent = parent;
  parent.children.splice(index, 1, ...el.children);
}

function fixupInsDel(html: string): El {
  const doc = parseFragment(html);
  for (const tag of ['ins', 'del']) {
    for (const el of descendantsOrSelf(doc, tag)) {
      if (!containsBlock(el)) continue;
      moveInsideBlock(el, tag);
      dropTag(el);
    }
  }
  return doc;
}

// ---- serializing as libxml2's HTML serializer -----------------------------------------------

const BOOLEAN_ATTRS = new Set([
  'checked',
  'compact',
  'declare',
  'defer',
  'disabled',
  'ismap',
  'multiple',
  'nohref',
  'noresize',
  'noshade',
  'nowrap',
  'readonly',
  'selected',
]);

/** Characters a URI attribute keeps as they are (libxml2's xmlURIEscapeStr). */
const URI_KEEP = /[A-Za-z0-9\-_.!~*'()@/:=?;#%&,+<>]/;

function escapeUri(value: string): string {
  let out = '';
  for (const ch of value.replace(/^[ \t\n\r]+/, '')) {
    if (URI_KEEP.test(ch)) out += ch;
    else
      for (const byte of Buffer.from(ch, 'utf8'))
        out += '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

function escapeText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function serializeAttr(el: El, name: string, value: string | null): string {
  if (value === null || (value === '' && BOOLEAN_ATTRS.has(name))) {
    return BOOLEAN_ATTRS.has(name) || value === null ? ` ${name}` : ` ${name}=""`;
  }
  const uri =
    name === 'href' || name === 'action' || name === 'src' || (name === 'name' && el.tag === 'a');
  const v = uri ? escapeUri(value) : value;
  return ` ${name}="${escapeText(v).replace(/"/g, '&quot;')}"`;
}

function serialize(el: El): string {
  let out = `<${el.tag}`;
  for (const [name, value] of el.attrs) out += serializeAttr(el, name, value);
  out += '>';
  const empty = el.text === '' && el.children.length === 0;
  // libxml2 writes an empty `li` without its (optional) end tag.
  if (!VOID_TAGS.has(el.tag) && !(empty && el.tag === 'li')) {
    out += escapeText(el.text);
    for (const c of el.children) out += serialize(c) + escapeText(c.tail);
    out += `</${el.tag}>`;
  }
  return out;
}

function serializeContent(el: El): string {
  let out = escapeText(el.text);
  for (const c of el.children) out += serialize(c) + escapeText(c.tail);
  return out;
}

// ---- the reference's highlight_html_differences ----------------------------------------------

const INSERTED = 'highlight_text_inserted';
const DELETED = 'highlight_text_deleted';

function renameMarks(el: El): void {
  if (el.tag === 'ins' || el.tag === 'del') {
    const cls = el.tag === 'ins' ? INSERTED : DELETED;
    el.tag = 'span';
    const existing = el.attrs.find(([k]) => k === 'class');
    if (existing) existing[1] = cls;
    else el.attrs.push(['class', cls]);
  }
  for (const c of el.children) renameMarks(c);
}

/** The reference's content_html_diff of `before` → `after` (both rendered message HTML). */
export function highlightHtmlDifferences(before: string, after: string): string {
  const marked = diffTokens(tokenize(before), tokenize(after));
  const fixed = pyStrip(serializeContent(fixupInsDel(marked)));
  const root = parseFragment(fixed);
  renameMarks(root);
  return serialize(root);
}
