/**
 * What the main thread and the HTTP guard's thread tell each other about the WebSockets and the
 * long-polls the guard holds (src/http/guard-sockets.ts, ./guard-polls.ts): frames to send, frames
 * received, opens and closes, poll answers. One batch
 * per turn of either loop, in one message: a table of operations and one byte area their payloads
 * point into, transferred rather than copied. A payload sent to many sockets (one event fanned
 * out) is stored once.
 */

/** What an operation does (the second column of the table). */
export const SOCKET_OP = {
  /** A text frame (main → guard: send it; guard → main: received). */
  TEXT: 0,
  /** A binary frame. */
  BINARY: 1,
  /** Main → guard: close the socket (code, reason as payload). */
  CLOSE: 2,
  /** Guard → main: the handshake is done, the socket is open. */
  OPEN: 3,
  /** Guard → main: the socket is gone (or its handshake failed). */
  CLOSED: 4,
  /**
   * Main → guard: the whole HTTP answer to a long-poll the guard holds (./guard-polls.ts), by
   * poll id; code 1: end the connection after it.
   */
  POLL_ANSWER: 5,
  /** Guard → main: the client of a held poll is gone before its answer. */
  POLL_CLOSED: 6,
  /**
   * Guard → main: a long-poll to serve, asked on no connection to uWS (src/http/guard-polls.ts
   * `ask`): its id is the guard's (negative), its payload the request's fields (PollFields, JSON).
   * Its answer comes back as a POLL_ANSWER; POLL_CLOSED if its client leaves first.
   */
  POLL_ASK: 7,
} as const;
export type SocketOp = (typeof SOCKET_OP)[keyof typeof SOCKET_OP];

/** Columns per operation: socket id, op, close code, payload offset, payload length. */
const WIDTH = 5;

export type SocketBatch = { kind: 'sockets'; ops: Int32Array; bytes: Uint8Array };

export class SocketBatchBuilder {
  private ops: number[] = [];
  private parts: (string | Uint8Array)[] = [];
  private size = 0;
  /** Payloads already stored in this batch → their offset (a fanned-out frame is stored once). */
  private stored = new Map<string | Uint8Array, number>();

  get empty(): boolean {
    return this.ops.length === 0;
  }

  /** Operations in the batch so far. */
  get count(): number {
    return this.ops.length / WIDTH;
  }

  add(id: number, op: SocketOp, payload: string | Uint8Array | null = null, code = 0): void {
    let offset = 0;
    let length = 0;
    if (payload !== null) {
      length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength;
      const known = this.stored.get(payload);
      if (known !== undefined) offset = known;
      else {
        offset = this.size;
        this.stored.set(payload, offset);
        this.parts.push(payload);
        this.size += length;
      }
    }
    this.ops.push(id, op, code, offset, length);
  }

  /** The batch so far (its byte area is to be transferred), and a fresh start. */
  take(): SocketBatch {
    const bytes = Buffer.allocUnsafeSlow(this.size);
    let at = 0;
    for (const p of this.parts) {
      if (typeof p === 'string') at += bytes.write(p, at, 'utf8');
      else {
        bytes.set(p, at);
        at += p.byteLength;
      }
    }
    const batch: SocketBatch = {
      kind: 'sockets',
      ops: Int32Array.from(this.ops),
      bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    };
    this.ops = [];
    this.parts = [];
    this.size = 0;
    this.stored = new Map();
    return batch;
  }
}

/** The transfer list for posting a batch (its byte area changes hands, it is not copied). */
export function batchTransfer(batch: SocketBatch): ArrayBuffer[] {
  return [batch.ops.buffer as ArrayBuffer, batch.bytes.buffer as ArrayBuffer];
}

/** Calls `fn` for each operation in order; `payload` is a view into the batch's byte area. */
export function readBatch(
  batch: SocketBatch,
  fn: (id: number, op: SocketOp, payload: Uint8Array, code: number) => void,
): void {
  const { ops, bytes } = batch;
  for (let i = 0; i + WIDTH <= ops.length; i += WIDTH) {
    const offset = ops[i + 3]!;
    fn(ops[i]!, ops[i + 1]! as SocketOp, bytes.subarray(offset, offset + ops[i + 4]!), ops[i + 2]!);
  }
}
