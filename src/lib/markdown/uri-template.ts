/**
 * RFC 6570 URI templates (levels 1–4), as linkifiers use them: every variable is a string (a
 * regular-expression group) or undefined (a group that did not take part in the match, which is
 * left out of the expansion).
 */

const OPERATORS = '+#./;?&';
const VARNAME = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$/;

type VarSpec = { name: string; prefix: number | null; explode: boolean };
type Part = { literal: string } | { op: string; vars: VarSpec[] };

export class TemplateError extends Error {}

export function parseUriTemplate(template: string): Part[] {
  const parts: Part[] = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    const literal = template.slice(i, open < 0 ? template.length : open);
    if (literal.includes('}')) throw new TemplateError('Invalid URL template.');
    if (literal) parts.push({ literal });
    if (open < 0) break;
    const close = template.indexOf('}', open);
    if (close < 0) throw new TemplateError('Invalid URL template.');
    let body = template.slice(open + 1, close);
    if (body.includes('{')) throw new TemplateError('Invalid URL template.');
    let op = '';
    if (body && OPERATORS.includes(body[0]!)) {
      op = body[0]!;
      body = body.slice(1);
    }
    if (!body) throw new TemplateError('Invalid URL template.');
    const vars: VarSpec[] = body.split(',').map((spec) => {
      const m = /^([^:*]+)(?::([1-9][0-9]{0,3})|(\*))?$/.exec(spec);
      if (!m || !VARNAME.test(m[1]!)) throw new TemplateError('Invalid URL template.');
      return { name: m[1]!, prefix: m[2] ? Number(m[2]) : null, explode: m[3] === '*' };
    });
    parts.push({ op, vars });
    i = close + 1;
  }
  return parts;
}

export function templateVariables(template: string): string[] {
  const names: string[] = [];
  for (const p of parseUriTemplate(template))
    if ('vars' in p) for (const v of p.vars) if (!names.includes(v.name)) names.push(v.name);
  return names;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;

function pctEncode(ch: string): string {
  return Array.from(
    new TextEncoder().encode(ch),
    (b) => '%' + b.toString(16).toUpperCase().padStart(2, '0'),
  ).join('');
}

/** Encodes a value: unreserved characters kept; with `allowReserved`, reserved ones and %XX too. */
function encodeValue(s: string, allowReserved: boolean): string {
  let out = '';
  const chars = Array.from(s);
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (UNRESERVED.test(c)) out += c;
    else if (allowReserved && RESERVED.test(c)) out += c;
    else if (
      allowReserved &&
      c === '%' &&
      /^[0-9A-Fa-f]{2}$/.test((chars[i + 1] ?? '') + (chars[i + 2] ?? ''))
    )
      out += c;
    else out += pctEncode(c);
  }
  return out;
}

/** Literal text: kept where a URI allows it, valid %XX kept, anything else percent-encoded. */
function encodeLiteral(s: string): string {
  return encodeValue(s, true);
}

const OP_TABLE: Record<
  string,
  { first: string; sep: string; named: boolean; ifemp: string; reserved: boolean }
> = {
  '': { first: '', sep: ',', named: false, ifemp: '', reserved: false },
  '+': { first: '', sep: ',', named: false, ifemp: '', reserved: true },
  '#': { first: '#', sep: ',', named: false, ifemp: '', reserved: true },
  '.': { first: '.', sep: '.', named: false, ifemp: '', reserved: false },
  '/': { first: '/', sep: '/', named: false, ifemp: '', reserved: false },
  ';': { first: ';', sep: ';', named: true, ifemp: '', reserved: false },
  '?': { first: '?', sep: '&', named: true, ifemp: '=', reserved: false },
  '&': { first: '&', sep: '&', named: true, ifemp: '=', reserved: false },
};

export function expandUriTemplate(
  parts: readonly Part[],
  values: Record<string, string | undefined>,
): string {
  let out = '';
  for (const p of parts) {
    if ('literal' in p) {
      out += encodeLiteral(p.literal);
      continue;
    }
    const spec = OP_TABLE[p.op]!;
    const items: string[] = [];
    for (const v of p.vars) {
      const raw = Object.hasOwn(values, v.name) ? values[v.name] : undefined;
      if (raw === undefined) continue;
      const value = v.prefix !== null ? Array.from(raw).slice(0, v.prefix).join('') : raw;
      const enc = encodeValue(value, spec.reserved);
      if (spec.named) items.push(value === '' ? v.name + spec.ifemp : `${v.name}=${enc}`);
      else items.push(enc);
    }
    if (items.length > 0) out += spec.first + items.join(spec.sep);
  }
  return out;
}
