/**
 * Where the HTTP server listens: uWS on the public address itself, or (HTTP_GUARD) uWS on a private
 * Unix socket behind the guard's relay (guard.ts, run in a thread of its own: guard-thread.ts),
 * which answers the odd but legal requests uWS would hold or drop through a route only it knows.
 */
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { FatalError, JsonableError } from '../lib/errors.js';
import {
  descriptorBudget,
  guardRoutes,
  openFilesLimit,
  privateSocketPath,
  removeStaleSocketDirs,
  relayCapacity,
} from './guard.js';
import { log } from '../observability/log.js';
import type { GuardThreadData, GuardThreadReport } from './guard-thread.js';
import { RequestContext } from './request.js';
import { sendError } from './respond.js';
import { batchTransfer, type SocketBatch } from './socket-batch.js';
import type { GuardSocketHost } from './socket.js';
import { closeListenSocket, listen, listenUnix, type TemplatedApp } from './uws.js';

/** The guard's answers end the connection (nothing after the refused request is read). */
const CLOSE = { Connection: 'close' };

export type HttpListener = {
  readonly port: number;
  /** Stops accepting connections; open ones go on (resolves once what arrived reached uWS). */
  stopAccepting(): Promise<void>;
  /** Ends the connections left (once shutdown has answered what it will). */
  closeConnections(): void;
};

export async function openListener(
  app: TemplatedApp,
  host: string,
  port: number,
  guarded: boolean,
  /** Connections the guard holds at once; null: as many as the open-files limit allows. */
  maxConnections: number | null = null,
  /** The event sockets, held by the guard (src/http/guard-sockets.ts) when it runs. */
  sockets: GuardSocketHost | null = null,
  /** When the guard holds long-polls itself (config.httpGuardPolls). */
  polls: 'auto' | 'always' = 'auto',
): Promise<HttpListener> {
  if (!guarded) {
    const { socket, port: bound } = await listen(app, host, port);
    return {
      port: bound,
      stopAccepting: () => Promise.resolve(closeListenSocket(socket)),
      closeConnections() {},
    };
  }
  const routes = guardRoutes(
    sockets === null ? undefined : { socket: sockets.path, poll: sockets.pollPath },
  );
  let guard: GuardThread | null = null;
  sockets?.mount(app, routes.prefix, (batch) => guard?.post(batch));
  app.get(`${routes.prefix}/:status/:what`, (res, req) => {
    const ctx = new RequestContext(req, 2, 'GET');
    res.onAborted(() => ctx.markAborted());
    const what = ctx.pathParams[1] ?? '';
    const status = ctx.pathParams[0];
    const err =
      status === '501'
        ? new JsonableError(`Method not implemented: ${what.slice(0, 32)}`, {
            code: 'BAD_REQUEST',
            status: 501,
            headers: CLOSE,
          })
        : status === '431'
          ? new JsonableError('Request header fields too large', {
              code: 'BAD_REQUEST',
              status: 431,
              headers: CLOSE,
            })
          : new JsonableError('Malformed request header', {
              code: 'BAD_REQUEST',
              status: 400,
              headers: CLOSE,
            });
    sendError(res, ctx, err, true);
  });
  // What killed servers left in the temporary directory, in the background.
  void removeStaleSocketDirs().catch(() => undefined);
  const { dir, file } = privateSocketPath();
  let socket;
  try {
    socket = await listenUnix(app, file);
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  try {
    const limit = openFilesLimit();
    const max = maxConnections ?? Number.MAX_SAFE_INTEGER;
    const budget = descriptorBudget(limit);
    if (limit !== null)
      log.info(
        {
          maxConnections: Math.min(max, relayCapacity(limit)),
          maxEventSockets: Math.min(max, budget),
          openFilesLimit: limit,
        },
        'HTTP guard: at most %d connections (three descriptors each; an event WebSocket or a held long-poll one; raise the open-files limit for more)',
        Math.min(max, relayCapacity(limit)),
      );
    guard = await GuardThread.start(
      {
        upstream: file,
        routes,
        host,
        port,
        maxConnections: max,
        maxDescriptors: budget,
        sockets:
          sockets === null
            ? null
            : { maxBackpressure: sockets.maxBackpressure, idlePeriodMs: sockets.idlePeriodMs },
        polls,
      },
      sockets,
    );
  } catch (err) {
    closeListenSocket(socket);
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const started = guard;
  return {
    port: started.port,
    // uWS's own socket stays open until the end: only the guard's open relays reach it, and a
    // relay still connecting must not be refused.
    stopAccepting: () => started.close(),
    closeConnections() {
      closeListenSocket(socket);
      started.endAll();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The guard's relay, run in a thread of its own (./guard-thread.ts). */
class GuardThread {
  private closed: (() => void) | null = null;

  private constructor(
    private readonly worker: Worker,
    readonly port: number,
    sockets: GuardSocketHost | null,
  ) {
    worker.on('message', (r: GuardThreadReport) => {
      if (r.kind === 'sockets') sockets?.receive(r);
      else if (r.kind === 'closed') this.closed?.();
      else if (r.kind === 'refused')
        log.warn(
          { refused: r.count },
          'HTTP guard: connections refused (503): the connection limit is reached',
        );
    });
    worker.on('exit', () => this.closed?.());
  }

  static start(data: GuardThreadData, sockets: GuardSocketHost | null): Promise<GuardThread> {
    const worker = new Worker(new URL('./guard-thread.js', import.meta.url), {
      workerData: data,
      // The relay needs none of the main thread's flags or NODE_OPTIONS (loaders, instrumentation:
      // under the test runner they cost the thread half a second to start).
      execArgv: [],
      env: {},
    });
    return new Promise((resolve, reject) => {
      const failed = (err: Error) => {
        worker.off('message', first);
        reject(err);
      };
      const first = (r: GuardThreadReport) => {
        worker.off('error', failed);
        if (r.kind === 'listening') {
          // A failure of the relay later is a failure of the server: nothing accepts any more.
          worker.on('error', (err) => {
            throw new FatalError('the HTTP guard thread failed', { cause: err });
          });
          resolve(new GuardThread(worker, r.port, sockets));
        } else if (r.kind === 'failed')
          reject(Object.assign(new Error(r.message), { code: r.code }));
      };
      worker.once('message', first);
      worker.once('error', failed);
    });
  }

  /** A batch of frames for the sockets the guard holds. */
  post(batch: SocketBatch): void {
    this.worker.postMessage(batch, batchTransfer(batch));
  }

  /** Stops accepting; resolves once what arrived reached uWS and uWS has had a turn to read it. */
  async close(): Promise<void> {
    const done = new Promise<void>((resolve) => (this.closed = resolve));
    this.worker.postMessage('close');
    await done;
    // Two turns of this loop: uWS accepts and reads in a poll phase between them.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  /** Ends every connection (the thread exits once they are gone, within about a second). */
  endAll(): void {
    this.worker.postMessage('end');
    this.worker.unref();
  }
}
