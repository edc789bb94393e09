/**
 * `npm run bench -- render`: markdown rendering inline (main thread) against the worker pool,
 * across message sizes, with a realistic realm context (1,000 users, 50 groups, 20 linkifiers,
 * 100 channels). Prints, per size: inline µs/message, the pool's sequential round trip, the
 * pool pipelined (many tasks in flight), and a 100-message batch per task; then the size where
 * a worker round trip stops costing more than rendering inline — the inline threshold
 * (workers/pool.ts DEFAULT_INLINE_THRESHOLD).
 *
 * Then the cost of what the reference's rendering adds, per message, against a plain message of
 * similar length: highlighted code (Python, JavaScript, PHP), TeX (inline and a math block), time
 * widgets, and previews (an external image through the image proxy, a video, a YouTube still,
 * an uploaded image's thumbnail markup); and thumbnail generation with sharp, per image and per
 * MiB of original, for a photo (JPEG), a screenshot (PNG) and an animated GIF.
 *
 * Bounded: each measurement stops after its count or BENCH_MS (default 1500) milliseconds.
 * `npm run bench -- render --quick` checks that the bench runs (short budgets, fewer sizes,
 * smaller images); its figures are not for the record.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import sharp from 'sharp';
import { renderMarkdown, type RenderContext } from '../src/lib/markdown/index.js';
import type { RenderOptions } from '../src/lib/markdown/context.js';
import { makeThumbnail, probeImage } from '../src/media/thumbnailer.js';
import { THUMBNAIL_OUTPUT_FORMATS } from '../src/lib/thumbnail-formats.js';
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
    image_proxy: { prefix: 'http://bench.example/external_content/', key: 'bench-key' },
  };
}

const QUICK = process.argv.includes('--quick');

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

function timeInline(
  content: string,
  ctx: RenderContext,
  budgetMs: number,
  opts?: RenderOptions,
): number {
  for (let i = 0; i < 20; i++) renderMarkdown(content, ctx, opts); // warm-up
  let n = 0;
  const start = performance.now();
  while (n < 200_000 && performance.now() - start < budgetMs) {
    renderMarkdown(content, ctx, opts);
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
  const budget = Number(process.env.BENCH_MS ?? (QUICK ? 100 : 1500));
  const ctx = context();
  const pool = new RenderPool();
  const sizes = QUICK ? [200, 3000] : [40, 200, 1000, 3000, 10_000, 30_000];
  const rows: {
    size: number;
    inline: number;
    seq: number;
    piped: number;
    mainPerTask: number;
    batch: number;
  }[] = [];
  console.log(
    `render bench${QUICK ? ' (--quick: a check that it runs, not figures)' : ''}: ${machine()}, ${os.cpus().length} cores, ${budget} ms per measurement, 1 worker thread per spare core`,
  );
  console.log(
    'size(chars)  inline µs/msg   pool seq µs/msg  (ratio)   pool pipelined µs/msg  main-thread µs/task   batch-of-100 µs/msg',
  );
  for (const size of sizes) {
    const content = messageOf(size);
    const inline = timeInline(content, ctx, budget);
    const seq = await timePoolSequential(pool, content, ctx, budget);
    const piped = await timePoolPipelined(pool, content, ctx, budget, 1);
    const batch =
      size <= 3000 && !QUICK ? await timePoolPipelined(pool, content, ctx, budget, 100) : null;
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
  const features = featureCosts(ctx, budget);
  const thumbnails = await thumbnailCosts();
  console.log(
    JSON.stringify({
      bench: 'render',
      date: new Date().toISOString(),
      quick: QUICK,
      rows,
      threshold: DEFAULT_INLINE_THRESHOLD,
      features,
      thumbnails,
    }),
  );
}

const PYTHON = `\`\`\`python
import json

class Handler(object):
    """Answers one request."""
    def __init__(self, limit=10):
        self.limit = limit

    def handle(self, event):
        items = [x * 2 for x in event.get("items", []) if x > 0]
        if len(items) > self.limit:
            raise ValueError(f"too many: {len(items)}")
        return {"status": 200, "body": json.dumps(items)}
\`\`\``;
const JAVASCRIPT = `\`\`\`js
export async function fetchAll(urls, { concurrency = 4 } = {}) {
  const results = new Map();
  for (let i = 0; i < urls.length; i += concurrency) {
    const batch = urls.slice(i, i + concurrency);
    const answers = await Promise.all(batch.map((u) => fetch(u).then((r) => r.json())));
    batch.forEach((u, j) => results.set(u, answers[j]));
  }
  return results; // in the order asked
}
\`\`\``;
const PHP = `\`\`\`php
<?php
function total(array $rows, string $key = 'amount'): float {
    $sum = 0.0;
    foreach ($rows as $row) {
        if (isset($row[$key]) && is_numeric($row[$key])) {
            $sum += (float) $row[$key];
        }
    }
    return round($sum, 2);
}
\`\`\``;

/** Render cost of each kind of content against a plain message of similar length. */
function featureCosts(
  ctx: RenderContext,
  budget: number,
): { name: string; chars: number; us: number; extraUs: number }[] {
  const plain = (n: number) =>
    PARAGRAPHS[5]!.repeat(Math.ceil(n / PARAGRAPHS[5]!.length)).slice(0, n);
  const upload: RenderOptions = {
    upload_previews: {
      '2/ab/cdefg/photo.jpg': {
        original_width_px: 4032,
        original_height_px: 3024,
        content_type: 'image/jpeg',
        thumbnail_url: '/user_uploads/thumbnail/2/ab/cdefg/photo.jpg/840x560.webp',
        animated: false,
        transcoded_image: null,
      },
    },
  };
  const samples: [string, string, RenderOptions?][] = [
    ['highlighted Python (12 lines)', PYTHON],
    ['highlighted JavaScript (9 lines)', JAVASCRIPT],
    ['highlighted PHP (11 lines)', PHP],
    ['unhighlighted code (12 lines)', PYTHON.replace('```python', '```')],
    [
      'TeX inline ($$…$$)',
      'The area is $$\\pi r^2$$ and the sum $$\\sum_{i=1}^{n} i = \\frac{n(n+1)}{2}$$.',
    ],
    [
      'TeX math block',
      '```math\n\\int_0^\\infty e^{-x^2}\\,dx = \\frac{\\sqrt{\\pi}}{2}\n\\qquad\n\\begin{pmatrix} a & b \\\\ c & d \\end{pmatrix}\n```',
    ],
    ['time widget', 'Meeting at <time:2024-03-01T10:00:00+01:00>, see you there.'],
    ['external image preview', 'Look: https://images.example.com/photos/cat.png'],
    ['video preview', 'Demo: https://media.example.com/clips/demo.mp4'],
    ['YouTube still', 'Watch https://www.youtube.com/watch?v=hG0TwoRLrmw'],
    ['uploaded image preview', '[photo.jpg](/user_uploads/2/ab/cdefg/photo.jpg)', upload],
  ];
  console.log('cost per message of what the reference renders (inline, main thread):');
  console.log(
    '  content                              chars   µs/msg   plain same length   extra µs',
  );
  const out: { name: string; chars: number; us: number; extraUs: number }[] = [];
  for (const [name, content, opts] of samples) {
    const us = timeInline(content, ctx, budget, opts);
    const base = timeInline(plain(content.length), ctx, budget);
    out.push({ name, chars: content.length, us, extraUs: us - base });
    console.log(
      `  ${name.padEnd(35)} ${String(content.length).padStart(6)}  ${fmt(us, 1).padStart(7)}  ${fmt(base, 1).padStart(18)}  ${fmt(us - base, 1).padStart(9)}`,
    );
  }
  return out;
}

/** Thumbnail generation with sharp (as the thumbnail queue makes them), per image and per MiB. */
async function thumbnailCosts(): Promise<
  { name: string; bytes: number; msPerImage: number; msPerMiB: number; msPerMpx: number }[]
> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'confab-bench-thumb-'));
  try {
    const scale = QUICK ? 0.25 : 1;
    const w = Math.round(4032 * scale);
    const h = Math.round(3024 * scale);
    // Noise compresses like a photo does (worst case for size); a screenshot is flat colour.
    const noise = await sharp(
      Buffer.from(Array.from({ length: w * h * 3 }, () => Math.floor(Math.random() * 256))),
      { raw: { width: w, height: h, channels: 3 } },
    )
      .jpeg({ quality: 85 })
      .toBuffer();
    const sw = Math.round(2560 * scale);
    const sh = Math.round(1440 * scale);
    const screenshot = await sharp({
      create: { width: sw, height: sh, channels: 3, background: { r: 240, g: 240, b: 245 } },
    })
      .composite([
        {
          input: { create: { width: sw >> 1, height: sh >> 2, channels: 3, background: '#36c' } },
          top: 20,
          left: 20,
        },
      ])
      .png()
      .toBuffer();
    const frames = QUICK ? 4 : 20;
    const animated = await sharp(
      await Promise.all(
        Array.from({ length: frames }, (_, i) =>
          sharp({
            create: {
              width: 480,
              height: 360,
              channels: 3,
              background: { r: (i * 37) % 256, g: 120, b: 200 - i * 5 },
            },
          })
            .png()
            .toBuffer(),
        ),
      ),
      { join: { animated: true } },
    )
      .gif()
      .toBuffer();
    const images: [string, Buffer, string][] = [
      [`photo ${w}x${h} JPEG`, noise, 'image/jpeg'],
      [`screenshot ${sw}x${sh} PNG`, screenshot, 'image/png'],
      [`animation 480x360x${frames} GIF`, animated, 'image/gif'],
    ];
    console.log(
      'thumbnail generation (sharp, concurrency 1, every default format the image gets):',
    );
    const out: {
      name: string;
      bytes: number;
      msPerImage: number;
      msPerMiB: number;
      msPerMpx: number;
    }[] = [];
    for (const [name, data, type] of images) {
      const file = path.join(dir, name.replace(/\W+/g, '_'));
      fs.writeFileSync(file, data);
      const probe = await probeImage(file, type);
      if (!probe) throw new Error(`bench image not readable: ${name}`);
      const facts = {
        original_width_px: probe.width,
        original_height_px: probe.height,
        frames: probe.frames,
      };
      const formats = THUMBNAIL_OUTPUT_FORMATS.filter((f) => !f.animated || probe.frames > 1);
      const once = async () => {
        for (const f of formats) await makeThumbnail(file, facts, f);
      };
      await once(); // warm-up
      const reps = QUICK ? 1 : 5;
      const t0 = performance.now();
      for (let i = 0; i < reps; i++) await once();
      const msPerImage = (performance.now() - t0) / reps;
      const mib = data.length / (1024 * 1024);
      const mpx = (probe.width * probe.height * probe.frames) / 1e6;
      out.push({
        name,
        bytes: data.length,
        msPerImage,
        msPerMiB: msPerImage / mib,
        msPerMpx: msPerImage / mpx,
      });
      console.log(
        `  ${name.padEnd(32)} ${fmt(mib, 2).padStart(6)} MiB  ${fmt(mpx, 1).padStart(5)} Mpx  ${fmt(msPerImage, 1).padStart(8)} ms/image  ${fmt(msPerImage / mib, 1).padStart(8)} ms/MiB  ${fmt(msPerImage / mpx, 1).padStart(7)} ms/Mpx`,
      );
    }
    return out;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
