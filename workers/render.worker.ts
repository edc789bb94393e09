/**
 * The render worker (piscina): markdown → HTML for long messages and batches, and the HTML
 * diffs of edit history, off the main thread. Imports only src/lib. A realm's context is sent
 * once per worker and cached here by version; a task that names a version this worker does not
 * have gets `needContext` back and the pool resends it with the context.
 */
import { highlightHtmlDifferences } from '../src/lib/html-diff.js';
import {
  prepareContext,
  renderMarkdown,
  type PreparedContext,
  type RenderContext,
  type RenderOptions,
  type RenderResult,
} from '../src/lib/markdown/index.js';

export type RenderTask = {
  version: string;
  context: RenderContext | null;
  items: readonly { content: string; opts?: RenderOptions }[];
};

export type RenderTaskResult =
  { needContext: true } | { needContext: false; results: RenderResult[] };

/** `content_html_diff` of each (before, after) pair (src/lib/html-diff.ts). */
export type DiffTask = { kind: 'diff'; pairs: readonly (readonly [string, string])[] };

const MAX_CONTEXTS = 16;
const contexts = new Map<string, PreparedContext>();

export default function render(task: RenderTask | DiffTask): RenderTaskResult | string[] {
  if ('kind' in task) return task.pairs.map(([a, b]) => highlightHtmlDifferences(a, b));
  let ctx = contexts.get(task.version);
  if (!ctx) {
    if (!task.context) return { needContext: true };
    ctx = prepareContext(task.context);
    if (contexts.size >= MAX_CONTEXTS) contexts.delete(contexts.keys().next().value!);
    contexts.set(task.version, ctx);
  }
  return {
    needContext: false,
    results: task.items.map((i) => renderMarkdown(i.content, ctx, i.opts)),
  };
}
