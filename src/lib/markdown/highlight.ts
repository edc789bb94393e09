/**
 * Code highlighting with the reference's markup: Pygments' short token classes (`k`, `nf`, `s2`,
 * `w`, …) on `<span>`s, adjacent tokens of one class merged, one span per line of a multi-line
 * token. The tokens come from Prism (loaded on first use, so plain messages never pay for it);
 * this module maps Prism's token types onto Pygments' classes, and refines them where Pygments
 * is finer (Python, PHP and TeX follow Pygments' lexers token for token: the reference's
 * fixture checks them). Languages are named as the reference's highlighter names them
 * (`data-code-language`: `py2` → `Python 2.x`, `css+php` → `CSS+PHP`).
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

type PrismToken = { type: string; alias?: string | string[]; content: PrismStream };
type PrismStream = string | PrismToken | (string | PrismToken)[];
type PrismApi = {
  languages: Record<string, unknown>;
  tokenize(text: string, grammar: unknown): (string | PrismToken)[];
};

/** [Pygments' lexer name, Prism's grammar (absent: not highlighted), aliases…]. */
const LANGUAGES: [string, string | null, ...string[]][] = [
  ['Python', 'python', 'python', 'py', 'sage', 'python3', 'py3', 'bazel', 'starlark'],
  ['Python 2.x', 'python', 'python2', 'py2'],
  ['Python console session', 'python', 'pycon'],
  ['JavaScript', 'javascript', 'javascript', 'js', 'esm'],
  ['TypeScript', 'typescript', 'typescript', 'ts'],
  ['JSON', 'json', 'json', 'json-object'],
  ['Bash', 'bash', 'bash', 'sh', 'ksh', 'zsh', 'shell'],
  ['Bash Session', 'shell-session', 'console', 'shell-session'],
  ['C', 'c', 'c'],
  ['C++', 'cpp', 'cpp', 'c++'],
  ['C#', 'csharp', 'csharp', 'c#', 'cs'],
  ['Java', 'java', 'java'],
  ['Go', 'go', 'go', 'golang'],
  ['Rust', 'rust', 'rust', 'rs'],
  ['Ruby', 'ruby', 'ruby', 'rb', 'duby'],
  ['PHP', 'php', 'php', 'php3', 'php4', 'php5'],
  ['CSS+PHP', 'php', 'css+php'],
  ['HTML+PHP', 'php', 'html+php'],
  ['JavaScript+PHP', 'php', 'javascript+php', 'js+php'],
  ['XML+PHP', 'php', 'xml+php'],
  ['HTML', 'markup', 'html'],
  ['XML', 'markup', 'xml'],
  ['CSS', 'css', 'css'],
  ['SCSS', 'scss', 'scss'],
  ['Sass', 'sass', 'sass'],
  ['SQL', 'sql', 'sql'],
  ['MySQL', 'sql', 'mysql'],
  ['PostgreSQL SQL dialect', 'sql', 'postgresql', 'postgres'],
  ['YAML', 'yaml', 'yaml'],
  ['TOML', 'toml', 'toml'],
  ['Markdown', 'markdown', 'markdown', 'md'],
  ['Diff', 'diff', 'diff', 'udiff'],
  ['TeX', 'latex', 'tex', 'latex'],
  ['Haskell', 'haskell', 'haskell', 'hs'],
  ['Kotlin', 'kotlin', 'kotlin'],
  ['Swift', 'swift', 'swift'],
  ['Scala', 'scala', 'scala'],
  ['Perl', 'perl', 'perl', 'pl'],
  ['Lua', 'lua', 'lua'],
  ['S', 'r', 'splus', 's', 'r'],
  ['Text only', null, 'text'],
  ['Docker', 'docker', 'docker', 'dockerfile'],
  ['INI', 'ini', 'ini', 'cfg', 'dosini'],
  ['Makefile', 'makefile', 'make', 'makefile', 'mf', 'bsdmake'],
  ['Nginx configuration file', 'nginx', 'nginx'],
  ['PowerShell', 'powershell', 'powershell', 'pwsh', 'posh', 'ps1', 'psm1'],
  ['Objective-C', 'objectivec', 'objective-c', 'objectivec', 'obj-c', 'objc'],
  ['Elixir', 'elixir', 'elixir', 'ex', 'exs'],
  ['Erlang', 'erlang', 'erlang'],
  ['Clojure', 'clojure', 'clojure', 'clj'],
  ['OCaml', 'ocaml', 'ocaml'],
  ['GraphQL', 'graphql', 'graphql'],
  ['Dart', 'dart', 'dart'],
  ['Elm', 'elm', 'elm'],
  ['F#', 'fsharp', 'fsharp', 'f#'],
  ['Groovy', 'groovy', 'groovy'],
  ['Julia', 'julia', 'julia', 'jl'],
  ['Matlab', 'matlab', 'matlab'],
  ['Nim', 'nim', 'nimrod', 'nim'],
  ['Nix', 'nix', 'nixos', 'nix'],
  ['Delphi', 'pascal', 'delphi', 'pas', 'pascal', 'objectpascal'],
  ['Prolog', 'prolog', 'prolog'],
  ['Protocol Buffer', 'protobuf', 'protobuf', 'proto'],
  ['Racket', 'racket', 'racket', 'rkt'],
  ['Scheme', 'scheme', 'scheme', 'scm'],
  ['Common Lisp', 'lisp', 'common-lisp', 'cl', 'lisp'],
  ['VimL', 'vim', 'vim'],
  ['Zig', 'zig', 'zig'],
  ['CoffeeScript', 'coffeescript', 'coffeescript', 'coffee-script', 'coffee'],
  ['Handlebars', 'handlebars', 'handlebars'],
  ['HTTP', 'http', 'http'],
  ['Batchfile', 'batch', 'batch', 'bat', 'dosbatch', 'winbatch'],
  ['reStructuredText', 'rest', 'restructuredtext', 'rst', 'rest'],
  ['Terraform', 'hcl', 'terraform', 'tf', 'hcl'],
  ['Solidity', 'solidity', 'solidity'],
  ['Ada', 'ada', 'ada', 'ada95', 'ada2005'],
  ['Fortran', 'fortran', 'fortran', 'f90'],
  ['NASM', 'nasm', 'nasm'],
  ['Awk', null, 'awk', 'gawk', 'mawk', 'nawk'],
  ['AppleScript', 'applescript', 'applescript'],
  ['D', 'd', 'd'],
  ['Crystal', 'crystal', 'cr', 'crystal'],
  ['Verilog', 'verilog', 'verilog', 'v'],
  ['vhdl', 'vhdl', 'vhdl'],
];

type Lang = { name: string; prism: string | null };
const BY_ALIAS = new Map<string, Lang>();
for (const [name, prism, ...aliases] of LANGUAGES)
  for (const a of aliases) BY_ALIAS.set(a, { name, prism });

/** The language as the reference names it in `data-code-language` (unknown: as written). */
export function languageName(lang: string): string {
  return BY_ALIAS.get(lang.toLowerCase())?.name ?? lang;
}

let prism: PrismApi | null = null;
const loaded = new Set<string>();

function grammar(name: string): unknown {
  if (!prism) {
    prism = require('prismjs') as PrismApi;
  }
  if (!loaded.has(name)) {
    loaded.add(name);
    const load = require('prismjs/components/index.js') as ((langs: string[]) => void) & {
      silent?: boolean;
    };
    load.silent = true;
    load([name]);
  }
  return prism.languages[name];
}

// ---- flattening Prism's tree ------------------------------------------------------------------

type Piece = { types: string[]; text: string };

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

/** A run of output: Pygments class ('' for plain text) and its text. */
type Run = [cls: string, text: string];

// ---- per-language refinement ------------------------------------------------------------------

const PY_BUILTINS = new Set(
  '__import__ abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex delattr dict dir divmod enumerate eval exec filter float format frozenset getattr globals hasattr hash hex id input int isinstance issubclass iter len list locals map max memoryview min next object oct open ord pow print property range repr reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip'.split(
    ' ',
  ),
);
const PY_PSEUDO = new Set(['self', 'cls', 'Ellipsis', 'NotImplemented']);
const PY_MAGIC_VARS = new Set(
  '__annotations__ __bases__ __class__ __closure__ __code__ __defaults__ __dict__ __doc__ __file__ __func__ __globals__ __kwdefaults__ __module__ __mro__ __name__ __objclass__ __qualname__ __self__ __slots__ __weakref__'.split(
    ' ',
  ),
);
const PY_KEYWORDS = new Set(
  'assert async await break continue del elif else except finally for global if lambda pass raise nonlocal return try while yield as with match case'.split(
    ' ',
  ),
);
const PY_CONSTANTS = new Set(['True', 'False', 'None']);
const PY_WORD_OPS = new Set(['in', 'is', 'and', 'or', 'not']);

const PHP_KEYWORDS = new Set(
  'and as break case catch cfunction class clone const continue declare default die do echo else elseif empty enddeclare endfor endforeach endif endswitch endwhile enum eval exit extends final finally fn for foreach function global goto if implements include include_once instanceof insteadof interface isset list match new or parent print private protected public readonly require require_once return static switch throw trait try unset use var while xor yield'.split(
    ' ',
  ),
);

const NUMBER =
  /^(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|\d[\d_]*\.?[\d_]*(?:[eE][+-]?\d+)?j?|\.\d[\d_]*(?:[eE][+-]?\d+)?j?)$/;

function numberClass(text: string): string {
  if (/^0[xX]/.test(text)) return 'mh';
  if (/^0[oO]/.test(text)) return 'mo';
  if (/^0[bB]/.test(text)) return 'mb';
  if (/[.eEj]/.test(text)) return 'mf';
  return 'mi';
}

function stringClass(text: string): string {
  const q = /^[a-zA-Z]*(["'`])/.exec(text)?.[1];
  return q === '"' ? 's2' : q === "'" ? 's1' : q === '`' ? 'sb' : 's';
}

/** Splits plain text into Pygments' classes for a C-like or Python-like language. */
function plainRuns(
  text: string,
  ident: (word: string, before: string) => string,
  ops: RegExp,
  punct: RegExp,
): Run[] {
  const out: Run[] = [];
  const re = /\s+|[\p{L}_$][\p{L}\p{N}_$]*|\d[\w.]*|./gsu;
  let prev = '';
  for (const m of text.matchAll(re)) {
    const t = m[0];
    let cls = '';
    if (/^\s/.test(t)) cls = '';
    else if (/^\d/.test(t)) cls = NUMBER.test(t) ? numberClass(t) : '';
    else if (/^[\p{L}_$]/u.test(t)) cls = ident(t, prev);
    else if (ops.test(t)) cls = 'o';
    else if (punct.test(t)) cls = 'p';
    out.push([cls, t]);
    if (!/^\s/.test(t)) prev = t;
  }
  return out;
}

type Refiner = (pieces: Piece[]) => Run[];

const PY_OPS = /^[-~+/*%=<>&^|.!@]$/;
const PY_PUNCT = /^[\][{}:(),;]$/;

function pythonIdent(word: string, before: string): string {
  if (before === '.') return 'n';
  if (PY_CONSTANTS.has(word)) return 'kc';
  if (PY_WORD_OPS.has(word)) return 'ow';
  if (PY_KEYWORDS.has(word)) return 'k';
  if (PY_PSEUDO.has(word)) return 'bp';
  if (PY_BUILTINS.has(word)) return 'nb';
  if (/^[A-Z]\w*(?:Error|Exception|Warning)$/.test(word) || word === 'StopIteration') return 'ne';
  if (/^__\w+__$/.test(word)) return PY_MAGIC_VARS.has(word) ? 'vm' : 'fm';
  return 'n';
}

/** Python as Pygments' PythonLexer tokenizes it. */
const python: Refiner = (pieces) => {
  const runs: Run[] = [];
  let state: 'def' | 'class' | 'import' | 'from' | null = null;
  let fromLine = false;
  let atStart = true;
  for (const p of pieces) {
    const has = (t: string) => p.types.includes(t);
    if (has('comment')) {
      runs.push([atStart && p.text.startsWith('#!') ? 'ch' : 'c1', p.text]);
    } else if (has('string') || has('triple-quoted-string') || has('string-interpolation')) {
      if (has('interpolation') && !has('string')) {
        // inside f-string braces: Python again
        for (const r of plainRuns(p.text, pythonIdent, PY_OPS, PY_PUNCT))
          runs.push(r[1] === '{' || r[1] === '}' ? ['si', r[1]] : r);
      } else if (has('punctuation') && has('interpolation')) {
        runs.push(['si', p.text]);
      } else {
        const prefix = /^[a-zA-Z]+(?=["'])/.exec(p.text)?.[0] ?? '';
        if (prefix) runs.push(['sa', prefix]);
        const body = p.text.slice(prefix.length);
        const before = runs.map((r) => r[1]).join('');
        const lineStart = /(?:^|\n)[ \t]*$/.test(before);
        const cls = has('triple-quoted-string') && lineStart ? 'sd' : stringClass(body);
        if (/r/i.test(prefix)) runs.push([cls, body]);
        else
          for (const part of body.split(
            /(\\(?:[\\'"abfnrtv]|x[0-9a-fA-F]{2}|[0-7]{1,3}|N\{[^}]*\}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}))/,
          ))
            if (part) runs.push([/^\\./.test(part) ? 'se' : cls, part]);
      }
    } else if (has('decorator')) {
      runs.push(['nd', p.text]);
    } else {
      // keywords, names, operators, punctuation, numbers, plain text: by Pygments' rules
      for (const [cls0, t] of plainRuns(p.text, pythonIdent, PY_OPS, PY_PUNCT)) {
        let cls = cls0;
        if (/^\s+$/.test(t)) {
          if (state === 'def' || state === 'class' || state === 'import' || state === 'from') {
            if (!t.includes('\n') && (runs[runs.length - 1]?.[0] ?? '').startsWith('k')) cls = 'w';
          }
          if (t.includes('\n')) {
            state = null;
            fromLine = false;
          }
        } else if (t === 'def' && cls === 'k') {
          state = 'def';
        } else if (t === 'class' && cls === 'n') {
          cls = 'k';
          state = 'class';
        } else if (t === 'def') {
          cls = 'k';
          state = 'def';
        } else if (t === 'import' || t === 'from') {
          cls = 'kn';
          if (t === 'from') fromLine = true;
          state = t === 'import' && fromLine ? null : t;
        } else if (state === 'def' && cls === 'n') {
          cls = /^__\w+__$/.test(t) ? 'fm' : 'nf';
          state = null;
        } else if (state === 'def' && /^__\w+__$/.test(t)) {
          cls = 'fm';
          state = null;
        } else if (state === 'class' && (cls === 'n' || cls === 'nb' || cls === 'ne')) {
          cls = 'nc';
          state = null;
        } else if ((state === 'import' || state === 'from') && (cls === 'n' || t === '.')) {
          cls = 'nn';
        } else if ((state === 'import' || state === 'from') && t === 'as') {
          cls = 'k';
        }
        runs.push([cls, t]);
      }
    }
    if (p.text.trim()) atStart = false;
  }
  return runs;
};

const PHP_OPS = /^[~!%^&*+=|:.<>/@?-]$/;
const PHP_PUNCT = /^[\][{}();,]$/;

/** PHP as Pygments' PhpLexer tokenizes it with `startinline` (no `<?php` needed). */
const php: Refiner = (pieces) => {
  const runs: Run[] = [];
  let afterFunction = false;
  const ident = (word: string, before: string): string => {
    const lower = word.toLowerCase();
    if (before === '->' || before === '::') return 'na';
    if (lower === 'true' || lower === 'false' || lower === 'null') return 'kc';
    if (PHP_KEYWORDS.has(lower)) return 'k';
    return 'nx';
  };
  for (const p of pieces) {
    const has = (t: string) => p.types.includes(t);
    if (has('comment')) {
      runs.push([p.text.startsWith('/**') ? 'sd' : p.text.startsWith('/*') ? 'cm' : 'c1', p.text]);
    } else if (has('variable') && p.text.startsWith('$')) {
      runs.push(['nv', p.text]);
    } else if (has('string')) {
      runs.push([stringClass(p.text), p.text]);
    } else {
      for (const [cls0, t] of plainRuns(p.text, ident, PHP_OPS, PHP_PUNCT)) {
        let cls = cls0;
        if (cls === 'k' && t.toLowerCase() === 'function') afterFunction = true;
        else if (afterFunction && cls === 'nx') {
          cls = 'nf';
          afterFunction = false;
        } else if (cls !== '') afterFunction = false;
        runs.push([cls, t]);
      }
    }
  }
  return runs;
};

/** TeX as Pygments' TexLexer tokenizes it: commands, braces, math, comments; text is plain. */
const tex: Refiner = (pieces) => {
  const runs: Run[] = [];
  for (const p of pieces) {
    const has = (t: string) => p.types.includes(t);
    if (has('comment')) runs.push(['c', p.text]);
    else if (has('equation')) {
      // math: delimiters are strings, commands variables, numbers numbers, the rest builtins
      for (const m of p.text.matchAll(
        /\$\$|\$|\\[[\]()]|\\(?:[a-zA-Z]+|\S?)|[{}&_^]|[0-9]+|[-=!+*/()[\]]|[^=!+*/()[\]\\$%&_^{}0-9-]+/g,
      )) {
        const t = m[0];
        let cls = 'nb';
        if (t === '$$' || t === '\\[' || t === '\\]') cls = 'sb';
        else if (t === '$' || t === '\\(' || t === '\\)') cls = 's';
        else if (t.startsWith('\\')) cls = 'nv';
        else if (/^[0-9]/.test(t)) cls = 'm';
        else if (/^[-=!+*/()[\]]$/.test(t)) cls = 'o';
        runs.push([cls, t]);
      }
    } else if (has('function') || has('selector')) runs.push(['k', p.text]);
    else {
      for (const m of p.text.matchAll(/[{}&_^]|[^{}&_^]+/g))
        runs.push([/^[{}&_^]$/.test(m[0]) ? 'nb' : '', m[0]]);
    }
  }
  return runs;
};

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
  const info = effective === null ? undefined : BY_ALIAS.get(effective.toLowerCase());
  if (!info || !info.prism) return escape(code, quotes);
  const g = grammar(info.prism);
  if (!g) return escape(code, quotes);
  const pieces: Piece[] = [];
  flatten(prism!.tokenize(code, g), [], pieces);
  const refine = REFINERS[info.prism] ?? generic(false);
  return toHtml(refine(pieces), quotes);
}
