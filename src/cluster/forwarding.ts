/**
 * Forwarding between cluster nodes: a write that arrives at a node not owning its realm is sent
 * to the owner (NATS request/reply on `confab.cmd.<realm>`), which runs it in its realm actor and
 * answers with the result and the log position to wait for (read-your-writes), or the refusal,
 * which the asking node throws as the owner threw it.
 */
import type { NatsConnection } from 'nats';
import { JsonableError, type ErrorCode } from '../lib/errors.js';
import { pack, unpack } from '../lib/pack.js';
import { NotOwnerError, sleep } from './jetstream.js';

export const FORWARD_DEADLINE_MS = 10_000;

/** The owner's answer to a forwarded command. */
export type WireReply =
  | { ok: true; data: unknown; seq: number }
  | {
      ok: false;
      error: {
        msg: string;
        code?: ErrorCode;
        status?: number;
        extra?: Record<string, unknown>;
        headers?: Record<string, string>;
      };
    };

export function toWireError(err: unknown): Extract<WireReply, { ok: false }>['error'] {
  if (err instanceof JsonableError)
    return {
      msg: err.message,
      code: err.code,
      status: err.httpStatus,
      extra: { ...err.extra },
      headers: { ...err.headers },
    };
  console.error('forwarded command failed', err);
  return { msg: 'Internal server error', code: 'BAD_REQUEST', status: 500 };
}

/** A refusal the owner sent back, thrown here as it was thrown there. */
export function fromWireError(error: Extract<WireReply, { ok: false }>['error']): JsonableError {
  const { msg, code, status, extra, headers } = error;
  return new JsonableError(msg, {
    ...(code ? { code } : {}),
    ...(status ? { status } : {}),
    ...(extra ? { extra } : {}),
    ...(headers ? { headers } : {}),
  });
}

/**
 * Asks the realm's owner (on its command subject) to run a command (`body`, packed); its reply, or null when no node owns
 * the realm right now (failover: ask again). Past `deadline`, or on a timeout (the outcome is
 * then unknown), the asker is told the realm is moving.
 */
export async function askOwner(
  nc: NatsConnection,
  subject: string,
  body: Uint8Array,
  deadline: number,
): Promise<WireReply | null> {
  let data: Uint8Array;
  try {
    data = (await nc.request(subject, body, { timeout: 8000 })).data;
  } catch (err) {
    // No owner right now (failover): wait for one. A timeout leaves the outcome unknown.
    const noOwner = (err as { code?: string }).code === '503';
    if (!noOwner || Date.now() > deadline) throw new NotOwnerError();
    await sleep(100);
    return null;
  }
  return unpack<WireReply>(data);
}

/** The owner's side: runs a forwarded command and answers with its result or its refusal. */
export async function answerForwarded(
  data: Uint8Array,
  run: (type: string, payload: unknown) => Promise<{ data: unknown; seq: number }>,
  respond: (d: Uint8Array) => void,
): Promise<void> {
  let reply: WireReply;
  try {
    const { type, payload } = unpack<{ type: string; payload: unknown }>(data);
    reply = { ok: true, ...(await run(type, payload)) };
  } catch (err) {
    reply = { ok: false, error: toWireError(err) };
  }
  try {
    respond(pack(reply));
  } catch (err) {
    console.error('answering a forwarded command failed', err);
  }
}
