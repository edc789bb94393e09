/**
 * BENCH_PROFILE=<dir>: a CPU profile of a bench's measured phase, taken in the bench's own process
 * (where the server under test runs), written to `<dir>/<name>.cpuprofile` (open it in Chrome's
 * DevTools or speedscope). Without it the phase runs unprofiled.
 */
import fs from 'node:fs';
import inspector from 'node:inspector/promises';
import path from 'node:path';

export async function profiled<T>(name: string | undefined, fn: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_PROFILE;
  if (!dir || name === undefined) return fn();
  const session = new inspector.Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}
