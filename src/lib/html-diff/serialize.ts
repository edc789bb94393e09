/**
 * The element tree written back out as libxml2's HTML serializer writes it (URI attributes
 * escaped, boolean attributes bare, void elements without end tags).
 */
import { VOID_TAGS, type El } from './tree.js';

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

export function serialize(el: El): string {
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

export function serializeContent(el: El): string {
  let out = escapeText(el.text);
  for (const c of el.children) out += serialize(c) + escapeText(c.tail);
  return out;
}
