/**
 * Python, PHP and TeX as Pygments' lexers tokenize them (the reference's fixture checks them
 * token for token): refinements of Prism's tokens into Pygments' short classes, and the number,
 * string and plain-text rules they share with the generic mapping in highlight.ts.
 */

export type Piece = { types: string[]; text: string };

/** A run of output: Pygments class ('' for plain text) and its text. */
export type Run = [cls: string, text: string];

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

export const NUMBER =
  /^(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|\d[\d_]*\.?[\d_]*(?:[eE][+-]?\d+)?j?|\.\d[\d_]*(?:[eE][+-]?\d+)?j?)$/;

export function numberClass(text: string): string {
  if (/^0[xX]/.test(text)) return 'mh';
  if (/^0[oO]/.test(text)) return 'mo';
  if (/^0[bB]/.test(text)) return 'mb';
  if (/[.eEj]/.test(text)) return 'mf';
  return 'mi';
}

export function stringClass(text: string): string {
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

export type Refiner = (pieces: Piece[]) => Run[];

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
export const python: Refiner = (pieces) => {
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
export const php: Refiner = (pieces) => {
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
export const tex: Refiner = (pieces) => {
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
