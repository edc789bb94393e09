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

function setup(t: Test) {
  const store = Store.open(t.testdir());
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
  const rt = new RealmRuntime(store, realm_id, publisher, commands);
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
  t.same(results.map((r) => r.v).length, N);
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
