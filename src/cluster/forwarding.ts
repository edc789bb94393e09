/**
 * Forwarding between cluster nodes: a write that arrives at a node not owning its realm is sent
 * to the owner (NATS request/reply on `confab.cmd.<realm>`), which runs it in its realm actor and
 * answers with the result and the log position to wait for (read-your-writes), or the refusal,
 * which the asking node throws as the owner threw it. An operation on an event queue that another
 * node holds (DELETE /events whose queue id came in the body, which the proxy cannot route) is
 * sent to that node (`confab.queue.<node>`) and answered as it answers.
 *
 * A forwarded command carries an id (random to the forwarding process, and a counter), so that it
 * can be sent again without being run twice: the owner keeps what each id it received came to
 * (FORWARD_KEEP_MS) and answers a repeat with that. A command nobody said it received is sent
 * again every `againMs` (a NATS server frozen while the owner was connected to it keeps routing
 * some of the realm's commands to the owner's old subscription there, one member of the queue
 * group at random: a repeat reaches the live one). A received command whose answer is awaited
 * when the forwarding node's connection moves to another server (its server froze, and the
 * owner's answer may have gone to the old subscription there) is asked again at once, marked as a
 * repeat: the owner answers what it came to, or that it does not know it (another owner now: the
 * outcome is unknown, 503), never running it anew.
 */
import crypto from 'node:crypto';
import { trace } from './trace.js';
import { createInbox, Events, type Msg, type NatsConnection, type Subscription } from 'nats';
import type { EventQueues } from '../delivery/publisher.js';
import { JsonableError, type ErrorCode } from '../lib/errors.js';
import { pack, unpack } from '../lib/pack.js';
import { kick, NotOwnerError, type Reasks } from './jetstream.js';
import type { ClusterLink } from './link.js';
import { DEFAULT_READ_BARRIER_MS } from './read-barrier.js';

export const FORWARD_DEADLINE_MS = 10_000;

/** How long a forwarded command waits for its answer once its owner has said it received it. */
export const FORWARD_ANSWER_MS = 8000;

/**
 * How long a forwarding node waits for the owner to say it received a command (CLUSTER_FORWARD_ACK_MS)
 * before it answers 503 with Retry-After: no owner got it. A NATS server frozen while the owner was
 * connected to it keeps the owner's old subscription, and the servers left still route some of the
 * realm's commands there (to one member of the queue group, chosen at random) until it thaws or
 * its routes time out (nats-server issue 4014 is the same trap): such a command is never received
 * (the owner's connection to it is gone), so it is sent again meanwhile (DEFAULT_FORWARD_AGAIN_MS),
 * and a repeat reaches the live subscription. The wait starts again when this node's own
 * connection moves to another server.
 */
export const DEFAULT_FORWARD_ACK_MS = 1000;

/**
 * How often a forwarded command nobody said it received is sent again (its id the same: an owner
 * of this version runs it once), until the wait to be received is over: an owner says "received"
 * within milliseconds. An owner of a version before ids would run a repeat again (a rolling
 * upgrade: its commands sent again only when not said received within this time).
 */
export const DEFAULT_FORWARD_AGAIN_MS = 100;

/**
 * How long a received command's answer is awaited before the forwarding node checks its own
 * connection (a ping: link.checkConnection, at most one every 2 s): a server frozen under it holds
 * the owner's answer, and the repeat sent once the connection has moved to another server gets it.
 */
export const ANSWER_CHECK_MS = 300;

/** How long an owner keeps what a forwarded command came to, for a repeat of it. */
export const FORWARD_KEEP_MS = 30_000;

/**
 * At most this many forwarded commands' outcomes are kept (the oldest go first): those this node
 * received, and apart from them those it learned from the log (ForwardOutcomes).
 */
export const FORWARD_KEEP_MOST = 20_000;

/**
 * The owner's first answer to a forwarded command that asks for it: received (then its result).
 * `keeps`: this owner keeps the command's outcome by its id (a repeat is answered with it).
 */
const RECEIVED = pack({ received: true, keeps: true });

/** The owner's answer to a repeat of a command it does not know (never received, or forgotten). */
const UNKNOWN = pack({ unknown: true });

/** A forwarded command as it travels. `again`: a repeat of one received, not to be run anew. */
type Forwarded = { type: string; payload: unknown; ack?: boolean; id?: string; again?: boolean };

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

/** How a forwarded command is asked (askOwner); each has a default. */
export type AskOptions = {
  /** How long it waits to be said received before it is answered 503 (DEFAULT_FORWARD_ACK_MS). */
  ackMs?: number;
  /** How often it is sent again meanwhile (DEFAULT_FORWARD_AGAIN_MS). */
  againMs?: number;
  /** Checks this node's own connection (link.checkConnection): a ping, another server if none. */
  check?: () => void;
  /** Kicked (the Forwarder watches the connection) when it has moved to another server. */
  moved?: Reasks;
};

/**
 * Asks the realm's owner (on its command subject) to run a command (`cmd`, with its id, asking to
 * be told it was received): its reply, or null when no node subscribes to the realm's commands
 * right now (failover: ask again, until `deadline`). The owner says at once that it received the
 * command, then answers with the result. Until it is said received, the command is sent again
 * every `againMs` (the same id: run once), and this node's connection is checked; one nobody said
 * it received within `ackMs` (lost on a frozen server's old subscription every time, or its owner
 * frozen) is answered 503 with Retry-After (NotOwnerError) without waiting the answer's time. Once
 * received, the answer is awaited for FORWARD_ANSWER_MS (503 after: its outcome is then unknown,
 * as with any lost connection); this node's connection is checked after ANSWER_CHECK_MS, and when
 * it moves to another server (`moved`), the command is asked again as a repeat, which the owner
 * answers with what it came to — or, not knowing it (another owner now), with "unknown": 503. An
 * owner of an earlier version answers once, without saying it received it: its answer within
 * `ackMs` is taken as it comes. "No responders" (nobody serves the realm's commands) gives null
 * only while every send got it; after another send that may have reached an owner now gone, the
 * command is not sent afresh (a new owner would run it again): 503 at `ackMs` unless said received.
 * A repeat of a received command answered so is 503 (its outcome unknown), as "unknown" is.
 */
export function askOwner(
  nc: NatsConnection,
  subject: string,
  cmd: Forwarded & { id: string },
  deadline: number,
  opts: AskOptions = {},
): Promise<WireReply | null> {
  const ackMs = opts.ackMs ?? DEFAULT_FORWARD_ACK_MS;
  const againMs = opts.againMs ?? DEFAULT_FORWARD_AGAIN_MS;
  const first = pack({ ...cmd, ack: true });
  return new Promise<WireReply | null>((resolve, reject) => {
    const inbox = createInbox();
    let timer: NodeJS.Timeout | undefined;
    let check: NodeJS.Timeout | undefined;
    let received = false;
    let keeps = false;
    let done = false;
    // Sends so far, and "no responders" answers to them. Such an answer tells about one send only:
    // an earlier one may have reached an owner that ran it and is gone now (it gave the realm up,
    // its word lost on the way), and a new owner sent it afresh would not know its id and run it
    // again. So the command is asked afresh (null: the caller sends it again) only while every
    // send was answered so, and is no longer sent afresh once one may not have been.
    let sends = 0;
    let nobody = 0;
    let fresh = true;
    const send = (body: Uint8Array) => {
      sends++;
      nc.publish(subject, body, { reply: inbox });
    };
    const repeat = () => {
      if (done) return;
      try {
        if (!received && fresh) {
          // What was sent through the server left may never have left it: the wait to be said
          // received starts again, on the server this node is connected to now.
          trace(`forward to ${subject}: connection moved: sending again (${cmd.id})`);
          clearTimeout(timer);
          timer = setTimeout(() => unanswered('nobody said it received it'), ackMs);
          send(first);
        } else if (keeps) {
          // Its answer may have gone to this node's old subscription on the server it left.
          trace(`forward to ${subject}: connection moved: asking again (${cmd.id})`);
          send(pack({ ...cmd, ack: true, again: true }));
        }
      } catch {
        // the connection is closing: unanswered when its time runs out (503)
      }
    };
    const finish = (f: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearInterval(again);
      clearTimeout(check);
      opts.moved?.delete(repeat);
      sub.unsubscribe();
      f();
    };
    const unanswered = (why: string) =>
      finish(() => {
        trace(`forward to ${subject}: ${why}`);
        reject(new NotOwnerError());
      });
    const sub = nc.subscribe(inbox, {
      callback: (err, msg: Msg) => {
        if (err) return unanswered(String(err));
        if (msg.data.length === 0 && msg.headers?.code === 503) {
          // Received, then no owner when asked again: what it came to is unknown (503).
          if (received) return unanswered('asked again: no owner now, outcome unknown');
          if (++nobody < sends) {
            // An earlier send may be with an owner now gone: not sent afresh any more; its word
            // is awaited until `ackMs` (503 then), or this send's fellows' "no responders".
            fresh = false;
            clearInterval(again);
            return;
          }
          // No owner right now (failover), nobody got it: wait for one.
          return finish(() => {
            trace(`forward to ${subject}: no responders`);
            if (Date.now() > deadline) reject(new NotOwnerError());
            else setTimeout(() => resolve(null), 100);
          });
        }
        let reply: WireReply | { received: true; keeps?: boolean } | { unknown: true };
        try {
          reply = unpack<typeof reply>(msg.data);
        } catch (e) {
          return finish(() => reject(e instanceof Error ? e : new Error(String(e))));
        }
        if ('unknown' in reply) return unanswered('asked again: the owner does not know it');
        if ('received' in reply) {
          if (received) return; // a repeat's
          // Received: its result may take the owner a while (an append during an election).
          received = true;
          keeps = reply.keeps === true;
          clearInterval(again);
          clearTimeout(timer);
          timer = setTimeout(() => unanswered('received, no answer'), FORWARD_ANSWER_MS);
          check = setTimeout(() => opts.check?.(), ANSWER_CHECK_MS);
          return;
        }
        finish(() => resolve(reply));
      },
    });
    timer = setTimeout(() => unanswered('nobody said it received it'), ackMs);
    opts.moved?.add(repeat);
    const again = setInterval(() => {
      if (!fresh) return;
      trace(`forward to ${subject}: not said received: sending again (${cmd.id})`);
      opts.check?.();
      try {
        send(first);
      } catch {
        // the connection is closing: unanswered at `ackMs`
      }
    }, againMs);
    try {
      send(first);
    } catch (e) {
      finish(() => reject(e instanceof Error ? e : new Error(String(e))));
    }
  });
}

/**
 * What an owner's forwarded commands came to (or will: under way), by id, kept FORWARD_KEEP_MS
 * from their receipt (at most FORWARD_KEEP_MOST), so that a repeat is answered with it and never
 * run twice. A forwarding node asks again only within FORWARD_ANSWER_MS of the receipt.
 *
 * Every node also learns here, as it applies the log, the forwarded commands that ran on another
 * owner (`logged`: a batch's entry names them, with their results), so that once it owns the realm
 * it answers a command sent again to it (its first owner's word lost, the realm handed over) with
 * what it came to rather than run it a second time. The owner that ran a command appended it
 * before a takeover's marker could land, and a new owner serves the realm only once it has applied
 * its marker, so it has learned every such command by then.
 */
export class ForwardOutcomes {
  /** The commands this node received, by id: a repeat of one is answered with it. */
  private readonly outcomes = new Map<string, { reply: Promise<WireReply>; at: number }>();
  /**
   * The commands the log says ran on an owner, by id. Kept apart, with a bound of their own: every
   * node learns every forwarded write of the cluster here, and at a high rate of them they would
   * otherwise push this node's own received ones (under way too) out before a repeat comes.
   */
  private readonly learned = new Map<string, { reply: Promise<WireReply>; at: number }>();

  constructor(private readonly clock: () => number = Date.now) {}

  get(id: string): Promise<WireReply> | undefined {
    return this.outcomes.get(id)?.reply ?? this.learned.get(id)?.reply;
  }

  add(id: string, reply: Promise<WireReply>): void {
    keep(this.outcomes, id, reply, this.clock());
  }

  /** A forwarded command that ran, as the log says (its result, its entry's position). */
  logged(id: string, data: unknown, seq: number): void {
    if (this.outcomes.has(id) || this.learned.has(id)) return;
    keep(this.learned, id, Promise.resolve({ ok: true, data, seq }), this.clock());
  }
}

/** Keeps `reply` by `id` in `map`, first dropping what is past FORWARD_KEEP_MS or the bound. */
function keep(
  map: Map<string, { reply: Promise<WireReply>; at: number }>,
  id: string,
  reply: Promise<WireReply>,
  now: number,
): void {
  // Map order is insertion order: the oldest first.
  for (const [key, o] of map) {
    if (now - o.at < FORWARD_KEEP_MS && map.size < FORWARD_KEEP_MOST) break;
    map.delete(key);
  }
  map.set(id, { reply, at: now });
}

/**
 * The owner's side: runs a forwarded command and answers with its result or its refusal. With
 * `outcomes`, a command whose id it has seen is not run again: a repeat is told it was received
 * and answered with what the first came to; a repeat marked `again` of an id it does not know is
 * answered "unknown" (it was received elsewhere: another owner's, or forgotten).
 */
export async function answerForwarded(
  data: Uint8Array,
  run: (type: string, payload: unknown, id?: string) => Promise<{ data: unknown; seq: number }>,
  respond: (d: Uint8Array) => void,
  outcomes?: ForwardOutcomes,
): Promise<void> {
  const say = (d: Uint8Array) => {
    try {
      respond(d);
    } catch (err) {
      // the connection is closing: the forwarding node answers 503 (received by nobody)
      trace(`answering a forwarded command failed: ${String(err)}`);
    }
  };
  let cmd: Forwarded;
  try {
    cmd = unpack<Forwarded>(data);
  } catch (err) {
    say(pack({ ok: false, error: toWireError(err) } satisfies WireReply));
    return;
  }
  const { type, payload, ack, id, again } = cmd;
  const known = id !== undefined ? outcomes?.get(id) : undefined;
  if (again && outcomes && id !== undefined && known === undefined) {
    say(UNKNOWN);
    return;
  }
  // Said at once, so that the forwarding node knows its command is not lost (askOwner).
  if (ack) say(RECEIVED);
  let reply = known;
  if (reply === undefined) {
    reply = run(type, payload, id).then(
      (r): WireReply => ({ ok: true, ...r }),
      (err: unknown): WireReply => ({ ok: false, error: toWireError(err) }),
    );
    if (id !== undefined) outcomes?.add(id, reply);
  }
  const outcome = await reply;
  try {
    say(pack(outcome));
  } catch (err) {
    console.error('answering a forwarded command failed', err);
  }
}

/** An operation on an event queue held by another node (queue ids start with its node's name). */
export type QueueOp = { op: 'delete'; queueId: string; userId: number };

/** Its answer: done, or the refusal the queue's node made (as a single process would). */
export type QueueOpReply = { ok: true } | { ok: false; error: 'BAD_EVENT_QUEUE_ID' | 'NOT_YOURS' };

/** How long a queue operation waits for the queue's node. */
export const QUEUE_OP_TIMEOUT_MS = 5000;

export type ForwarderParts = {
  link: ClusterLink;
  queues: EventQueues;
  /** Whether this node acts as the realm's owner now. */
  owns: (realmId: number) => boolean;
  /**
   * Runs a command on this node's actor for the realm (this node owning it); `id`: a forwarded
   * command's, which its batch's log entry names (ForwardOutcomes.logged).
   */
  runHere: (realmId: number, type: string, payload: unknown, id?: string) => Promise<unknown>;
  /** The log position a forwarding node waits for after the command: the realm's last append. */
  position: (realmId: number) => number;
  /** Resolves once this node has applied the log up to `seq`. */
  waitApplied: (seq: number) => Promise<void>;
  /**
   * How long a forwarded command's answer waits for this node to apply what it wrote
   * (`forward`): the node gives its read barrier's budget; DEFAULT_READ_BARRIER_MS.
   */
  appliedWaitMs?: number;
  /**
   * Calls its argument once this node's copy is seen not catching up (LogApplier.onStuck), at once
   * if it is now: the wait for a forwarded write's entry ends then too. Returns what stops
   * listening.
   */
  stuck?: (f: () => void) => () => void;
  /** How long a forwarded command waits to be received (askOwner); DEFAULT_FORWARD_ACK_MS. */
  ackMs?: number;
  /** How often one not said received is sent again (askOwner); DEFAULT_FORWARD_AGAIN_MS. */
  againMs?: number;
};

/**
 * The forwarding of a cluster node: writes to realms it does not own go to their owner
 * (`forward`), and, as an owner, it runs those forwarded to it (`serve`); operations on an event
 * queue held by another node go to that node (`queueOp`), and it runs those sent to it.
 */
export class Forwarder {
  private readonly serving = new Map<number, Subscription>();
  private queueService: Subscription | null = null;
  /** What the commands forwarded to this node came to, by id (a repeat is not run again). */
  private readonly outcomes = new ForwardOutcomes();
  /** Forwarded commands awaiting their owner: sent or asked again when `nc` reconnects. */
  private readonly moved: Reasks = new Set();
  /** This forwarder's commands' ids: `<random>.<counter>`, unique to this process. */
  private readonly idPrefix = crypto.randomBytes(6).toString('hex');
  private sent = 0;

  constructor(private readonly parts: ForwarderParts) {
    const { nc } = parts.link;
    void (async () => {
      for await (const s of nc.status()) if (s.type === Events.Reconnect) kick(this.moved);
    })().catch(() => undefined);
  }

  /**
   * Runs a command on the realm's owner: here when this node is it, otherwise over NATS (asked
   * again while no node owns the realm, for up to FORWARD_DEADLINE_MS), answered once this node
   * has applied what the command wrote (read-your-writes), or once it has waited for that as long
   * as a read barrier would (`appliedWaitMs`) or its copy is seen not catching up (`stuck`).
   *
   * Past that wait the owner's answer is given all the same: the write happened (the log holds it),
   * so a 503 would make the client ask again for something done, which a send with its
   * `local_id` survives (stored once) but other writes do not (a reaction added twice is refused,
   * an edit or a subscription made again). Read-your-writes still holds on this node: its next
   * request passes the read barrier, which waits for the log's position (this write's or later)
   * or answers 503; the write's events reach this node's queues when it applies the entry.
   */
  async forward(realmId: number, type: string, payload: unknown): Promise<unknown> {
    const { link, owns, runHere, ackMs, againMs } = this.parts;
    const deadline = Date.now() + FORWARD_DEADLINE_MS;
    // One id for every time it is sent: an owner runs it once.
    const cmd = { type, payload, id: `${this.idPrefix}.${++this.sent}` };
    const ask: AskOptions = {
      ...(ackMs !== undefined ? { ackMs } : {}),
      ...(againMs !== undefined ? { againMs } : {}),
      check: () => link.checkConnection?.(),
      moved: this.moved,
    };
    for (;;) {
      if (owns(realmId)) return runHere(realmId, type, payload);
      const reply = await askOwner(link.nc, `${link.names.cmd}.${realmId}`, cmd, deadline, ask);
      if (!reply) continue;
      if (!reply.ok) {
        trace(`forward of realm ${realmId}: refused: ${reply.error.msg}`);
        throw fromWireError(reply.error);
      }
      await this.appliedWithin(realmId, reply.seq);
      return reply.data;
    }
  }

  /**
   * Waits until this node has applied `seq`, for `appliedWaitMs` at most, or until its copy is
   * seen not catching up (`forward`).
   */
  private async appliedWithin(realmId: number, seq: number): Promise<void> {
    const { waitApplied, stuck } = this.parts;
    const ms = this.parts.appliedWaitMs ?? DEFAULT_READ_BARRIER_MS;
    let timer: NodeJS.Timeout | undefined;
    let unlisten: (() => void) | undefined;
    const late = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`not within ${ms} ms`), ms);
      unlisten = stuck?.(() => resolve('this copy is not catching up'));
    });
    const why = await Promise.race([waitApplied(seq).then(() => null), late]);
    clearTimeout(timer);
    unlisten?.();
    if (why !== null)
      trace(`forward of realm ${realmId}: ${seq} not applied here (${why}): answered`);
  }

  /**
   * The log holds, at `seq`, a batch that ran these forwarded commands (by id, with their
   * results): a repeat of one sent to this node is answered with it (ForwardOutcomes.logged).
   */
  ranInLog(seq: number, ran: readonly [string, unknown][]): void {
    for (const [id, data] of ran) this.outcomes.logged(id, data, seq);
  }

  /** Answers the realm's forwarded commands (this node now owns it). */
  serve(realmId: number): void {
    if (this.serving.has(realmId)) return;
    const { link, owns, runHere, position } = this.parts;
    const run = async (type: string, payload: unknown, id?: string) => {
      if (!owns(realmId)) throw new NotOwnerError();
      const data = await runHere(realmId, type, payload, id);
      return { data, seq: position(realmId) };
    };
    this.serving.set(
      realmId,
      link.nc.subscribe(`${link.names.cmd}.${realmId}`, {
        queue: 'owner',
        callback: (err, msg) => {
          if (err) return;
          void answerForwarded(msg.data, run, (d) => msg.respond(d), this.outcomes);
        },
      }),
    );
  }

  /** Stops answering the realm's forwarded commands. */
  unserve(realmId: number): void {
    this.serving.get(realmId)?.unsubscribe();
    this.serving.delete(realmId);
  }

  /** Answers operations on this node's event queues sent by other nodes. */
  serveQueues(): void {
    const { link, queues } = this.parts;
    this.queueService = link.nc.subscribe(`${link.names.queues}.${link.node}`, {
      callback: (err, msg) => {
        if (err) return;
        let reply: QueueOpReply;
        try {
          const op = unpack<QueueOp>(msg.data);
          const rt = queues.get(op.queueId);
          if (!rt) reply = { ok: false, error: 'BAD_EVENT_QUEUE_ID' };
          else if (rt.userId !== op.userId) reply = { ok: false, error: 'NOT_YOURS' };
          else {
            queues.remove(rt);
            reply = { ok: true };
          }
        } catch {
          reply = { ok: false, error: 'BAD_EVENT_QUEUE_ID' };
        }
        try {
          msg.respond(pack(reply));
        } catch (e) {
          console.error('answering a queue operation failed', e);
        }
      },
    });
  }

  /**
   * An operation on a queue this node does not hold: sent to the node its id names (ids start
   * with `<node>-`). Null when no node of that name answers (it is gone, and its queues with it)
   * or the id names no node.
   */
  async queueOp(op: QueueOp): Promise<QueueOpReply | null> {
    const { link } = this.parts;
    const node = /^([a-z0-9]{1,16})-/i.exec(op.queueId)?.[1];
    if (node === undefined || node === link.node) return null;
    try {
      const m = await link.nc.request(`${link.names.queues}.${node}`, pack(op), {
        timeout: QUEUE_OP_TIMEOUT_MS,
      });
      return unpack<QueueOpReply>(m.data);
    } catch (err) {
      if ((err as { code?: string }).code === '503') return null; // no such node running
      throw err;
    }
  }

  close(): void {
    for (const sub of this.serving.values()) sub.unsubscribe();
    this.serving.clear();
    this.queueService?.unsubscribe();
    this.queueService = null;
  }
}
