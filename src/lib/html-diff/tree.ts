/**
 * The element tree the HTML diff works on (text and tail as lxml models them), and the parser
 * that builds it from an HTML fragment the way libxml2's HTML parser does; also the whitespace
 * rules of Python strings that the reference's diff relies on.
 */
import { QuoteType, Tokenizer } from 'htmlparser2';

export type El = {
  tag: string;
  attrs: [string, string | null][];
  text: string;
  children: El[];
  tail: string;
  parent: El | null;
};

export function element(tag: string, attrs: [string, string | null][] = []): El {
  return { tag, attrs, text: '', children: [], tail: '', parent: null };
}

export function appendChild(parent: El, child: El): void {
  child.parent = parent;
  parent.children.push(child);
}

/** Elements written without an end tag (HTML 4's empty elements, as libxml2 knows them). */
export const VOID_TAGS = new Set([
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
export const WS =
  ' \\t\\n\\r\\x0b\\x0c\\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
export const WORDS_RE = new RegExp(`[^${WS}]+(?:[${WS}]+|$)`, 'gu');
const ALL_WS_RE = new RegExp(`^[${WS}]*$`, 'u');
export const TRAILING_WS_RE = new RegExp(`[${WS}]+$`, 'u');
const LEADING_WS_RE = new RegExp(`^[${WS}]+`, 'u');
export const START_WS_RE = /^[ \t\n\r]/;

export const isBlank = (s: string) => ALL_WS_RE.test(s);
export const pyStrip = (s: string) => s.replace(LEADING_WS_RE, '').replace(TRAILING_WS_RE, '');

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
export function parseFragment(html: string): El {
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
