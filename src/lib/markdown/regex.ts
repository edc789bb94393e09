/**
 * Linkifier patterns are Python regular expressions (the reference compiles them with RE2). This
 * module checks one the way the reference does, with the reference's error messages for the
 * common mistakes, and translates it to the source re2js compiles (./linear-regex.ts):
 *
 *   (?P<name>…) → (?<name>…)    \A → ^    \z → $    \pL → \p{L}    [[:alpha:]] → [a-zA-Z]
 *   (?i) (?s) (?m) at the very start → flags     escaped punctuation → the literal character
 *   a lone { or } → \{ \}     \p{Greek} \x{263a} (?i) (?i:…) elsewhere → as written
 *
 * Refused, as RE2 refuses them: lookaround, backreferences, atomic groups, comments; what this
 * module passes on, RE2 judges (re2Error). The translation is matched by RE2's algorithm, in time
 * linear in the text, so a pattern such as (a+)+ is as harmless here as in the reference.
 */

export class PatternError extends Error {}

export type TranslatedPattern = {
  source: string;
  flags: string;
  groupNames: string[];
};

const JS_SYNTAX = new Set([...'^$\\.*+?()[]{}|/']);
const POSIX: Record<string, string> = {
  alpha: 'a-zA-Z',
  digit: '0-9',
  alnum: 'a-zA-Z0-9',
  upper: 'A-Z',
  lower: 'a-z',
  space: '\\t\\n\\v\\f\\r ',
  word: 'a-zA-Z0-9_',
  xdigit: '0-9a-fA-F',
  punct: '!-\\/:-@\\[-`{-~',
};

export function translatePythonRegex(pattern: string): TranslatedPattern {
  if (pattern === '') throw new PatternError('This field cannot be blank.');
  const bad = (what: string) => new PatternError(`Bad regular expression: ${what}`);
  let out = '';
  let flags = '';
  let i = 0;
  const n = pattern.length;
  const groupNames: string[] = [];
  // Open groups (their start), and whether the previous item can take a quantifier.
  const stack: number[] = [];
  let lastAtom: 'none' | 'atom' | 'group' = 'none';

  // Leading global flags.
  const lead = /^\(\?([ims]+)\)/.exec(pattern);
  if (lead) {
    flags = [...new Set(lead[1])].join('');
    i = lead[0].length;
  }

  while (i < n) {
    const c = pattern[i]!;
    if (c === '\\') {
      const d = pattern[i + 1];
      if (d === undefined) throw bad('trailing \\');
      if (/[1-9]/.test(d)) throw bad(`invalid escape sequence: \\${d}`);
      if (d === 'A') out += '^';
      else if (d === 'z') out += '$';
      else if (d === 'Z') throw bad('invalid escape sequence: \\Z');
      else if ((d === 'p' || d === 'P' || d === 'x') && pattern[i + 2] === '{') {
        // \p{Greek}, \x{263a}: RE2's own spelling, judged by RE2 (linear-regex.ts).
        const end = pattern.indexOf('}', i + 3);
        if (end < 0) throw bad(`invalid escape sequence: ${pattern.slice(i)}`);
        out += pattern.slice(i, end + 1);
        i = end + 1;
        lastAtom = 'atom';
        continue;
      } else if ((d === 'p' || d === 'P') && pattern[i + 2] !== '{') {
        const cls = pattern[i + 2];
        if (cls === undefined || !/[A-Z]/.test(cls))
          throw bad(`invalid character class range: \\${d}`);
        out += `\\${d}{${cls}}`;
        i += 3;
        lastAtom = 'atom';
        continue;
      } else if (d === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const lit = pattern.slice(i + 2, end < 0 ? n : end);
        out += lit.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
        i = end < 0 ? n : end + 2;
        lastAtom = 'atom';
        continue;
      } else if (/[a-zA-Z0-9]/.test(d)) out += '\\' + d;
      else out += JS_SYNTAX.has(d) ? '\\' + d : d;
      i += 2;
      lastAtom = 'atom';
      continue;
    }
    if (c === '[') {
      const start = i;
      let j = i + 1;
      let cls = '[';
      if (pattern[j] === '^') {
        cls += '^';
        j++;
      }
      if (pattern[j] === ']') {
        cls += '\\]';
        j++;
      }
      let closed = false;
      while (j < n) {
        const e = pattern[j]!;
        if (e === ']') {
          closed = true;
          j++;
          break;
        }
        if (e === '[' && pattern[j + 1] === ':') {
          const m = /^\[:(\^?)([a-z]+):\]/.exec(pattern.slice(j));
          if (m) {
            const set = POSIX[m[2]!];
            if (!set || m[1]) throw bad(`invalid character class range: ${m[0]}`);
            cls += set;
            j += m[0].length;
            continue;
          }
        }
        if (e === '\\') {
          const d = pattern[j + 1];
          if (d === undefined) break;
          if ((d === 'p' || d === 'P' || d === 'x') && pattern[j + 2] === '{') {
            const end = pattern.indexOf('}', j + 3);
            if (end < 0) break;
            cls += pattern.slice(j, end + 1);
            j = end + 1;
            continue;
          }
          if ((d === 'p' || d === 'P') && pattern[j + 2] !== '{') {
            cls += `\\${d}{${pattern[j + 2] ?? ''}}`;
            j += 3;
            continue;
          }
          cls += /[a-zA-Z0-9]/.test(d) || '\\]^-['.includes(d) ? '\\' + d : d === '/' ? '\\/' : d;
          j += 2;
          continue;
        }
        cls +=
          e === '[' || e === '/' || e === '{' || e === '}' || e === '(' || e === ')' || e === '|'
            ? '\\' + e
            : e;
        j++;
      }
      if (!closed) throw bad(`missing ]: ${pattern.slice(start)}`);
      out += cls + ']';
      i = j;
      lastAtom = 'atom';
      continue;
    }
    if (c === '(') {
      if (pattern[i + 1] === '?') {
        const rest = pattern.slice(i + 2);
        const named = /^P<([A-Za-z_][A-Za-z0-9_]*)>/.exec(rest);
        // Flags for the rest of the group, (?i) (?s-m), or for a group of their own, (?i:…).
        const flagged = /^([imsU]*(?:-[imsU]*)?)([:)])/.exec(rest);
        if (flagged && flagged[1] !== '' && flagged[1] !== '-') {
          out += `(?${flagged[0]}`;
          i += 2 + flagged[0].length;
          if (flagged[2] === ')') {
            lastAtom = 'none';
            continue;
          }
        } else if (named) {
          if (groupNames.includes(named[1]!))
            throw bad(`duplicate capture group name: ${named[1]!}`);
          if (named[1]!.startsWith('linkifier_'))
            throw bad(`invalid named capture group: ${named[1]!}`);
          groupNames.push(named[1]!);
          out += `(?<${named[1]!}>`;
          i += 2 + named[0].length;
        } else if (rest.startsWith(':')) {
          out += '(?:';
          i += 3;
        } else if (
          rest.startsWith('P<') ||
          rest.startsWith('P=') ||
          (rest.startsWith('<') && !/^<[=!]/.test(rest))
        ) {
          throw bad(`invalid named capture group: (?${rest.slice(0, 2)}`);
        } else if (/^(=|!|<=|<!)/.test(rest)) {
          throw bad(`invalid perl operator: (?${rest.slice(0, 1)}`);
        } else if (rest.startsWith('#')) {
          throw bad('invalid perl operator: (?#');
        } else {
          throw bad(`invalid or unsupported Perl syntax: (?${rest.slice(0, 1)}`);
        }
      } else {
        out += '(';
        i++;
      }
      stack.push(i);
      lastAtom = 'none';
      continue;
    }
    if (c === ')') {
      if (stack.pop() === undefined) throw bad(`unexpected ): ${pattern}`);
      out += ')';
      i++;
      lastAtom = 'group';
      continue;
    }
    if (
      c === '*' ||
      c === '+' ||
      c === '?' ||
      (c === '{' && /^\{\d+(,\d*)?\}/.test(pattern.slice(i)))
    ) {
      let q: string;
      if (c === '{') q = /^\{\d+(,\d*)?\}/.exec(pattern.slice(i))![0];
      else q = c;
      // A run of operators: only one optional trailing `?` (non-greedy) is allowed.
      let run = q;
      let j = i + q.length;
      while (j < n && '*+?'.includes(pattern[j]!)) {
        run += pattern[j]!;
        j++;
      }
      if (lastAtom === 'none') throw bad(`missing argument to repetition operator: ${run}`);
      if (run.length > q.length + 1 || (run.length === q.length + 1 && !run.endsWith('?')))
        throw bad(`bad repetition operator: ${run}`);
      const m = /^\{(\d+)(,(\d*))?\}$/.exec(q);
      if (m && (Number(m[1]) > 1000 || (m[3] && Number(m[3]) > 1000)))
        throw bad(`bad repetition operator: ${q}`);
      out += run;
      i = j;
      lastAtom = 'none';
      continue;
    }
    if (c === '{' || c === '}') {
      out += '\\' + c;
      i++;
      lastAtom = 'atom';
      continue;
    }
    if (c === '/') {
      out += '\\/';
      i++;
      lastAtom = 'atom';
      continue;
    }
    if (c === '|') {
      out += c;
      i++;
      lastAtom = 'none';
      continue;
    }
    out += c;
    i++;
    lastAtom = c === '^' || c === '$' ? 'none' : 'atom';
  }
  if (stack.length > 0) throw bad(`missing ): ${pattern}`);
  // The rest is RE2's to judge (re2Error, linear-regex.ts): it runs the pattern.
  return { source: out, flags, groupNames };
}
