/**
 * How much this process allocated on the JavaScript heap over a stretch of a bench, and the
 * collections that ran meanwhile, from V8's GC profiler: what the heap grew by plus what every
 * collection freed. Run in the server's process (the bench's own, or the server's through
 * ./server-probe.ts), with the load generated from another process, it measures the server's
 * allocation (per request, divided by the requests it served). Buffers' contents are outside the
 * heap and not counted.
 */
import v8 from 'node:v8';

export type Allocation = {
  /** Bytes allocated on the heap between start and stop. */
  bytes: number;
  /** Young-generation collections (scavenges) and the others (mark-compact and the rest). */
  scavenges: number;
  others: number;
  /** Time spent in them (ms), and in the longest. */
  gcMs: number;
  gcMaxMs: number;
};

export class AllocationMeter {
  private readonly profiler = new v8.GCProfiler();
  private usedAtStart = 0;

  start(): void {
    this.usedAtStart = v8.getHeapStatistics().used_heap_size;
    this.profiler.start();
  }

  stop(): Allocation {
    const usedAtEnd = v8.getHeapStatistics().used_heap_size;
    const result = this.profiler.stop();
    let freed = 0;
    let scavenges = 0;
    let others = 0;
    let gcMs = 0;
    let gcMaxMs = 0;
    for (const gc of result.statistics) {
      freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
      if (gc.gcType === 'Scavenge' || gc.gcType === 'MinorMarkCompact') scavenges++;
      else others++;
      gcMs += gc.cost / 1000; // µs
      gcMaxMs = Math.max(gcMaxMs, gc.cost / 1000);
    }
    return { bytes: usedAtEnd - this.usedAtStart + freed, scavenges, others, gcMs, gcMaxMs };
  }
}
