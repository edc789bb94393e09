/**
 * Rendering of the diff as markup: the new version rebuilt with each changed run wrapped (an
 * insertion in `<ins>`, then the deletion it replaces in `<del>`, moved to where its unbalanced
 * tags fit), then insertions and deletions that span block elements pushed inside them.
 */
import { opcodes } from './sequence-matcher.js';
import { EMPTY_TAGS, type Token } from './tokens.js';
import { appendChild, element, parseFragment, pyStrip, WS, type El } from './tree.js';

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

export function diffTokens(oldTokens: Token[], newTokens: Token[]): string {
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

export function fixupInsDel(html: string): El {
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
