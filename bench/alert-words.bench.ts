/**
 * `npm run bench -- alert-words`: what a realm's alert words cost message rendering. For 0,
 * 1,000, 5,000 and 20,000 words (5 per user), renders a short (≈150 characters) and a longer
 * (≈1,000 characters) message and reports µs per message through renderMarkdown (the automaton
 * of src/lib/markdown/alert-words.ts), next to the straightforward scan it replaced (every word
 * searched in the message), and the one-time cost of building the automaton.
 *
 * Bounded: each measurement stops after 200,000 renders or BENCH_MS (default 1000) milliseconds.
 */
import { performance } from 'node:perf_hooks';
import { buildAlertWordMatcher } from '../src/lib/markdown/alert-words.js';
import type { RenderAlertWord, RenderContext } from '../src/lib/markdown/context.js';
import { prepareContext, renderMarkdown } from '../src/lib/markdown/index.js';
import { fmt, machine } from './lib/stats.js';

const SHORT =
  'The **build** is *green* again after https://ci.example.com/job/77 finished, see the deploys. Plain text with a few words in it.';
const LONG = Array.from({ length: 8 }, () => SHORT).join('\n\n');

function words(n: number): RenderAlertWord[] {
  return Array.from({ length: n }, (_, i) => ({
    user_id: Math.floor(i / 5) + 1,
    word: `alertword${i}`,
  }));
}

function context(alertWords: RenderAlertWord[]): RenderContext {
  return {
    version: `bench-${alertWords.length}`,
    realm_url: 'http://bench.example',
    users: Array.from({ length: 1000 }, (_, i) => ({
      id: i + 1,
      full_name: `User Number ${i + 1}`,
      is_active: true,
    })),
    groups: [],
    channels: [],
    linkifiers: [],
    realm_emoji: [],
    alert_words: alertWords,
  };
}

/** The scan the automaton replaced: each word looked for in the whole message. */
function naiveScan(content: string, list: readonly RenderAlertWord[]): number {
  const text = content.toLowerCase();
  let hits = 0;
  for (const { word } of list) if (text.includes(word)) hits++;
  return hits;
}

function time(fn: () => unknown, budgetMs: number): number {
  for (let i = 0; i < 50; i++) fn();
  let n = 0;
  const start = performance.now();
  while (n < 200_000 && performance.now() - start < budgetMs) {
    fn();
    n++;
  }
  return ((performance.now() - start) * 1000) / n;
}

export async function alertWordsBench(): Promise<void> {
  const budget = Number(process.env.BENCH_MS ?? 1000);
  console.log(`alert-words bench: ${machine()}, ${budget} ms per measurement`);
  console.log(
    'words    build ms   short: render µs  (+ naive scan µs)   long: render µs  (+ naive scan µs)',
  );
  for (const n of [0, 1000, 5000, 20000]) {
    const list = words(n);
    const grouped = new Map(list.map((w) => [w.word, [w.user_id]]));
    const t0 = performance.now();
    for (let i = 0; i < 3; i++) buildAlertWordMatcher(grouped);
    const buildMs = (performance.now() - t0) / 3;
    const ctx = prepareContext(context(list));
    const short = time(() => renderMarkdown(SHORT, ctx), budget);
    const long = time(() => renderMarkdown(LONG, ctx), budget);
    const naiveShort = time(() => naiveScan(SHORT, list), budget);
    const naiveLong = time(() => naiveScan(LONG, list), budget);
    console.log(
      `${String(n).padStart(5)}  ${fmt(buildMs, 1).padStart(9)}  ${fmt(short, 1).padStart(17)}  ${fmt(naiveShort, 1).padStart(19)}  ${fmt(long, 1).padStart(16)}  ${fmt(naiveLong, 1).padStart(19)}`,
    );
  }
  await Promise.resolve();
}
