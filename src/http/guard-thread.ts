/**
 * The HTTP guard's own thread (see ./guard.ts and ./listener.ts): the relay's reads, scans and
 * writes run here, so the main thread (uWS, the realm actors, event delivery) pays only for
 * reading each request from a Unix socket instead of TCP.
 *
 * Messages from the main thread: 'close' (stop accepting; answered 'closed' once what arrived
 * reached uWS) and 'end' (end every connection; the thread exits when they are gone).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { HttpGuard, type GuardRoutes } from './guard.js';

export type GuardThreadData = { upstream: string; routes: GuardRoutes; host: string; port: number };
export type GuardThreadReport =
  | { kind: 'listening'; port: number }
  | { kind: 'failed'; message: string; code?: string }
  | { kind: 'closed' };

const port = parentPort!;
const data = workerData as GuardThreadData;
const report = (r: GuardThreadReport) => port.postMessage(r);
const guard = new HttpGuard(data.upstream, data.routes);

guard.listen(data.host, data.port).then(
  (bound) => report({ kind: 'listening', port: bound }),
  (err: NodeJS.ErrnoException) => {
    report({ kind: 'failed', message: err.message, code: err.code });
    port.close();
  },
);

port.on('message', (m: 'close' | 'end') => {
  if (m === 'close') void guard.close().then(() => report({ kind: 'closed' }));
  else {
    void guard.close();
    guard.endAll();
    // Nothing keeps the thread alive once its connections are gone (endAll bounds them).
    port.close();
  }
});
