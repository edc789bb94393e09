/**
 * Rendering service for the endpoints: short content is rendered inline on the main thread
 * (cheaper than a round trip to a worker); long content and batches go to a piscina pool. The
 * threshold (in characters of markdown) comes from `npm run bench -- render` (docs/benchmarks.md).
 *
 * Rendering happens in the endpoint before `realm.ask(...)`: the realm actor never waits on it.
 */
import { hot } from '../src/observability/metrics.js';
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import {
  renderMarkdown,
  type RenderContext,
  type RenderOptions,
  type RenderResult,
} from '../src/lib/markdown/index.js';
import { checkRenderedLength } from '../src/lib/message-content.js';
import type { DiffTask, RenderTask, RenderTaskResult } from './render.worker.js';

/**
 * Below this many characters (in total, for a batch), render on the main thread. From the render
 * bench (docs/benchmarks.md): a hand-off costs the main thread ~25–60 µs and adds ~60 µs of latency; inline
 * rendering costs ~12 µs at 40 characters, ~50 µs at 200 and ~240 µs at 1,000. Under 1,000
 * characters the added latency outweighs the event-loop time saved; above it, inline rendering
 * costs the event loop six times a hand-off or more.
 */
export const DEFAULT_INLINE_THRESHOLD = 1000;

export type RenderPoolOptions = {
  /** Worker threads (default: cores − 1, at least 1). */
  threads?: number;
  inlineThreshold?: number;
};

export type RenderItem = { content: string; opts?: RenderOptions };

export class RenderPool {
  readonly inlineThreshold: number;
  private readonly threads: number;
  private pool: Piscina | null = null;
  /** How many tasks carried each context version (each worker needs it once). */
  private readonly sent = new Map<string, number>();
  private closed = false;

  constructor(opts: RenderPoolOptions = {}) {
    this.threads = opts.threads ?? Math.max(1, availableParallelism() - 1);
    this.inlineThreshold = opts.inlineThreshold ?? DEFAULT_INLINE_THRESHOLD;
  }

  /**
   * Renders one message: inline when short, in a worker otherwise. A rendering past
   * MAX_RENDERED_LENGTH is refused ("Unable to render message", as the reference).
   */
  async render(
    content: string,
    context: RenderContext,
    opts?: RenderOptions,
  ): Promise<RenderResult> {
    let r: RenderResult;
    if (content.length < this.inlineThreshold) {
      hot.rendersInline++;
      r = renderMarkdown(content, context, opts);
    } else {
      [r] = (await this.inWorker([{ content, ...(opts ? { opts } : {}) }], context)) as [
        RenderResult,
      ];
    }
    checkRenderedLength(r.rendered_content);
    return r;
  }

  /**
   * Renders several messages; one worker task for the lot unless they are short in total. Each is
   * held to MAX_RENDERED_LENGTH as `render` holds one.
   */
  async renderBatch(items: readonly RenderItem[], context: RenderContext): Promise<RenderResult[]> {
    const total = items.reduce((n, i) => n + i.content.length, 0);
    let results: RenderResult[];
    if (total < this.inlineThreshold) {
      hot.rendersInline += items.length;
      results = items.map((i) => renderMarkdown(i.content, context, i.opts));
    } else {
      results = await this.inWorker(items, context);
    }
    for (const r of results) checkRenderedLength(r.rendered_content);
    return results;
  }

  /** Always in a worker (the bench compares both ways). */
  async inWorker(items: readonly RenderItem[], context: RenderContext): Promise<RenderResult[]> {
    const pool = this.ensurePool();
    hot.rendersInWorker += items.length;
    const sentCount = this.sent.get(context.version) ?? 0;
    const withContext = sentCount < this.threads * 2;
    let r = (await pool.run({
      version: context.version,
      context: withContext ? context : null,
      items,
    } satisfies RenderTask)) as RenderTaskResult;
    if (withContext) this.noteSent(context.version);
    if (r.needContext) {
      r = (await pool.run({
        version: context.version,
        context,
        items,
      } satisfies RenderTask)) as RenderTaskResult;
      if (r.needContext) throw new Error('render worker refused a context');
    }
    return r.results;
  }

  /**
   * `content_html_diff` for each (before, after) pair of an edit history, in one worker task
   * (a history's diffs are computed together; an LCS over long messages is too slow to run on
   * the main thread).
   */
  async diffHtml(pairs: readonly (readonly [string, string])[]): Promise<string[]> {
    if (pairs.length === 0) return [];
    return (await this.ensurePool().run({ kind: 'diff', pairs } satisfies DiffTask)) as string[];
  }

  private noteSent(version: string): void {
    if (this.sent.size > 1000) this.sent.clear();
    this.sent.set(version, (this.sent.get(version) ?? 0) + 1);
  }

  private ensurePool(): Piscina {
    if (this.closed) throw new Error('render pool is closed');
    this.pool ??= new Piscina({
      filename: new URL('./render.worker.js', import.meta.url).href,
      minThreads: 1,
      maxThreads: this.threads,
      idleTimeout: 60_000,
      // None of the main thread's flags (loaders, instrumentation: under the test runner they
      // cost each thread a second or more to start).
      execArgv: [],
    });
    return this.pool;
  }

  /** Tasks waiting for a thread, and threads running (for /metrics). */
  get backlog(): { queued: number; threads: number } {
    return this.pool === null
      ? { queued: 0, threads: 0 }
      : { queued: this.pool.queueSize, threads: this.pool.threads.length };
  }

  async close(): Promise<void> {
    this.closed = true;
    const pool = this.pool;
    this.pool = null;
    if (pool) await pool.destroy();
  }
}
