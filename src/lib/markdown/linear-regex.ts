/**
 * Regular expressions that match in time linear in their input, for the patterns users write
 * (linkifiers): RE2's algorithm (re2js, a JavaScript port of RE2 — the engine the reference
 * compiles linkifiers with). A backtracking engine such as JavaScript's takes polynomial or
 * exponential time on some patterns: the linkifier `a*a*a*a*b` held a render for 12 s on 300
 * characters of `a`, on the main thread when the message was short.
 *
 * LinearRegExp looks like the global RegExp the renderer's patterns are (`lastIndex`, `exec`,
 * `groups` and the `d` flag's `indices`), so it runs in the same loops. Each string is first
 * tested with RE2's DFA, which is fast and capture-free: a text with no match (most messages)
 * costs a single pass.
 */
import { RE2JS, type Matcher } from 're2js';

export type LinearExecArray = RegExpExecArray & {
  indices: [number, number][] & { groups: Record<string, [number, number] | undefined> };
};

/**
 * RE2's error for a pattern it refuses, as RE2 itself words it (without re2js's prefix and the
 * backquotes it puts around the part refused); null when it compiles.
 */
export function re2Error(source: string, flags = ''): string | null {
  try {
    RE2JS.compile(source, re2Flags(flags));
    return null;
  } catch (err) {
    return String(err instanceof Error ? err.message : err)
      .replace(/^error parsing regexp: /, '')
      .replace(/: `([^]*)`$/, ': $1');
  }
}

function re2Flags(flags: string): number {
  let f = 0;
  if (flags.includes('i')) f |= RE2JS.CASE_INSENSITIVE;
  if (flags.includes('s')) f |= RE2JS.DOTALL;
  if (flags.includes('m')) f |= RE2JS.MULTILINE;
  return f;
}

export class LinearRegExp {
  lastIndex = 0;
  private readonly re: RE2JS;
  private readonly names: [string, number][];
  private readonly count: number;
  /** The last string tested, whether it holds any match, and a matcher on it. */
  private tested: string | null = null;
  private any = false;
  private matcher: Matcher | null = null;

  /** `source` in RE2 syntax; `flags` among i, s, m (always global, with match indices). */
  constructor(source: string, flags = '') {
    this.re = RE2JS.compile(source, re2Flags(flags));
    this.names = Object.entries(this.re.namedGroups());
    this.count = this.re.groupCount();
  }

  /** The next match at or after `lastIndex`, as a global RegExp with the `d` flag gives it. */
  exec(input: string): LinearExecArray | null {
    if (input !== this.tested) {
      this.tested = input;
      this.any = this.re.test(input);
      this.matcher = null;
    }
    if (!this.any || this.lastIndex > input.length) {
      this.lastIndex = 0;
      return null;
    }
    const m = (this.matcher ??= this.re.matcher(input));
    if (!m.find(this.lastIndex)) {
      this.lastIndex = 0;
      return null;
    }
    const values: (string | undefined)[] = [];
    const spans: [number, number][] = [];
    for (let g = 0; g <= this.count; g++) {
      const start = m.start(g);
      values.push(start < 0 ? undefined : (m.group(g) ?? undefined));
      spans.push(start < 0 ? (undefined as unknown as [number, number]) : [start, m.end(g)]);
    }
    const groups: Record<string, string | undefined> = {};
    const groupSpans: Record<string, [number, number] | undefined> = {};
    for (const [name, g] of this.names) {
      groups[name] = values[g];
      groupSpans[name] = spans[g];
    }
    const out = Object.assign(values, {
      index: spans[0]![0],
      input,
      groups,
      indices: Object.assign(spans, { groups: groupSpans }),
    });
    this.lastIndex = spans[0]![1];
    return out as unknown as LinearExecArray;
  }
}
