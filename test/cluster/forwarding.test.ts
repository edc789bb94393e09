/**
 * Forwarded writes (src/cluster/forwarding.ts) against a real nats-server, the owner's side played
 * by hand where a fault is needed: a command that no owner says it received (its subscription left
 * on a frozen NATS server, which routes some of the realm's commands to it; or its owner frozen) is
 * answered 503 with Retry-After once the wait to be received is over, not after the answer's
 * time; a command the owner received waits for its result however long the owner takes; an owner
 * that answers without saying it received (a node of an earlier version) is taken as it comes; a
 * refusal of the owner comes back as its error. Skipped when nats-server is not installed. No
 * timing is asserted: the waits given are far apart (a received command is held ten times the
 * wait to be received; the lost one would wait an hour for its answer).
 */
import { connect, createInbox, type NatsConnection } from 'nats';
import t from 'tap';
import type { ClusterLink } from '../../src/cluster/link.js';
import { Forwarder, FORWARD_DEADLINE_MS } from '../../src/cluster/forwarding.js';
import { clusterNames, NotOwnerError } from '../../src/cluster/jetstream.js';
import { missingEngines, sleep, waitFor } from '../../src/cluster/local.js';
import type { EventQueues } from '../../src/delivery/publisher.js';
import type { JsonableError } from '../../src/lib/errors.js';
import { pack, unpack } from '../../src/lib/pack.js';
import { oneNatsServer } from '../helpers/one-nats.js';

const missing = missingEngines();
if (missing)
  t.plan(0, `${missing} is not installed (apt-get install -y nats-server nginx): skipped`);

const names = clusterNames();
const SUBJECT = `${names.cmd}.1`;

/** A forwarder (or owner) on `nc`: only what forwarding uses of a link and a node. */
function forwarder(
  nc: NatsConnection,
  node: string,
  opts: {
    owns?: () => boolean;
    runHere?: (type: string, payload: unknown) => Promise<unknown>;
    ackMs?: number;
    againMs?: number;
  } = {},
): Forwarder {
  const link = { nc, names, node } as unknown as ClusterLink;
  return new Forwarder({
    link,
    queues: {} as EventQueues,
    owns: opts.owns ?? (() => false),
    runHere: (_realm, type, payload) =>
      (opts.runHere ?? (() => Promise.reject(new Error('not here'))))(type, payload),
    position: () => 0,
    waitApplied: () => Promise.resolve(),
    ...(opts.ackMs !== undefined ? { ackMs: opts.ackMs } : {}),
    ...(opts.againMs !== undefined ? { againMs: opts.againMs } : {}),
  });
}

t.test('forwarded writes', async (t) => {
  if (missing) return;
  const url = await oneNatsServer(t, 'forwarding');
  const asking = await connect({ servers: url });
  const owning = await connect({ servers: url });
  t.teardown(() => Promise.all([asking.close(), owning.close()]));
  // A subtest's subscriptions are gone on the server before the next begins: a command sent to one
  // still registered there is taken by no callback and answered by nobody (the next subtest's
  // "no responders" case then waits its whole ackMs, as for an owner that is gone).
  t.afterEach(() => owning.flush());

  await t.test('a command nobody says it received: 503 with Retry-After, not run', async (t) => {
    // The owner's old subscription on a frozen server: it takes the command and never answers.
    const got: unknown[] = [];
    const stale = owning.subscribe(SUBJECT, {
      queue: 'owner',
      callback: (_e, m) => got.push(unpack(m.data)),
    });
    await owning.flush();
    const f = forwarder(asking, 'n2', { ackMs: 300, againMs: 50 });
    const err: unknown = await f.forward(1, 'send', { content: 'x' }).then(
      () => null,
      (e: unknown) => e,
    );
    stale.unsubscribe();
    t.ok(err instanceof NotOwnerError, 'answered "This realm is moving"');
    const e = err as JsonableError;
    t.equal(e.httpStatus, 503, '503');
    t.equal(e.headers['Retry-After'], '1', 'Retry-After: 1');
    t.ok(got.length >= 1, `the command reached the silent subscription (${got.length} times)`);
    const ids = new Set(got.map((c) => (c as { id?: string }).id));
    t.equal(ids.size, 1, 'every time with one id (an owner runs it once)');
    t.notOk(ids.has(undefined), 'an id');
  });

  await t.test("beside a frozen server's old subscription: sent again, run once", async (t) => {
    // The owner's subscription left on a frozen server (silent) and its live one, one queue group:
    // NATS gives each message to one of them at random. Before commands were sent again, about
    // half of these forwards were lost there and answered 503.
    const lost: string[] = [];
    const stale = owning.subscribe(SUBJECT, {
      queue: 'owner',
      callback: (_e, m) => lost.push(unpack<{ id: string }>(m.data).id),
    });
    const runs: unknown[] = [];
    const owner = forwarder(owning, 'n1', {
      owns: () => true,
      runHere: (_type, payload) => {
        runs.push(payload);
        return Promise.resolve(payload);
      },
    });
    owner.serve(1);
    await owning.flush();
    // The wait to be received is long (a lost forward would be sent ~100 times meanwhile).
    const f = forwarder(asking, 'n2', { ackMs: 5000, againMs: 50 });
    const results: unknown[] = [];
    for (let i = 0; i < 20; i++) results.push(await f.forward(1, 'send', { i }));
    t.same(
      results,
      Array.from({ length: 20 }, (_, i) => ({ i })),
      'every forward answered by the owner',
    );
    t.same(runs, results, 'each run once, in order');
    t.ok(lost.length > 0, `some were sent to the silent subscription first (${lost.length})`);
    stale.unsubscribe();
    owner.close();
  });

  await t.test('a repeat of a command the owner runs or ran: not run again', async (t) => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let runs = 0;
    const owner = forwarder(owning, 'n1', {
      owns: () => true,
      runHere: async () => {
        runs++;
        await held;
        return 'done';
      },
    });
    owner.serve(1);
    await owning.flush();
    const ask = (cmd: object) => {
      const inbox = createInbox();
      const answers: unknown[] = [];
      asking.subscribe(inbox, { callback: (_e, m) => answers.push(unpack(m.data)) });
      asking.publish(SUBJECT, pack(cmd), { reply: inbox });
      return answers;
    };
    const cmd = { type: 'send', payload: {}, ack: true, id: 'x.1' };
    const first = ask(cmd);
    await waitFor('the first to be received', () => first.length > 0);
    const second = ask(cmd);
    const again = ask({ ...cmd, again: true });
    await waitFor('the repeats to be received', () => second.length > 0 && again.length > 0);
    release();
    await waitFor('the answers', () => [first, second, again].every((a) => a.length === 2));
    for (const a of [first, second, again])
      t.same(a[1], { ok: true, data: 'done', seq: 0 }, 'the one outcome');
    t.equal(runs, 1, 'run once');
    const unknown = ask({ ...cmd, id: 'x.2', again: true });
    await waitFor('the answer', () => unknown.length > 0);
    t.same(unknown, [{ unknown: true }], 'a repeat of an id never received: "unknown", not run');
    t.equal(runs, 1, 'still once');
    owner.close();
  });

  await t.test('a command the owner received waits for its result', async (t) => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const owner = forwarder(owning, 'n1', {
      owns: () => true,
      runHere: async (type, payload) => {
        await held;
        return { type, payload };
      },
    });
    owner.serve(1);
    // What the owner tells the forwarding node, seen on the way (its reply inbox).
    let receivedSaid = false;
    const spy = owning.subscribe('_INBOX.>', {
      callback: (_e, m) => {
        if (m.data.length > 0 && 'received' in unpack<object>(m.data)) receivedSaid = true;
      },
    });
    await owning.flush();
    const f = forwarder(asking, 'n2', { ackMs: 2000 });
    let settled = false;
    const result = f.forward(1, 'send', { content: 'y' }).finally(() => (settled = true));
    await waitFor('the owner to say it received it', () => receivedSaid);
    await sleep(3000); // longer than the wait to be received
    t.notOk(settled, 'still waiting for the owner');
    release();
    t.same(await result, { type: 'send', payload: { content: 'y' } }, "the owner's result");
    spy.unsubscribe();
    owner.close();
  });

  await t.test("an owner's refusal comes back as its error", async (t) => {
    const owner = forwarder(owning, 'n1', { owns: () => false });
    owner.serve(1);
    await owning.flush();
    const f = forwarder(asking, 'n2', { ackMs: 5000 });
    const err = (await f.forward(1, 'send', {}).then(
      () => null,
      (e: unknown) => e,
    )) as JsonableError | null;
    t.match(err, { httpStatus: 503, message: /moving/ }, 'not acting: "moving", 503');
    t.equal(err?.headers['Retry-After'], '1', 'with Retry-After');
    owner.close();
  });

  await t.test('an owner of an earlier version, answering once: taken as it comes', async (t) => {
    const old = owning.subscribe(SUBJECT, {
      queue: 'owner',
      callback: (_e, m) => m.respond(pack({ ok: true, data: 'done', seq: 0 })),
    });
    await owning.flush();
    const f = forwarder(asking, 'n2', { ackMs: 5000 });
    t.equal(await f.forward(1, 'send', {}), 'done');
    old.unsubscribe();
  });

  await t.test('no owner subscribed: asked again until one is', async (t) => {
    const f = forwarder(asking, 'n2', { ackMs: 5000 });
    const result = f.forward(1, 'send', { content: 'z' });
    await sleep(300); // a few "no responders" answers
    const owner = forwarder(owning, 'n1', {
      owns: () => true,
      runHere: (type) => Promise.resolve(type),
    });
    owner.serve(1);
    t.equal(
      await result,
      'send',
      `answered by the owner that came (within ${FORWARD_DEADLINE_MS} ms)`,
    );
    owner.close();
  });
});
