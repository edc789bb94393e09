/**
 * A bench's client process: forked with an IPC channel, driven by request/answer messages. Each
 * request awaits the child's next message; a `{type: 'error'}` message rejects it. Messages the
 * child sends on its own (e.g. periodic figures) go to `onUnsolicited` when their type is listed
 * in `unsolicited`, and are not taken as answers. `execArgv`: the child's Node flags (by default
 * this process's, as `fork` gives them).
 */
import { fork, type ChildProcess } from 'node:child_process';

export type ChildMessage = { type: string; msg?: string; [k: string]: unknown };

export class ClientProcess<M extends ChildMessage = ChildMessage> {
  private readonly child: ChildProcess;
  private readonly waiters: ((m: M) => void)[] = [];
  private failure: string | null = null;

  constructor(
    script: string,
    unsolicited: readonly string[] = [],
    onUnsolicited: (m: M) => void = () => {},
    execArgv?: readonly string[],
  ) {
    this.child = fork(script, [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: execArgv ? [...execArgv] : process.execArgv,
    });
    this.child.on('message', (m: M) => {
      if (unsolicited.includes(m.type)) {
        onUnsolicited(m);
        return;
      }
      if (m.type === 'error') this.failure = m.msg ?? 'client error';
      this.waiters.shift()?.(m);
    });
  }

  request(msg: unknown, what: string, timeoutMs = 120_000): Promise<M> {
    const p = new Promise<M>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out waiting for ${what} (${this.failure ?? ''})`)),
        timeoutMs,
      );
      this.waiters.push((m) => {
        clearTimeout(timer);
        if (m.type === 'error') reject(new Error(m.msg));
        else resolve(m);
      });
    });
    this.child.send(msg as object);
    return p;
  }

  /** The last error the child reported, if any. */
  get error(): string | null {
    return this.failure;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) {
        resolve();
        return;
      }
      this.child.once('exit', () => resolve());
      this.child.send({ type: 'stop' });
    });
  }
}
