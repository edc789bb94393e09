/**
 * What an inline pattern is (src/lib/markdown/inline.ts runs them in order) and the state it runs
 * with; shared by the pattern families (inline-mentions.ts, inline-links.ts, inline-emoji.ts).
 */
import type { RenderOptions } from './context.js';
import type { PreparedContext, RenderState } from './prepare.js';
import type { El } from './tree.js';

/** What a pattern's handler returns: an element, literal text (kept as is), or no match. */
export type Made = El | { literal: string } | null;

export type Pattern = {
  /** A global RegExp with match indices, or one that behaves as it does (./linear-regex.ts). */
  re: { lastIndex: number; exec(text: string): RegExpExecArray | null };
  /**
   * `search`: on a miss, keep searching after the match. `first`: the reference's older
   * patterns, which look only at the leftmost match; a miss ends the pattern for this text.
   */
  kind: 'search' | 'first';
  /** Whether an element's text is processed by the later patterns (false: atomic). */
  handle(m: RegExpExecArray, s: InlineState): Made | { el: Made; start: number; end: number };
};

export type InlineState = {
  ctx: PreparedContext;
  opts: RenderOptions;
  /** The channels links may point to (null: all of the context's). */
  linkable: ReadonlySet<number> | null;
  out: RenderState;
  inBlockquote: boolean;
  stash: (El | { literal: string })[];
};

/** What may stand before a mention or a channel link: not a word or URL character. */
export const BEFORE_MENTION = `(?<![^\\s'"\\(\\{\\[\\/<])`;
