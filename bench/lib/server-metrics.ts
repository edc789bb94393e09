/**
 * The server's own figures for the benches: CPU (% of one core), resident memory, heap and
 * event-loop lag p99. Read from the server's Prometheus endpoint (GET /metrics: prom-client's
 * process and Node.js metrics) when it serves one; otherwise sampled from the process the server
 * runs in (the benches run the server in their own process). Everything goes through `sample()`,
 * so the benches do not care which.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export type ServerFigures = {
  /** CPU since the previous sample, % of one core. */
  cpu: number;
  rssMb: number;
  heapMb: number;
  /** Event-loop lag p99 since the previous sample (ms). */
  loopP99: number;
};

/** Values of the named metrics in a Prometheus text exposition (unlabelled series only). */
export function parsePrometheus(text: string, names: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    const space = line.indexOf(' ');
    const name = line.slice(0, space);
    if (names.includes(name)) out.set(name, Number(line.slice(space + 1).split(' ')[0]));
  }
  return out;
}

/**
 * The cumulative buckets of a histogram in a Prometheus text exposition: upper bound (seconds;
 * Infinity for `+Inf`) to count, in increasing order, summed over the series whose labels include
 * `labels` (all of them by default). Empty when it is not there.
 */
export function histogramBuckets(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): [number, number][] {
  const prefix = `${name}_bucket{`;
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const sums = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(prefix)) continue;
    const close = line.lastIndexOf('} ');
    if (close < 0) continue;
    const set = line.slice(prefix.length, close).split(',');
    if (!wanted.every((w) => set.includes(w))) continue;
    const le = set.find((l) => l.startsWith('le="'))?.slice(4, -1);
    if (le === undefined) continue;
    const bound = le === '+Inf' ? Infinity : Number(le);
    const count = Number(
      line
        .slice(close + 2)
        .trim()
        .split(' ')[0],
    );
    sums.set(bound, (sums.get(bound) ?? 0) + count);
  }
  return [...sums].sort((a, b) => a[0] - b[0]);
}

/**
 * The q-quantile (0..1) of what a histogram gained between two readings of its cumulative buckets
 * (`histogramBuckets`), in the buckets' unit, interpolated linearly inside the bucket it falls in
 * (as Prometheus' histogram_quantile does); NaN when nothing was observed in between. A quantile
 * in the last, unbounded bucket is reported as the largest finite bound.
 */
export function bucketQuantile(
  before: readonly [number, number][],
  after: readonly [number, number][],
  q: number,
): number {
  const was = new Map(before);
  const gained = after.map(([le, n]) => [le, n - (was.get(le) ?? 0)] as const);
  const total = gained.length ? gained[gained.length - 1]![1] : 0;
  if (!(total > 0)) return NaN;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const [le, n] of gained) {
    if (n >= rank) {
      if (le === Infinity) return lower;
      const inside = n - below;
      return inside > 0 ? lower + ((le - lower) * (rank - below)) / inside : le;
    }
    lower = le;
    below = n;
  }
  return lower;
}

const CPU = 'process_cpu_seconds_total';
const RSS = 'process_resident_memory_bytes';
const HEAP = 'nodejs_heap_size_used_bytes';
const LAG = 'nodejs_eventloop_lag_p99_seconds';

export class ServerProbe {
  /** 'metrics' once /metrics answered, 'process' when it does not exist. */
  source: 'metrics' | 'process' | 'unknown' = 'unknown';
  private lastCpuSeconds = NaN;
  private lastAt = 0;
  private processCpu = process.cpuUsage();
  private loop: IntervalHistogram | null = null;

  constructor(private readonly port: number) {}

  /**
   * The server's figures now. A sample asked for while another is under way shares its answer:
   * a saturated server answers /metrics in seconds, and two overlapping samples would divide one's
   * CPU time by the few milliseconds between their answers (a run once read 1557%).
   */
  sample(): Promise<ServerFigures> {
    this.inFlight ??= this.sampleNow().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private inFlight: Promise<ServerFigures> | null = null;

  private async sampleNow(): Promise<ServerFigures> {
    if (this.source !== 'process') {
      const figures = await this.fromMetrics().catch(() => null);
      if (figures) {
        this.source = 'metrics';
        return figures;
      }
      if (this.source === 'unknown') this.source = 'process';
    }
    return this.fromProcess();
  }

  private async fromMetrics(): Promise<ServerFigures | null> {
    const res = await fetch(`http://127.0.0.1:${this.port}/metrics`);
    if (res.status !== 200) return null;
    const m = parsePrometheus(await res.text(), [CPU, RSS, HEAP, LAG]);
    const cpuSeconds = m.get(CPU);
    if (cpuSeconds === undefined) return null;
    const at = performance.now();
    const cpu = Number.isNaN(this.lastCpuSeconds)
      ? NaN
      : ((cpuSeconds - this.lastCpuSeconds) * 1000 * 100) / (at - this.lastAt);
    this.lastCpuSeconds = cpuSeconds;
    this.lastAt = at;
    return {
      cpu,
      rssMb: (m.get(RSS) ?? NaN) / 2 ** 20,
      heapMb: (m.get(HEAP) ?? NaN) / 2 ** 20,
      loopP99: (m.get(LAG) ?? NaN) * 1000,
    };
  }

  /**
   * Histograms' cumulative buckets now, read from one scrape (`histogramBuckets`: name and
   * labels of each); empty lists without /metrics.
   */
  async buckets(
    wanted: readonly { name: string; labels?: Record<string, string> }[],
  ): Promise<[number, number][][]> {
    let text = '';
    if (this.source !== 'process') {
      try {
        const res = await fetch(`http://127.0.0.1:${this.port}/metrics`);
        if (res.status === 200) text = await res.text();
      } catch {
        // no figures from the server for this window
      }
    }
    return wanted.map((w) => (text ? histogramBuckets(text, w.name, w.labels) : []));
  }

  private fromProcess(): ServerFigures {
    if (!this.loop) {
      this.loop = monitorEventLoopDelay({ resolution: 10 });
      this.loop.enable();
      this.lastAt = performance.now();
      this.processCpu = process.cpuUsage();
    }
    const at = performance.now();
    const used = process.cpuUsage(this.processCpu);
    this.processCpu = process.cpuUsage();
    const mem = process.memoryUsage();
    const figures = {
      cpu: ((used.user + used.system) / 1000 / (at - this.lastAt)) * 100,
      rssMb: mem.rss / 2 ** 20,
      heapMb: mem.heapUsed / 2 ** 20,
      loopP99: this.loop.count > 0 ? this.loop.percentile(99) / 1e6 : NaN,
    };
    this.lastAt = at;
    this.loop.reset();
    return figures;
  }

  close(): void {
    this.loop?.disable();
  }
}
