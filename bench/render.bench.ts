/**
 * `npm run bench -- render`: markdown rendering inline (main thread) against the worker pool,
 * across message sizes, with a realistic realm context (1,000 users, 50 groups, 20 linkifiers,
 * 100 channels). Prints, per size: inline µs/message, the pool's sequential round trip, the
 * pool pipelined (many tasks in flight), and a 100-message batch per task; then the size where
 * a worker round trip stops costing more than rendering inline — the inline threshold
 * (workers/pool.ts DEFAULT_INLINE_THRESHOLD).
 *
 * Bounded: each measurement stops after its count or BENCH_MS (default 1500) milliseconds.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { renderMarkdown, type RenderContext } from '../src/lib/markdown/index.js';
import { DEFAULT_INLINE_THRESHOLD, RenderPool } from '../workers/pool.js';
import { fmt, machine } from './lib/stats.js';

function context(): RenderContext {
  return {
    version: 'bench-1',
    realm_url: 'http://bench.example',
    users: Array.from({ length: 1000 }, (_, i) => ({
      id: i + 1,
      full_name: `User Number ${i + 1}`,
      is_active: true,
    })),
    groups: Array.from({ length: 50 }, (_, i) => ({
      id: i + 1,
      name: `group-${i + 1}`,
      deactivated: false,
    })),
    channels: Array.from({ length: 100 }, (_, i) => ({ id: i + 1, name: `channel ${i + 1}` })),
    linkifiers: Array.from({ length: 20 }, (_, i) => ({
      id: i + 1,
      pattern: `PRJ${i}-(?P<id>[0-9]+)`,
      url_template: `https://tracker.example.com/prj${i}/{id}`,
    })),
    realm_emoji: [],
    alert_words: [],
  };
}

const PARAGRAPHS = [
  'Hey @**User Number 42**, can you look at PRJ3-1234 before the release? :smile:',
  'The **build** is *green* again after https://ci.example.com/job/77 finished, see #**channel 7>deploys**.',
  '> quoting @**User Number 7**: the cache was ~~cold~~ warm\n\nAgreed :+1:',
  '* first item with `inline code`\n* second item, see https://docs.example.com/page\n* third :tada:',
  '```python\ndef handler(event):\n    return {"status": 200, "body": event["body"]}\n```',
  'Plain text paragraph with a few words in it, nothing special, just chat between colleagues.',
];

function messageOf(size: number): string {
  let s = '';
  let i = 0;
  while (s.length < size) s += PARAGRAPHS[i++ % PARAGRAPHS.length]! + '\n\n';
  return s.slice(0, size);
}

function timeInline(content: string, ctx: RenderContext, budgetMs: number): number {
  for (let i = 0; i < 20; i++) renderMarkdown(content, ctx); // warm-up
  let n = 0;
  const start = performance.now();
  while (n < 200_000 && performance.now() - start < budgetMs) {
    renderMarkdown(content, ctx);
    n++;
  }
  return ((performance.now() - start) * 1000) / n;
}

async function timePoolSequential(
  pool: RenderPool,
  content: string,
  ctx: RenderContext,
  budgetMs: number,
): Promise<number> {
  for (let i = 0; i < 20; i++) await pool.inWorker([{ content }], ctx);
  let n = 0;
  const start = performance.now();
  while (n < 20_000 && performance.now() - start < budgetMs) {
    await pool.inWorker([{ content }], ctx);
    n++;
  }
  return ((performance.now() - start) * 1000) / n;
}

/** Many tasks in flight; returns µs per message (throughput) and main-thread µs per task. */
async function timePoolPipelined(
  pool: RenderPool,
  content: string,
  ctx: RenderContext,
  budgetMs: number,
  perTask: number,
): Promise<{ usPerMessage: number; mainUsPerTask: number }> {
  const items = Array.from({ length: perTask }, () => ({ content }));
  const inFlight = 32;
  let tasks = 0;
  const elu0 = performance.eventLoopUtilization();
  const start = performance.now();
  const worker = async () => {
    while (tasks < 20_000 && performance.now() - start < budgetMs) {
      tasks++;
      await pool.inWorker(items, ctx);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const elapsed = performance.now() - start;
  const elu = performance.eventLoopUtilization(elu0);
  return {
    usPerMessage: (elapsed * 1000) / (tasks * perTask),
    mainUsPerTask: (elu.active * 1000) / tasks,
  };
}

export async function renderBench(): Promise<void> {
  const budget = Number(process.env.BENCH_MS ?? 1500);
  const ctx = context();
  const pool = new RenderPool();
  const sizes = [40, 200, 1000, 3000, 10_000, 30_000];
  const rows: {
    size: number;
    inline: number;
    seq: number;
    piped: number;
    mainPerTask: number;
    batch: number;
  }[] = [];
  console.log(
    `render bench: ${machine()}, ${os.cpus().length} cores, ${budget} ms per measurement, 1 worker thread per spare core`,
  );
  console.log(
    'size(chars)  inline µs/msg   pool seq µs/msg  (ratio)   pool pipelined µs/msg  main-thread µs/task   batch-of-100 µs/msg',
  );
  for (const size of sizes) {
    const content = messageOf(size);
    const inline = timeInline(content, ctx, budget);
    const seq = await timePoolSequential(pool, content, ctx, budget);
    const piped = await timePoolPipelined(pool, content, ctx, budget, 1);
    const batch = size <= 3000 ? await timePoolPipelined(pool, content, ctx, budget, 100) : null;
    rows.push({
      size,
      inline,
      seq,
      piped: piped.usPerMessage,
      mainPerTask: piped.mainUsPerTask,
      batch: batch?.usPerMessage ?? NaN,
    });
    console.log(
      `${String(size).padStart(10)}  ${fmt(inline, 1).padStart(14)}  ${fmt(seq, 1).padStart(15)}  (${fmt(seq / inline, 2).padStart(5)}x)  ${fmt(piped.usPerMessage, 1).padStart(21)}  ${fmt(piped.mainUsPerTask, 1).padStart(19)}  ${fmt(batch?.usPerMessage ?? NaN, 1).padStart(19)}`,
    );
  }
  await pool.close();
  // Pathological 10,000-character inputs (the longest a message may be): the worst the renderer
  // does with many matches of one pattern. They go to the pool, off the event loop.
  console.log('worst cases (10,000 chars), inline ms:');
  for (const [name, unit] of [
    ['unicode emoji', '💩'],
    [':emoji:', ':smile: '],
    ['mentions', '@**User Number 1** '],
    ['linkifier matches', 'PRJ3-12 '],
    ['bare URLs', 'http://a.com/x '],
    ['links', '[a](b) '],
    ['open brackets', '['],
    ['list items', '* x\n'],
  ] as const) {
    const content = unit.repeat(Math.ceil(10_000 / unit.length)).slice(0, 10_000);
    const t0 = performance.now();
    renderMarkdown(content, ctx);
    console.log(`  ${name.padEnd(18)} ${fmt(performance.now() - t0, 1)} ms`);
  }
  // The threshold: the first size at which rendering inline costs the main thread more than
  // handing the message to a worker does (main-thread µs per task), so offloading is a net win
  // for everyone else on the event loop.
  const cross = rows.find((r) => r.inline > r.mainPerTask);
  console.log(
    cross
      ? `inline rendering costs the main thread more than a worker hand-off from ~${cross.size} chars (inline ${fmt(cross.inline, 1)} µs vs ${fmt(cross.mainPerTask, 1)} µs); configured threshold: ${DEFAULT_INLINE_THRESHOLD} chars`
      : `inline was cheaper at every size measured; configured threshold: ${DEFAULT_INLINE_THRESHOLD} chars`,
  );
  console.log(
    JSON.stringify({
      bench: 'render',
      date: new Date().toISOString(),
      rows,
      threshold: DEFAULT_INLINE_THRESHOLD,
    }),
  );
}
