/**
 * What a bench process did besides its work, on the epoch clock (ms) the bench's send and arrival
 * times use: its garbage collections (perf_hooks' `gc` entries; `GcLog`), its major page faults,
 * blocks read from disk and involuntary context switches (`waits`, counters without times), and, with
 * BENCH_TIMELINE=<dir>, a timeline (`Trace`: collections, event-loop stalls over 3 ms seen by a 1 ms
 * timer, and whatever the caller adds) written to <dir>/<name>.json for lining a run's latencies up
 * with them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PerformanceObserver, constants } from 'node:perf_hooks';

const epoch = (t: number) => performance.timeOrigin + t;

/** One collection: start (epoch ms), pause (ms), kind. */
export type GcEntry = [start: number, ms: number, kind: 'minor' | 'major' | 'other'];

/** Collections over a window: young-generation (scavenges) and old-generation (mark-compacts). */
export type GcFigures = {
  minor: { n: number; ms: number; max: number };
  major: { n: number; ms: number; max: number };
};

const kindOf = (kind: number): GcEntry[2] =>
  kind === constants.NODE_PERFORMANCE_GC_MINOR
    ? 'minor'
    : kind === constants.NODE_PERFORMANCE_GC_MAJOR
      ? 'major'
      : 'other';

/** This process's collections from `start()` on. */
export class GcLog {
  entries: GcEntry[] = [];
  private observer: PerformanceObserver | null = null;

  start(): void {
    if (this.observer) return;
    this.observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? -1;
        this.entries.push([epoch(e.startTime), e.duration, kindOf(kind)]);
      }
    });
    this.observer.observe({ entryTypes: ['gc'] });
  }

  stop(): void {
    this.observer?.disconnect();
    this.observer = null;
  }

  /** The collections that began in [from, to] (epoch ms). */
  figures(from: number, to: number): GcFigures {
    const f: GcFigures = { minor: { n: 0, ms: 0, max: 0 }, major: { n: 0, ms: 0, max: 0 } };
    for (const [start, ms, kind] of this.entries) {
      if (start < from || start > to || kind === 'other') continue;
      const k = f[kind];
      k.n++;
      k.ms += ms;
      k.max = Math.max(k.max, ms);
    }
    return f;
  }
}

/**
 * What kept a process from running, from process.resourceUsage() (getrusage, every thread of the
 * process): major page faults, each a mapped page read back from disk (code, a mapped file's
 * pages the kernel gave up); blocks read from disk by read() and the like (`fsRead`, 512-byte
 * units: a file's pages not mapped, e.g. SQLite's database read with pread, read back after the
 * kernel gave them up, which is no page fault); and involuntary context switches, each the CPU
 * taken from it by another process or thread while it could run.
 */
export type Waits = { majorFaults: number; diskBlocks: number; involuntarySwitches: number };

/** This process's Waits so far; `since`: their growth since that earlier reading. */
export function waits(since?: Waits): Waits {
  const u = process.resourceUsage();
  return {
    majorFaults: u.majorPageFault - (since?.majorFaults ?? 0),
    diskBlocks: u.fsRead - (since?.diskBlocks ?? 0),
    involuntarySwitches: u.involuntaryContextSwitches - (since?.involuntarySwitches ?? 0),
  };
}

/** BENCH_TIMELINE: a process's timeline, written as JSON. Does nothing unless the variable is set. */
export class Trace {
  readonly dir = process.env.BENCH_TIMELINE ?? '';
  private readonly gc = new GcLog();
  private stalls: [start: number, ms: number][] = [];
  private timer: NodeJS.Timeout | null = null;

  get on(): boolean {
    return this.dir !== '';
  }

  start(): void {
    if (!this.on || this.timer) return;
    this.gc.start();
    let last = performance.now();
    this.timer = setInterval(() => {
      const t = performance.now();
      if (t - last > 3) this.stalls.push([epoch(last), t - last]);
      last = t;
    }, 1);
  }

  /** Writes what was recorded (and `extra`) to <dir>/<name>.json and starts afresh. */
  write(name: string, extra: Record<string, unknown> = {}): void {
    if (!this.on) return;
    fs.mkdirSync(this.dir, { recursive: true });
    fs.writeFileSync(
      path.join(this.dir, `${name}.json`),
      JSON.stringify({ gc: this.gc.entries, stalls: this.stalls, ...extra }),
    );
    this.gc.entries = [];
    this.stalls = [];
  }

  stop(): void {
    this.gc.stop();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
