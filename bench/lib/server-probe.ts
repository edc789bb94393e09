/**
 * Preloaded into a bench's server process (`node --import <this> dist/src/main.js`; the server
 * otherwise as `npm start` runs it) to measure it from inside over a stretch the bench chooses, on
 * the bench's word over the IPC channel: {type: 'start'}, then {type: 'stop'}, answered by
 * {type: 'figures', ...ProbeFigures}. Nothing runs between the two but V8's GC profiler and an
 * event-loop delay histogram (sampled every 5 ms); without an IPC channel it does nothing.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import v8 from 'node:v8';
import { AllocationMeter, type Allocation } from './heap-allocation.js';

export type ProbeFigures = Allocation & {
  /** CPU time of the process (user and system, all its threads) over the stretch, µs. */
  cpuUs: number;
  /** The event loop's delay over the stretch, ms. */
  loop: { p99: number; max: number };
  /** V8's young generation (new space) at the start and at the end of the stretch, MB. */
  newSpaceMb: { start: number; end: number };
};

const newSpaceMb = () =>
  (v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0) /
  (1024 * 1024);

if (process.send) {
  const meter = new AllocationMeter();
  const loop = monitorEventLoopDelay({ resolution: 5 });
  let cpu = process.cpuUsage();
  let newSpaceAtStart = 0;
  process.on('message', (m: { type?: string }) => {
    if (m.type === 'start') {
      loop.reset();
      loop.enable();
      cpu = process.cpuUsage();
      newSpaceAtStart = newSpaceMb();
      meter.start();
    } else if (m.type === 'stop') {
      const allocation = meter.stop();
      const used = process.cpuUsage(cpu);
      loop.disable();
      const figures: ProbeFigures = {
        ...allocation,
        cpuUs: used.user + used.system,
        loop: { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 },
        newSpaceMb: { start: newSpaceAtStart, end: newSpaceMb() },
      };
      process.send!({ type: 'figures', ...figures });
    }
  });
  // The channel does not keep the server alive; the server's own handles do.
  process.channel?.unref();
}
