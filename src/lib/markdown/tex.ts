/**
 * TeX through KaTeX, as the reference renders `$$…$$` and ```` ```math ```` blocks: KaTeX's
 * HTML and MathML output with its default settings (errors are errors: the caller shows the
 * reference's `tex-error` span), loaded on first use so plain messages never pay for it.
 * Bounded: KaTeX limits macro expansion (maxExpand) and sizes (maxSize); the input is limited here.
 */
import { createRequire } from 'node:module';
import type katexModule from 'katex';

const require = createRequire(import.meta.url);
let katex: typeof katexModule | null = null;

/** Longer TeX than this is shown as an error rather than typeset. */
export const MAX_TEX_LENGTH = 10_000;

/** KaTeX's HTML for `tex`, or null when it is not valid TeX. */
export function renderTex(tex: string, display: boolean): string | null {
  if (tex.length > MAX_TEX_LENGTH) return null;
  katex ??= require('katex') as typeof katexModule;
  try {
    return katex.renderToString(tex, {
      displayMode: display,
      throwOnError: true,
      output: 'htmlAndMathml',
      trust: false,
      strict: 'ignore',
      maxExpand: 1000,
      maxSize: 100,
    });
  } catch {
    return null;
  }
}
