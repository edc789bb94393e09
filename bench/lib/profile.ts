/**
 * BENCH_PROFILE=<dir>: a CPU profile of a bench's measured phase, taken in the bench's own process
 * (where the server under test runs), written to `<dir>/<name>.cpuprofile` (open it in Chrome's
 * DevTools or speedscope), and one of each of the process's worker threads over the same phase
 * (the render pool), written to `<dir>/<name>.<thread>.cpuprofile`: the
 * main thread's inspector session reaches them through the protocol's NodeWorker domain. The
 * capacity bench's client processes write theirs of each measured window too (WindowProfiles).
 * Without it the phase runs unprofiled.
 */
import fs from 'node:fs';
import inspector from 'node:inspector/promises';
import path from 'node:path';

type WorkerInfo = { workerId: string; title: string; url: string };
type Attached = { sessionId: string; workerInfo: WorkerInfo };
type Reply = { id?: number; result?: unknown; error?: { message: string } };

/** The worker threads of this process, driven through the main thread's session. */
class WorkerProfiles {
  private readonly workers = new Map<string, WorkerInfo>();
  private readonly waiting = new Map<string, (r: Reply) => void>();
  private nextId = 1;

  constructor(private readonly session: inspector.Session) {
    session.on('NodeWorker.attachedToWorker', (m: { params: Attached }) => {
      this.workers.set(m.params.sessionId, m.params.workerInfo);
    });
    session.on('NodeWorker.detachedFromWorker', (m: { params: { sessionId: string } }) => {
      this.workers.delete(m.params.sessionId);
    });
    session.on(
      'NodeWorker.receivedMessageFromWorker',
      (m: { params: { sessionId: string; message: string } }) => {
        const reply = JSON.parse(m.params.message) as Reply;
        if (reply.id === undefined) return;
        this.waiting.get(`${m.params.sessionId}/${reply.id}`)?.(reply);
      },
    );
  }

  async attach(): Promise<void> {
    await this.session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
  }

  /** Sends one protocol command to every worker; the replies, by session (failures dropped). */
  private async all(method: string): Promise<Map<string, unknown>> {
    const out = new Map<string, unknown>();
    await Promise.all(
      [...this.workers.keys()].map(async (sessionId) => {
        const id = this.nextId++;
        const key = `${sessionId}/${id}`;
        const reply = new Promise<Reply>((resolve) => {
          this.waiting.set(key, resolve);
          setTimeout(() => resolve({ error: { message: 'no answer' } }), 10_000).unref();
        });
        await this.session.post('NodeWorker.sendMessageToWorker', {
          sessionId,
          message: JSON.stringify({ id, method }),
        });
        const r = await reply;
        this.waiting.delete(key);
        if (!r.error) out.set(sessionId, r.result);
      }),
    );
    return out;
  }

  async start(): Promise<void> {
    await this.all('Profiler.enable');
    await this.all('Profiler.start');
  }

  /** Stops every worker's profile and writes each as `<base>.<title>-<id>.cpuprofile`. */
  async stop(base: string): Promise<void> {
    for (const [sessionId, result] of await this.all('Profiler.stop')) {
      const info = this.workers.get(sessionId);
      const title = path.basename(info?.url || 'worker').replace(/\.[cm]?js$/, '');
      const name = `${base}.${title}-${info?.workerId ?? sessionId}.cpuprofile`;
      fs.writeFileSync(name, JSON.stringify((result as { profile: unknown }).profile));
    }
  }
}

export async function profiled<T>(name: string | undefined, fn: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_PROFILE;
  if (!dir || name === undefined) return fn();
  const session = new inspector.Session();
  session.connect();
  const workers = new WorkerProfiles(session);
  await workers.attach();
  await workers.start();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    await workers.stop(path.join(dir, name));
    session.disconnect();
  }
}

/**
 * BENCH_PROFILE=<dir> in a bench's client process: a CPU profile from each `start` to the next
 * `stop`, written as `<dir>/<name>-window-<n>.cpuprofile` (nothing without it).
 */
export class WindowProfiles {
  private session: inspector.Session | null = null;
  private count = 0;

  async start(): Promise<void> {
    if (!process.env.BENCH_PROFILE || this.session !== null) return;
    this.session = new inspector.Session();
    this.session.connect();
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.start');
  }

  async stop(name: string): Promise<void> {
    const dir = process.env.BENCH_PROFILE;
    const session = this.session;
    if (!dir || session === null) return;
    this.session = null;
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, `${name}-window-${++this.count}.cpuprofile`),
      JSON.stringify(profile),
    );
  }
}
