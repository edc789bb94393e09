/**
 * `content_html_diff` of an edit (GET /messages/{id}/history), as the reference computes it
 * (zerver/lib/html_diff.py: lxml's `htmldiff`, then `<ins>`/`<del>` turned into
 * `<span class="highlight_text_inserted">`/`<span class="highlight_text_deleted">`, the whole
 * wrapped in a `<div>`). This module reproduces that behaviour (checked against lxml 4.9 /
 * libxml2 2.9 on the reference's rendering test cases; see test/unit/html-diff.test.ts):
 *
 *  1. Both versions are parsed (htmlparser2) into an element tree and flattened into *tokens*:
 *     words (with their trailing whitespace), `<img>` tags, and the `href` of each link (shown
 *     only when it changed, as " Link: <href>"); the tags around a word ride on it.
 *  2. The token sequences are compared as Python's difflib.SequenceMatcher does (longest
 *     matching blocks, recursively; tokens frequent in long texts are not used as anchors), and
 *     matches of two tokens or fewer amid changes are dropped.
 *  3. The new version is rebuilt with each changed run wrapped: an insertion in `<ins>`, then the
 *     deletion it replaces in `<del>` (moved to where its unbalanced tags fit, or losing them).
 *  4. Insertions and deletions that span block elements are pushed inside them, and the result
 *     is serialized as libxml2's HTML serializer writes it.
 *
 * The steps live in src/lib/html-diff/: tree.ts (parsing), tokens.ts (1), sequence-matcher.ts
 * (2), markup.ts (3 and 4), serialize.ts.
 *
 * Pure; runs in the render worker (workers/render.worker.ts).
 */
import { diffTokens, fixupInsDel } from './html-diff/markup.js';
import { serialize, serializeContent } from './html-diff/serialize.js';
import { tokenize } from './html-diff/tokens.js';
import { parseFragment, pyStrip, type El } from './html-diff/tree.js';

// ---- the reference's highlight_html_differences ----------------------------------------------

const INSERTED = 'highlight_text_inserted';
const DELETED = 'highlight_text_deleted';

function renameMarks(el: El): void {
  if (el.tag === 'ins' || el.tag === 'del') {
    const cls = el.tag === 'ins' ? INSERTED : DELETED;
    el.tag = 'span';
    const existing = el.attrs.find(([k]) => k === 'class');
    if (existing) existing[1] = cls;
    else el.attrs.push(['class', cls]);
  }
  for (const c of el.children) renameMarks(c);
}

/** The reference's content_html_diff of `before` → `after` (both rendered message HTML). */
export function highlightHtmlDifferences(before: string, after: string): string {
  const marked = diffTokens(tokenize(before), tokenize(after));
  const fixed = pyStrip(serializeContent(fixupInsDel(marked)));
  const root = parseFragment(fixed);
  renameMarks(root);
  return serialize(root);
}
