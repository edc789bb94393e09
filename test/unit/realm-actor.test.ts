/**
 * The realm actor's serialization, with a command table of its own over a real (temporary)
 * database: concurrent read-modify-write commands lose no update and run in arrival order; a
 * refused command rolls back completely and emits nothing; a command that throws a plain Error does
 * not stop the actor; events reach the publisher only after commit; a closed actor refuses.
 */
import t, { type Test } from 'tap';
import { RealmRuntime } from '../../actors/registry.js';
import { JsonableError } from '../../src/lib/errors.js';
import type { OutboundEvent } from '../../src/lib/events.js';
import type { MutationContext } from '../../src/mutations/context.js';
import { doCreateRealm } from '../../src/mutations/realms.js';
import { Store } from '../../src/storage/store.js';

type Counter = { value: number };

function readCounter(ctx: MutationContext): number {
  const s = ctx.store.realms.byId(ctx.realm.id)!;
  return (JSON.parse(s.settings) as Counter).value ?? 0;
}
function writeCounter(ctx: MutationContext, value: number): void {
  ctx.store.realms.updateSettings(ctx.realm.id, JSON.stringify({ value }));
}

const order: number[] = [];
/** BEGIN and COMMIT statements run (transactions, not savepoints). */
const sqlLog: string[] = [];
const commands = {
  increment: (ctx: MutationContext, p: { n: number }) => {
    const v = readCounter(ctx);
    writeCounter(ctx, v + 1);
    order.push(p.n);
    ctx.emit({ type: 'counter', value: v + 1 }, [1]);
    return v + 1;
  },
  incrementThenRefuse: (ctx: MutationContext) => {
    writeCounter(ctx, readCounter(ctx) + 1000);
    ctx.emit({ type: 'counter', value: -1 }, [1]);
    throw new JsonableError('refused after writing');
  },
  crash: () => {
    throw new Error('a bug');
  },
};

function setup(t: Test, batchable: ReadonlySet<string> = new Set()) {
  const store = Store.open(t.testdir(), {
    verbose: (sql) => {
      if (typeof sql === 'string' && /^(BEGIN|COMMIT)/.test(sql)) sqlLog.push(sql);
    },
  });
  t.teardown(() => store.close());
  const { realm_id } = doCreateRealm(store, {
    name: 'R',
    string_id: '',
    owner_email: 'o@x.com',
    owner_full_name: 'O',
    owner_password_hash: null,
    owner_can_create_users: false,
    now: 0,
  });
  const published: OutboundEvent[][] = [];
  let publishedInsideTransaction = 0;
  const publisher = {
    publish: (_realmId: number, events: readonly OutboundEvent[]) => {
      if (store.inTransaction) publishedInsideTransaction++;
      published.push([...events]);
    },
  };
  const assertPublishedAfterCommit = () =>
    t.equal(publishedInsideTransaction, 0, 'events are published only after COMMIT');
  const rt = new RealmRuntime(store, realm_id, publisher, commands, Date.now, batchable);
  return { store, rt, published, realmId: realm_id, assertPublishedAfterCommit };
}

t.test('many concurrent commands: no lost update, arrival order', async (t) => {
  const { rt, published, assertPublishedAfterCommit } = setup(t);
  order.length = 0;
  const N = 500;
  // Interleave arrival with unrelated async work, as concurrent HTTP requests would.
  const results = await Promise.all(
    Array.from({ length: N }, async (_, i) => {
      if (i % 3 === 0) await Promise.resolve();
      return { i, v: (await rt.askUntyped('increment', { n: i })) as number };
    }),
  );
  t.equal(Math.max(...results.map((r) => r.v)), N, 'every increment counted');
  t.same([...new Set(results.map((r) => r.v))].length, N, 'each command saw a distinct value');
  const arrival = [...order];
  // order[k] is the request that produced value k+1; arrival order = the order of ask() calls.
  const byValue = new Map(results.map((r) => [r.v, r.i]));
  t.same(
    arrival,
    Array.from({ length: N }, (_, k) => byValue.get(k + 1)),
    'values follow arrival order',
  );
  t.equal(published.length, N, 'one publish per committed command');
  t.equal(rt.applied, N);
  assertPublishedAfterCommit();
});

t.test('a refused command rolls back and emits nothing; the actor goes on', async (t) => {
  const { rt, published, store, realmId, assertPublishedAfterCommit } = setup(t);
  await rt.askUntyped('increment', { n: 0 });
  await t.rejects(rt.askUntyped('incrementThenRefuse', {}), { message: 'refused after writing' });
  t.equal(
    (JSON.parse(store.realms.byId(realmId)!.settings) as Counter).value,
    1,
    'the write was rolled back',
  );
  t.equal(published.length, 1, 'no event from the refused command');
  await t.rejects(rt.askUntyped('crash', {}), { message: 'a bug' });
  t.equal(await rt.askUntyped('increment', { n: 1 }), 2, 'still serving after a throwing command');
  t.equal(rt.status, 'open');
  await t.rejects(rt.askUntyped('no-such-command', {}), /unknown realm command/);
  assertPublishedAfterCommit();
});

t.test('a closed actor refuses commands with 503', async (t) => {
  const { rt } = setup(t);
  rt.close();
  t.equal(rt.status, 'closed');
  await t.rejects(rt.askUntyped('increment', { n: 0 }), {
    message: 'Server is shutting down',
    httpStatus: 503,
  });
});

t.test('group commit: batchable commands share a transaction, keep every guarantee', async (t) => {
  const { rt, published, store, realmId, assertPublishedAfterCommit } = setup(
    t,
    new Set(['increment', 'incrementThenRefuse']),
  );
  order.length = 0;
  sqlLog.length = 0;
  // Ten sends in one turn of the event loop, one of them refused, then a command that is not
  // batchable: the batch commits first (arrival order), in one transaction.
  const asks = [
    ...Array.from({ length: 5 }, (_, i) => rt.askUntyped('increment', { n: i })),
    rt.askUntyped('incrementThenRefuse', {}).then(
      () => 'resolved',
      (e: Error) => e.message,
    ),
    ...Array.from({ length: 4 }, (_, i) => rt.askUntyped('increment', { n: 5 + i })),
  ];
  const results = await Promise.all(asks);
  t.same(
    results,
    [1, 2, 3, 4, 5, 'refused after writing', 6, 7, 8, 9],
    'arrival order; the refusal undid only itself',
  );
  t.same(order, [0, 1, 2, 3, 4, 5, 6, 7, 8], 'applied in arrival order');
  t.equal(sqlLog.filter((s) => s.startsWith('BEGIN')).length, 1, 'one transaction for the batch');
  t.equal((JSON.parse(store.realms.byId(realmId)!.settings) as Counter).value, 9);
  t.equal(published.length, 1, 'one publish for the batch');
  t.same(
    published[0]!.map((e) => e.event.value),
    [1, 2, 3, 4, 5, 6, 7, 8, 9],
    'events of committed commands only, in order',
  );
  assertPublishedAfterCommit();

  // A command that is not batchable runs after whatever is pending.
  order.length = 0;
  const pending = rt.askUntyped('increment', { n: 100 });
  const crash = rt.askUntyped('crash', {}).catch((e: Error) => e.message);
  t.equal(order.length, 1, 'the pending batch ran before the next command');
  t.equal(await pending, 10);
  t.equal(await crash, 'a bug');

  // Closing runs what is pending, then refuses.
  const last = rt.askUntyped('increment', { n: 200 });
  rt.close();
  t.equal(await last, 11);
  await t.rejects(rt.askUntyped('increment', { n: 300 }), {
    message: 'Server is shutting down',
    httpStatus: 503,
  });
});
