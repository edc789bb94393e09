/**
 * Holding one user's event queue in a bench client process: register it, then read it by
 * long-polling on a keep-alive connection or over the WebSocket push channel (acknowledging each
 * frame). Each events body goes to `onBody(body, arrivedAt)`, which answers the body's last event
 * id (-1 if none) so the receiver can move on.
 */
import WebSocket from 'ws';
import { basicAuth, HttpConn, httpRequest, now } from './http-conn.js';

export type QueueUser = { email: string; api_key: string };
export type ReceiverOpts = {
  port: number;
  /** The register request's form body. */
  register: string;
  onBody: (body: string, arrived: number) => number;
  onError: (err: unknown) => void;
  /** Whether the client is shutting down (stops polling, silences errors). */
  stopping: () => boolean;
  /** Where the receiver leaves the function that closes its connection. */
  closers: (() => void)[];
};

async function registerQueue(conn: HttpConn, u: QueueUser, form: string) {
  const res = await conn.request(httpRequest('POST', '/api/v1/register', u, form));
  if (res.status !== 200) throw new Error(`register ${res.status}: ${res.body.slice(0, 200)}`);
  // Only the queue is needed: a large realm's snapshot is megabytes, and parsing it would make
  // the bench's clients, not the server, the limit. The two fields lead the response.
  const head = /"queue_id":("[^"]*"),"last_event_id":(-?\d+)/.exec(res.body.slice(0, 400));
  if (!head) throw new Error(`register: no queue in ${res.body.slice(0, 200)}`);
  return { queue_id: JSON.parse(head[1]!) as string, last_event_id: Number(head[2]) };
}

/** Registers, then long-polls until stopping (in the background; failures go to onError). */
export async function pollReceiver(u: QueueUser, o: ReceiverOpts): Promise<void> {
  const conn = new HttpConn(o.port, o.onError);
  o.closers.push(() => conn.close());
  const reg = await registerQueue(conn, u, o.register);
  let lastId = reg.last_event_id;
  const loop = async () => {
    while (!o.stopping()) {
      const res = await conn.request(
        httpRequest('GET', `/api/v1/events?queue_id=${reg.queue_id}&last_event_id=${lastId}`, u),
      );
      if (o.stopping()) return;
      if (res.status !== 200) throw new Error(`poll ${res.status}: ${res.body.slice(0, 200)}`);
      const id = o.onBody(res.body, res.at);
      if (id > lastId) lastId = id;
    }
  };
  loop().catch(o.onError);
}

/** Registers, then attaches a WebSocket that receives and acknowledges every frame. */
export async function socketReceiver(u: QueueUser, o: ReceiverOpts): Promise<void> {
  const conn = new HttpConn(o.port, o.onError);
  const reg = await registerQueue(conn, u, o.register);
  conn.close();
  const ws = new WebSocket(
    `ws://127.0.0.1:${o.port}/api/v1/events/socket?queue_id=${reg.queue_id}&last_event_id=${reg.last_event_id}`,
    { headers: { authorization: basicAuth(u) }, perMessageDeflate: false },
  );
  o.closers.push(() => ws.terminate());
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.on('message', (data: Buffer) => {
    const id = o.onBody(data.toString('utf8'), now());
    if (id >= 0) ws.send(`{"last_event_id":${id}}`);
  });
}
