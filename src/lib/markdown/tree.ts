/**
 * The element tree the renderer builds, with ElementTree's text/tail model (text before the first
 * child, tail after an element's end), and its HTML serialization with the reference's
 * conventions: attributes sorted by name, void elements without a slash, block elements followed
 * by a newline ("prettify"), text escaped with & < > only (an `&` that already starts an entity is
 * kept), attribute values escaped with & < > ".
 */

export class El {
  text = '';
  tail = '';
  children: El[] = [];
  /** Verbatim HTML produced by the renderer itself (code blocks, spoilers); never user text. */
  raw: string | null = null;
  /** Text that no inline pattern may touch (code, link text). */
  atomic = false;
  /** Text escaped in full, entities included (code spans). */
  verbatim = false;
  /** Keep attributes in insertion order (HTML the reference writes by hand, like spoilers). */
  ordered = false;

  constructor(
    public tag: string,
    public attrs: Record<string, string> = {},
  ) {}

  static rawBlock(html: string): El {
    const el = new El('#raw');
    el.raw = html;
    return el;
  }

  /** Verbatim HTML inside a paragraph (TeX): not a block. */
  static rawInline(html: string): El {
    const el = new El('#inline-raw');
    el.raw = html;
    return el;
  }

  append(child: El): El {
    this.children.push(child);
    return child;
  }
}

const BLOCK_TAGS = new Set([
  'p',
  'div',
  'ul',
  'ol',
  'li',
  'blockquote',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'pre',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  '#raw',
]);

const VOID_TAGS = new Set(['br', 'hr', 'img']);

export function isBlock(tag: string): boolean {
  return BLOCK_TAGS.has(tag);
}

/** Puts a newline after every block element and before the first block child of a block. */
export function prettify(el: El): void {
  if (el.tag === 'div' && el.attrs.class === 'spoiler-block') {
    // The reference writes spoilers as one piece of HTML: newlines only inside the two parts.
    for (const part of el.children) {
      part.text = '\n';
      for (const c of part.children) if (isBlock(c.tag)) prettify(c);
    }
    if (!el.tail.trim()) el.tail = '\n';
    return;
  }
  if (isBlock(el.tag) && el.tag !== 'pre' && el.tag !== 'code') {
    if (!el.text.trim() && el.children.length > 0 && isBlock(el.children[0]!.tag)) el.text = '\n';
    for (const c of el.children) if (isBlock(c.tag)) prettify(c);
  }
  if (!el.tail.trim()) el.tail = '\n';
}

/** A `<br>` is always followed by a newline. */
export function fixBreaks(el: El): void {
  for (const c of el.children) {
    if (c.tag === 'br') c.tail = c.tail.trim() ? '\n' + c.tail : '\n';
    else fixBreaks(c);
  }
}

const AMP_NOT_ENTITY = /&(?!(?:#[0-9]+|#x[0-9a-f]+|[0-9a-z]+);)/gi;

export function escapeText(s: string): string {
  if (!/[&<>]/.test(s)) return s;
  return s.replace(AMP_NOT_ENTITY, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAll(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Attribute values: every `&` is escaped, so no entity in user text can spell a new URL. */
export function escapeAttr(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/** Code as the syntax highlighter escapes it: quotes too. */
export function escapeCode(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

export function serialize(el: El, out: string[]): void {
  if (el.raw !== null) {
    out.push(el.raw);
  } else {
    out.push('<', el.tag);
    const keys = Object.keys(el.attrs);
    if (!el.ordered) keys.sort();
    for (const k of keys) out.push(' ', k, '="', escapeAttr(el.attrs[k]!), '"');
    out.push('>');
    if (!VOID_TAGS.has(el.tag)) {
      if (el.text) out.push(el.verbatim ? escapeAll(el.text) : escapeText(el.text));
      for (const c of el.children) serialize(c, out);
      out.push('</', el.tag, '>');
    }
  }
  if (el.tail) out.push(escapeText(el.tail));
}

/** The HTML of a root's content (the root's own tag left out), trimmed as the reference does. */
export function serializeChildren(root: El): string {
  const out: string[] = [];
  if (root.text) out.push(escapeText(root.text));
  for (const c of root.children) serialize(c, out);
  return out.join('').trim();
}
