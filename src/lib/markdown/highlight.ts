/**
 * Code highlighting with the reference's markup: Pygments' short token classes (`k`, `nf`, `s2`,
 * `w`, …) on `<span>`s, adjacent tokens of one class merged, one span per line of a multi-line
 * token. The tokens come from Prism (loaded on first use, so plain messages never pay for it);
 * this module maps Prism's token types onto Pygments' classes, and refines them where Pygments
 * is finer (Python, PHP and TeX follow Pygments' lexers token for token: the reference's
 * fixture checks them). Languages are named as the reference's highlighter names them
 * (`data-code-language`: `py2` → `Python 2.x`, `css+php` → `CSS+PHP`). The language table is in
 * highlight-languages.ts, the Python, PHP and TeX lexers in highlight-lexers.ts.
 */
import { grammar, languageOf, prismTokenize, type PrismStream } from './highlight-languages.js';
import {
  NUMBER,
  numberClass,
  php,
  python,
  stringClass,
  tex,
  type Piece,
  type Refiner,
  type Run,
} from './highlight-lexers.js';

// ---- flattening Prism's tree ------------------------------------------------------------------
function flatten(stream: PrismStream, types: string[], out: Piece[]): void {
  if (typeof stream === 'string') {
    if (stream) out.push({ types, text: stream });
    return;
  }
  if (Array.isArray(stream)) {
    for (const s of stream) flatten(s, types, out);
    return;
  }
  const alias = stream.alias === undefined ? [] : [stream.alias].flat();
  flatten(stream.content, [...types, stream.type, ...alias], out);
}

// ---- any other language ----------------------------------------------------------------------

const GENERIC: Record<string, string> = {
  keyword: 'k',
  builtin: 'nb',
  boolean: 'kc',
  constant: 'no',
  'class-name': 'nc',
  function: 'nf',
  'function-definition': 'nf',
  variable: 'nv',
  regex: 'sr',
  char: 'sc',
  tag: 'nt',
  'attr-name': 'na',
  'attr-value': 's',
  property: 'py',
  selector: 'nt',
  important: 'k',
  atrule: 'k',
  rule: 'k',
  url: 's',
  entity: 'ni',
  doctype: 'cp',
  prolog: 'cp',
  cdata: 'cp',
  symbol: 'ss',
  namespace: 'nn',
  decorator: 'nd',
  annotation: 'nd',
  directive: 'cp',
  macro: 'cp',
  inserted: 'gi',
  deleted: 'gd',
  coord: 'gu',
  title: 'gh',
  bold: 'gs',
  italic: 'ge',
  operator: 'o',
  punctuation: 'p',
  parameter: 'n',
  label: 'nl',
};

/** Any other language: Prism's types mapped onto Pygments' classes. */
function generic(markupLike: boolean): Refiner {
  return (pieces) => {
    const runs: Run[] = [];
    for (const p of pieces) {
      let cls = '';
      for (let i = p.types.length - 1; i >= 0 && !cls; i--) {
        const t = p.types[i]!;
        if (t === 'comment')
          cls = /^(?:\/\/|#|--|;)/.test(p.text) ? 'c1' : p.text.startsWith('/*') ? 'cm' : 'c';
        else if (t === 'string' || t === 'template-string') cls = stringClass(p.text);
        else if (t === 'number') cls = NUMBER.test(p.text) ? numberClass(p.text) : 'm';
        else cls = GENERIC[t] ?? '';
      }
      if (cls || markupLike) runs.push([cls, p.text]);
      else
        for (const m of p.text.matchAll(/\s+|[\p{L}_][\p{L}\p{N}_]*|[^\s\p{L}_]+/gu))
          runs.push([/^[\p{L}_]/u.test(m[0]) ? 'n' : '', m[0]]);
    }
    return runs;
  };
}

const REFINERS: Record<string, Refiner> = {
  python,
  php,
  latex: tex,
  markup: generic(true),
  markdown: generic(true),
  diff: generic(true),
  rest: generic(true),
};

// ---- output ---------------------------------------------------------------------------------

function escape(s: string, quotes: boolean): string {
  let out = s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  if (quotes) out = out.replace(/"/g, '&quot;').replace(/'/g, '&#39;');
  return out;
}

function toHtml(runs: Run[], quotes: boolean): string {
  // Split at newlines (a span never crosses a line), merge neighbours of one class.
  const parts: Run[] = [];
  for (const [cls, text] of runs) {
    const lines = text.split('\n');
    lines.forEach((line, i) => {
      if (i > 0) parts.push(['\n', '\n']);
      if (!line) return;
      const last = parts[parts.length - 1];
      if (last && last[0] === cls) last[1] += line;
      else parts.push([cls, line]);
    });
  }
  let html = '';
  for (const [cls, text] of parts) {
    if (cls === '\n') html += '\n';
    else if (cls) html += `<span class="${cls}">${escape(text, quotes)}</span>`;
    else html += escape(text, quotes);
  }
  return html;
}

/**
 * The inside of `<code>` for a code block: `code` highlighted as `lang` (null: no language
 * given, unless a first line such as `#!python` or `:::python` names one, as the reference's
 * code highlighter reads it). Quotes are escaped only when no language was given, as the
 * reference's output has them.
 */
export function highlightCode(code: string, lang: string | null, quotes = lang === null): string {
  let effective = lang;
  if (effective === null) {
    const m = /^(?:::+|#!)(?:(?:\/\w+)*[/ ])?([\w#.+-]*)/.exec(code);
    if (m && m[1]) effective = m[1].toLowerCase();
  }
  const info = effective === null ? undefined : languageOf(effective);
  if (!info || !info.prism) return escape(code, quotes);
  const g = grammar(info.prism);
  if (!g) return escape(code, quotes);
  const pieces: Piece[] = [];
  flatten(prismTokenize(code, g), [], pieces);
  const refine = REFINERS[info.prism] ?? generic(false);
  return toHtml(refine(pieces), quotes);
}
