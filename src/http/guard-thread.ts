/**
 * The HTTP guard's own thread (see ./guard.ts and ./listener.ts): the relay's reads, scans and
 * writes run here, so the main thread (uWS, the realm actors, event delivery) pays only for
 * reading each request from a Unix socket instead of TCP.
 *
 * Messages from the main thread: 'close' (stop accepting; answered 'closed' once what arrived
 * reached uWS), 'end' (end every connection; the thread exits when they are gone), and batches of
 * frames for the event WebSockets the guard holds (./guard-sockets.ts; their frames come back
 * the same way) and answers to the long-polls it holds (./guard-polls.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { HttpGuard, type GuardRoutes } from './guard.js';
import { GuardPolls } from './guard-polls.js';
import { GuardSockets } from './guard-sockets.js';
import { batchTransfer, SOCKET_OP, type SocketBatch } from './socket-batch.js';

export type GuardThreadData = {
  upstream: string;
  routes: GuardRoutes;
  host: string;
  port: number;
  /** Connections held at once (HttpGuard.maxRelays). */
  maxConnections: number;
  /** Descriptors they may hold (HttpGuard.maxDescriptors). */
  maxDescriptors: number;
  /**
   * The guard holds the event WebSockets (routes.socket): their backpressure bound, and how often
   * quiet ones are pinged (GuardSockets' default when undefined; config.httpGuardIdleMs).
   */
  sockets: { maxBackpressure: number; idlePeriodMs: number | undefined } | null;
  /** When it holds long-polls (routes.poll; config.httpGuardPolls). */
  polls: 'auto' | 'always';
};
export type GuardThreadReport =
  | { kind: 'listening'; port: number }
  /** Connections answered 503 in the last interval (sent only when there were any). */
  | { kind: 'refused'; count: number }
  | { kind: 'failed'; message: string; code?: string }
  | { kind: 'closed' }
  /** Frames received, sockets opened and closed (./guard-sockets.ts). */
  | SocketBatch;

const port = parentPort!;
const data = workerData as GuardThreadData;
const report = (r: GuardThreadReport) => port.postMessage(r);
const sockets =
  data.sockets === null
    ? null
    : new GuardSockets(
        (b) => port.postMessage(b, batchTransfer(b)),
        data.sockets.maxBackpressure,
        data.sockets.idlePeriodMs,
      );
// The long-polls are held with the sockets (their answers come in the same batches).
const polls =
  sockets === null || data.routes.poll === undefined
    ? null
    : new GuardPolls(
        (id) => sockets.report(id, SOCKET_OP.POLL_CLOSED),
        (client, first) => guard.relay(client, first),
      );
if (sockets !== null && polls !== null) {
  sockets.onPollAnswer = (id, answer, close) => polls.answer(id, answer, close);
  polls.onAsk = (id, fields) =>
    sockets.report(id, SOCKET_OP.POLL_ASK, Buffer.from(JSON.stringify(fields)));
}
const guard = new HttpGuard(
  data.upstream,
  data.routes,
  data.maxConnections,
  sockets,
  data.maxDescriptors,
  polls,
  data.polls,
);
/** How often refused connections are reported (the main thread logs them). */
const REFUSED_REPORT_MS = 10_000;
const refusedReports = setInterval(() => {
  const count = guard.takeRefused();
  if (count > 0) report({ kind: 'refused', count });
}, REFUSED_REPORT_MS);
refusedReports.unref();

guard.listen(data.host, data.port).then(
  (bound) => report({ kind: 'listening', port: bound }),
  (err: NodeJS.ErrnoException) => {
    report({ kind: 'failed', message: err.message, code: err.code });
    clearInterval(refusedReports);
    port.close();
  },
);

port.on('message', (m: 'close' | 'end' | SocketBatch) => {
  if (typeof m === 'object') sockets?.apply(m);
  else if (m === 'close') void guard.close().then(() => report({ kind: 'closed' }));
  else {
    void guard.close();
    guard.endAll();
    // Nothing keeps the thread alive once its connections are gone (endAll bounds them).
    clearInterval(refusedReports);
    port.close();
  }
});
