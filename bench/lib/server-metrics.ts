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
