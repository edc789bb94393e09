/**
 * The capacity benches' statistics and rate control (bench/lib/hdr.ts, bench/lib/open-loop.ts,
 * bench/capacity.bench.ts's drift and channel layout): percentiles of merged histograms equal
 * those of all samples together, arrivals are Poisson at the asked rate and independent of the
 * server, and the step search finds the boundary.
 */
import t from 'tap';
import { channelLayout, drift } from '../../bench/capacity.bench.js';
import {
  decode,
  encode,
  merge,
  mergedSummary,
  newHistogram,
  recordMs,
  summary,
} from '../../bench/lib/hdr.js';
import {
  ArrivalSchedule,
  capacityOf,
  DEFAULT_OBJECTIVES,
  missedObjectives,
  nextStep,
  rng,
  type StepPlan,
} from '../../bench/lib/open-loop.js';
import { compareResults, lineChart, type BenchResult } from '../../bench/lib/report.js';
import {
  bucketQuantile,
  histogramBuckets,
  parsePrometheus,
} from '../../bench/lib/server-metrics.js';

/** The exact percentile of samples (nearest rank). */
function exact(samples: number[], p: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)]!;
}

t.test('histogram percentiles within 0.1% of the exact ones', (t) => {
  const random = rng(7);
  const samples = Array.from({ length: 20_000 }, () => 0.05 + random() ** 3 * 900);
  const h = newHistogram();
  for (const s of samples) recordMs(h, s);
  const sum = summary(h);
  t.equal(sum.n, samples.length);
  for (const [p, got] of [
    [50, sum.p50],
    [90, sum.p90],
    [99, sum.p99],
    [99.9, sum.p999],
  ] as const) {
    const want = exact(samples, p);
    t.ok(Math.abs(got - want) <= want * 0.001 + 0.001, `p${p}: ${got} vs ${want}`);
  }
  t.ok(Math.abs(sum.max - Math.max(...samples)) <= Math.max(...samples) * 0.001);
  t.end();
});

t.test('merging encoded histograms equals recording every sample in one', (t) => {
  const random = rng(3);
  const all = newHistogram();
  const parts: string[] = [];
  for (let proc = 0; proc < 3; proc++) {
    const h = newHistogram();
    // Processes with very different latencies: averaging their p99s would be wrong.
    for (let i = 0; i < 5_000; i++) {
      const v = (proc + 1) ** 3 * random() * 10;
      recordMs(h, v);
      recordMs(all, v);
    }
    parts.push(encode(h));
  }
  const merged = mergedSummary(parts);
  t.same(merged, summary(all));
  t.equal(summary(decode(parts[0]!)).n, 5_000, 'an encoded part decodes to its samples');
  t.equal(merge([...parts, '']).totalCount, 15_000, 'an empty part is skipped');
  t.ok(Number.isNaN(summary(newHistogram()).p99), 'no samples: NaN, not 0');
  t.end();
});

t.test('recording clamps and ignores what a histogram cannot hold', (t) => {
  const h = newHistogram();
  recordMs(h, NaN);
  recordMs(h, -5);
  recordMs(h, 0.0001);
  recordMs(h, 1e12);
  t.equal(h.totalCount, 3, 'NaN dropped, the rest clamped into range');
  t.equal(summary(h).p50, 0.001);
  t.end();
});

t.test('arrivals: Poisson at the asked rate, each exactly once, fixed in advance', (t) => {
  const s = new ArrivalSchedule(200, 1_000, rng(11));
  const times: number[] = [];
  // Polled irregularly, as a busy client would: the schedule does not depend on polling.
  let last = 0;
  for (let now = 1_000; now <= 61_000; now += 1 + (times.length % 37)) {
    times.push(...s.due(now));
    last = now;
  }
  const rate = times.length / 60;
  t.ok(Math.abs(rate - 200) < 200 * 0.03, `rate ${rate}/s`);
  t.ok(
    times.every((x, i) => i === 0 || x >= times[i - 1]!),
    'in order',
  );
  t.ok(times[0]! >= 1_000, 'none before the start');
  const gaps = times.slice(1).map((x, i) => x - times[i]!);
  const mean = gaps.reduce((a, g) => a + g, 0) / gaps.length;
  const sd = Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / gaps.length);
  t.ok(Math.abs(mean - 5) < 0.2, `mean gap ${mean} ms`);
  t.ok(Math.abs(sd / mean - 1) < 0.05, 'exponential gaps (sd = mean)');

  const again = new ArrivalSchedule(200, 1_000, rng(11));
  t.same(again.due(last), times, 'the same seed gives the same arrivals in one call');
  t.same(new ArrivalSchedule(0, 0, rng(1)).due(1e9), [], 'rate 0: no arrivals');
  t.end();
});

t.test('objectives', (t) => {
  const ok = { deliveryP99: 50, requestP99: 100, errors: 0, loopLagP99: 10 };
  t.same(missedObjectives(ok, DEFAULT_OBJECTIVES), []);
  t.same(missedObjectives({ ...ok, deliveryP99: NaN }, DEFAULT_OBJECTIVES), [], 'no samples pass');
  const bad = missedObjectives(
    { deliveryP99: 101, requestP99: 201, errors: 1, loopLagP99: 51 },
    DEFAULT_OBJECTIVES,
  );
  t.equal(bad.length, 4);
  t.match(bad[0], /delivery p99 101\.0 ms > 100 ms/);
  t.end();
});

t.test('step search: grow until a failure, then bisect', (t) => {
  const plan: StepPlan = { start: 1000, factor: 2, max: 64_000, refinements: 2, granularity: 100 };
  const limit = 11_000;
  const history: { users: number; passed: boolean }[] = [];
  for (let u = nextStep(plan, history); u !== null; u = nextStep(plan, history))
    history.push({ users: u, passed: u <= limit });
  t.same(
    history.map((h) => h.users),
    [1000, 2000, 4000, 8000, 16000, 12000, 10000],
  );
  t.equal(capacityOf(history), 10000);
  t.equal(capacityOf([{ users: 1000, passed: false }]), 0, 'nothing passed');
  t.equal(
    capacityOf([
      { users: 1000, passed: true },
      { users: 2000, passed: false },
      { users: 4000, passed: true },
    ]),
    1000,
    'a pass above a failure is not the capacity',
  );
  const capped = { ...plan, max: 5000 };
  const seen: number[] = [];
  const h2: { users: number; passed: boolean }[] = [];
  for (let u = nextStep(capped, h2); u !== null; u = nextStep(capped, h2)) {
    seen.push(u);
    h2.push({ users: u, passed: true });
  }
  t.same(seen, [1000, 2000, 4000, 5000], 'stops at the maximum');
  t.end();
});

t.test('soak drift: ratios of thirds and memory slope per hour', (t) => {
  const ws = Array.from({ length: 6 }, (_, i) => ({
    window: i + 1,
    minutes: i + 1,
    requestP99: i < 2 ? 10 : i < 4 ? 15 : 20,
    deliveryP99: 5,
    rssMb: 100 + i,
    heapMb: 50,
    errors: 0,
  }));
  const d = drift(ws);
  t.equal(d.requestP99Ratio, 2);
  t.equal(d.deliveryP99Ratio, 1);
  t.equal(d.rssMbPerHour, 60);
  t.equal(d.heapMbPerHour, 0);
  t.end();
});

t.test('channel layout: every user in each tier, channels contiguous', (t) => {
  const n = 1234;
  const layout = channelLayout(n);
  const per = new Map<string, number>();
  for (const c of layout) {
    t.ok(c.members[0] < c.members[1] && c.members[1] <= n);
    for (let i = c.members[0]; i < c.members[1]; i++) {
      const k = `${c.tier}:${i}`;
      per.set(k, (per.get(k) ?? 0) + 1);
    }
  }
  t.equal(per.get('0:0'), 1);
  t.equal(per.get('1:500'), 2, 'two channels of 30');
  t.equal(per.get('3:1233'), 1);
  t.end();
});

t.test('a histogram’s buckets from Prometheus text, and a quantile of what it gained', (t) => {
  const text = (a: number, b: number, c: number) =>
    '# HELP d x\n# TYPE d histogram\n' +
    `d_bucket{le="0.01"} ${a}\nd_bucket{le="0.1"} ${b}\nd_bucket{le="+Inf"} ${c}\n` +
    `d_sum 1.5\nd_count ${c}\nother_bucket{le="0.01"} 99\n`;
  const before = histogramBuckets(text(10, 10, 10), 'd');
  t.same(
    before,
    [
      [0.01, 10],
      [0.1, 10],
      [Infinity, 10],
    ],
    'bounds and counts, in order, of that histogram only',
  );
  t.same(histogramBuckets(text(1, 2, 3), 'missing'), []);
  // Gained: 50 below 10 ms, 50 between 10 and 100 ms.
  const after = histogramBuckets(text(60, 110, 110), 'd');
  t.equal(bucketQuantile(before, after, 0.5), 0.01, 'the median at the first bound');
  t.ok(Math.abs(bucketQuantile(before, after, 0.99) - (0.01 + 0.09 * (49 / 50))) < 1e-12);
  t.ok(Math.abs(bucketQuantile(before, after, 0.25) - 0.005) < 1e-12, 'interpolated from 0');
  t.ok(Number.isNaN(bucketQuantile(after, after, 0.99)), 'nothing gained: no figure');
  t.equal(bucketQuantile([], after, 0.99) > 0.01, true, 'no earlier reading: all of it');
  const labelled =
    'r_bucket{le="0.01",route="/a",method="POST"} 1\nr_bucket{le="+Inf",route="/a",method="POST"} 2\n' +
    'r_bucket{le="0.01",route="/a",method="GET"} 5\nr_bucket{le="+Inf",route="/a",method="GET"} 5\n' +
    'r_bucket{le="0.01",route="/ab",method="POST"} 7\nr_bucket{le="+Inf",route="/ab",method="POST"} 7\n';
  t.same(
    histogramBuckets(labelled, 'r', { route: '/a' }),
    [
      [0.01, 6],
      [Infinity, 7],
    ],
    'summed over the series with those labels (exact values only)',
  );
  t.same(histogramBuckets(labelled, 'r', { route: '/a', method: 'POST' }), [
    [0.01, 1],
    [Infinity, 2],
  ]);
  const past = histogramBuckets(text(60, 110, 200), 'd');
  t.equal(bucketQuantile(after, past, 0.99), 0.1, 'in the unbounded bucket: its lower bound');
  t.end();
});

t.test('Prometheus text, SVG chart and comparison', (t) => {
  const m = parsePrometheus(
    '# HELP x\nprocess_cpu_seconds_total 12.5\nnodejs_eventloop_lag_p99_seconds 0.02 1700000\nother{a="b"} 3\n',
    ['process_cpu_seconds_total', 'nodejs_eventloop_lag_p99_seconds'],
  );
  t.equal(m.get('process_cpu_seconds_total'), 12.5);
  t.equal(m.get('nodejs_eventloop_lag_p99_seconds'), 0.02);
  const svg = lineChart({
    title: 'a <b>',
    x: 's',
    y: 'ms',
    lines: [
      {
        name: 'p99',
        points: [
          [0, 1],
          [1, NaN],
          [2, 3],
        ],
      },
    ],
  });
  t.match(svg, /^<svg [^>]*>[\s\S]*<path d="M[^"]+L[^"]+"[\s\S]*<\/svg>$/);
  t.match(svg, /a &lt;b&gt;/);
  const step = (users: number, p99: number) =>
    ({
      users,
      requestsPerSecond: 100,
      request: { p99 },
      delivery: { p99 },
      kinds: { presence: { p99 } },
      server: { cpu: 50, loopLagP99: 5, rssMb: 100 },
    }) as unknown as BenchResult['steps'][number];
  const a = {
    scenario: 'capacity',
    capacity: 1000,
    steps: [step(1000, 10)],
    soak: null,
  } as unknown as BenchResult;
  const b = { ...a, capacity: 2000, steps: [step(1000, 5)] };
  const text = compareResults(a, b);
  t.match(text, /capacity \(users\)\s+1000\s+2000\s+2\.00x/);
  t.match(text, /1000 users: request p99 ms\s+10\.0\s+5\.0\s+0\.50x/);
  t.end();
});
