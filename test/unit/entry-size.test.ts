/**
 * No log entry is larger than one NATS message takes (src/cluster/log-writer.ts `fit`): nats.js
 * refuses to publish more than the server's max_payload (1 MiB by default), and an append refused
 * so was asked again for two minutes before the node gave the realm up. Since a batch's entry
 * names its forwarded commands with their results (`fw`), a large result could push an entry over.
 * Now: a result over FORWARD_RESULT_MOST is left out, the last ones too while the entry is over
 * the limit (those commands are then not known by their id to a later owner; docs/cluster.md),
 * and a batch too large without any is refused before its COMMIT (BatchTooLargeError), the realm
 * actor running its commands again in halves; a command alone too large is answered 400.
 */
import t from 'tap';
import { BatchTooLargeError, type BatchEffects } from '../../actors/realm.machine.js';
import { RealmRuntime } from '../../actors/registry.js';
import { ENTRY_HEADROOM, MIN_MAX_PAYLOAD, type Entry } from '../../src/cluster/jetstream.js';
import type { ClusterLink } from '../../src/cluster/link.js';
import { FORWARD_RESULT_MOST, LogWriter } from '../../src/cluster/log-writer.js';
import type { MutationContext } from '../../src/mutations/context.js';
import { doCreateRealm } from '../../src/mutations/realms.js';
import { unpack } from '../../src/lib/pack.js';
import { Store } from '../../src/storage/store.js';

/** The bound on a server at the floor (a node runs on no smaller one: entryLimit). */
const MOST = MIN_MAX_PAYLOAD - ENTRY_HEADROOM;
/** About what one of the writer's rows below packs to in an entry. */
const ROW = 117;

/**
 * A writer of realm 1 whose appends are recorded (and acknowledged at once), on a server of
 * max_payload `maxPayload`.
 */
function writer(rows: number, maxPayload = MIN_MAX_PAYLOAD) {
  const sent: Uint8Array[] = [];
  const link = {
    names: { stream: 'LOG', log: 'confab.log' },
    node: 'n1',
    incarnation: 'i1',
    leaseMs: 3000,
    nc: { info: { max_payload: maxPayload } },
    checkConnection: () => undefined,
    js: {
      publish: (_subject: string, data: Uint8Array) => {
        sent.push(data);
        return Promise.resolve({ seq: sent.length });
      },
    },
  } as unknown as ClusterLink;
  const replication = {
    // `rows` rows of 100 bytes each.
    sealWithUndo: () => ({
      changes: Array.from({ length: rows }, (_, i) => ['messages', 'u', [i, 'x'.repeat(100)]]),
      undo: [],
    }),
    noteUnacked: () => undefined,
  };
  const w = new LogWriter({
    link,
    store: { transaction: <T>(f: () => T) => f() } as never,
    replication: replication as never,
    ids: { writing: <T>(_w: unknown, f: () => T) => f() } as never,
    keeper: { valid: () => true, term: () => 7 } as never,
    queues: { watchRegistrations: () => undefined, publish: () => undefined } as never,
    die: () => undefined,
    deposed: () => undefined,
  });
  w.start(1, 0, { close: () => undefined } as never);
  return { w, sent };
}

const fwOf = (data: Uint8Array) => (unpack<Entry>(data) as { fw?: [string, unknown][] }).fw;

t.test('a forwarded result too large is left out of the entry', async (t) => {
  const { w, sent } = writer(5);
  const { settled } = w.commit(1, () => ({
    events: [],
    ended: [],
    forwarded: [
      ['f.1', { id: 1 }],
      ['f.2', { big: 'y'.repeat(FORWARD_RESULT_MOST + 1) }],
      ['f.3', { id: 3 }],
    ],
  }));
  await settled;
  t.ok(sent[0]!.length <= MOST, `the entry takes ${sent[0]!.length} bytes`);
  t.same(fwOf(sent[0]!), [
    ['f.1', { id: 1 }],
    ['f.3', { id: 3 }],
  ]);
});

t.test('forwarded commands past the limit are left out, the first ones kept', async (t) => {
  const { w, sent } = writer(Math.floor((MOST - 1500) / ROW)); // 1.5 kB short of the bound
  const forwarded: [string, unknown][] = Array.from({ length: 40 }, (_, i) => [
    `f.${i}`,
    { note: 'z'.repeat(60) },
  ]);
  const { settled } = w.commit(1, () => ({ events: [], ended: [], forwarded }));
  await settled;
  t.ok(sent[0]!.length <= MOST, `the entry takes ${sent[0]!.length} bytes`);
  const kept = fwOf(sent[0]!) ?? [];
  t.ok(kept.length > 0 && kept.length < 40, `${kept.length} of 40 named`);
  t.same(kept, forwarded.slice(0, kept.length), 'the first ones, in order');
});

t.test('a batch too large without them is refused before its COMMIT', (t) => {
  const { w, sent } = writer(Math.ceil((MOST + 2000) / ROW)); // 2 kB over the bound
  const refusal = (effects: BatchEffects) => {
    try {
      w.commit(1, () => effects);
    } catch (err) {
      return err;
    }
    return null;
  };
  for (const effects of [
    { events: [], ended: [] },
    { events: [], ended: [], forwarded: [['f.1', { id: 1 }]] as [string, unknown][] },
  ]) {
    const err = refusal(effects);
    t.ok(err instanceof BatchTooLargeError, 'BatchTooLargeError');
    t.match(err, {
      httpStatus: 400,
      message: new RegExp(`too large to be replicated \\(\\d+ bytes; at most ${MOST}\\)`),
    });
  }
  t.same(sent, [], 'nothing went to the log');
  t.end();
});

t.test("on a server under the floor the bound stays the floor's", (t) => {
  // Reached by a reconnection (connectJetStream refuses one at the start): an entry that server
  // cannot carry waits for another (appendSurely), it is not refused as too large.
  t.equal(writer(5, MIN_MAX_PAYLOAD / 16).w.mostBytes(), MOST);
  t.equal(
    writer(5, 1024 * 1024).w.mostBytes(),
    1024 * 1024 - ENTRY_HEADROOM,
    "above it, the server's",
  );
  t.end();
});

t.test('the realm actor runs a batch too large again in halves', async (t) => {
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
  // Each command's size; a transaction whose commands' sizes sum over 10 is too large.
  let running: number[] = [];
  const commands = {
    put: (ctx: MutationContext, p: { size: number }) => {
      ctx.store.realms.updateSettings(ctx.realm.id, JSON.stringify({ size: p.size }));
      running.push(p.size);
      return { size: p.size };
    },
  };
  const committed: number[][] = [];
  const placement = {
    commit: {
      commit: (_realmId: number, body: () => BatchEffects) => {
        running = [];
        store.transaction(() => {
          body();
          const total = running.reduce((a, b) => a + b, 0);
          if (total > 10) throw new BatchTooLargeError(total, 10);
        });
        committed.push(running);
        return { settled: Promise.resolve() };
      },
    },
    owns: () => true,
    forward: () => Promise.reject(new Error('owner here')),
    addRealm: () => Promise.reject(new Error('not here')),
  };
  const rt = new RealmRuntime(
    store,
    realm_id,
    { publish: () => undefined },
    commands,
    Date.now,
    new Set(['put']),
    placement,
  );
  // Asked in one turn: one batch of five, 20 in all.
  const sizes = [4, 4, 4, 4, 4];
  const answers = await Promise.all(sizes.map((size) => rt.askHere('put', { size })));
  t.same(
    answers,
    sizes.map((size) => ({ size })),
    'every command answered with its result',
  );
  t.same(committed, [[4, 4], [4], [4, 4]], 'committed in pieces small enough, in order');
  // One command alone too large: refused (400), the others of its batch committed.
  const alone = await Promise.allSettled([
    rt.askHere('put', { size: 2 }),
    rt.askHere('put', { size: 11 }),
  ]);
  t.same(alone[0], { status: 'fulfilled', value: { size: 2 } });
  t.match(alone[1], {
    status: 'rejected',
    reason: { httpStatus: 400, message: /too large to be replicated/ },
  });
});
