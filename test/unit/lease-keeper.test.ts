/**
 * The fencing rules of a cluster node's leases (src/cluster/lease-keeper.ts; docs/cluster.md
 * "Failover and fencing"), each with a simulated clock and a bucket played in memory (each key's
 * writes are compare-and-sets on one revision counter, as a JetStream key-value bucket's):
 *  - a lease is taken only when free or unchanged for a whole lease time;
 *  - a lease being taken is renewed every tick however long its catch-up takes, so no other node
 *    sees it unchanged for a lease time;
 *  - the marker's term comes from a renewal right before it, and a takeover that cannot renew has
 *    no term (it aborts);
 *  - an owner whose last renewal was sent longer ago than the lease time minus the margin stops
 *    acting as owner at once, and acts again after a renewal; a renewal counts from its sending;
 *  - a renewal refused because its own earlier unanswered write landed keeps the lease;
 *  - two nodes, one cut off from the bucket, are never both valid owners at any simulated moment.
 */
import t, { type Test } from 'tap';
import { LeaseKeeper } from '../../src/cluster/lease-keeper.js';
import { LEASE, MARGIN, World } from '../helpers/lease-world.js';

/** Lets the promises settled so far run their callbacks (no simulated or real time passes). */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

t.test('a lease is taken when free, or unchanged for a whole lease time', async (t) => {
  const w = new World();
  const a = w.keeper('a');
  const b = w.keeper('b');
  const term = await a.tryTake(1);
  t.ok(term > 0, 'a free lease is taken at once');
  t.notOk(a.valid(1), 'taken, but not acting as owner before its marker');
  a.establish(1);
  t.ok(a.valid(1), 'established: owner');
  t.equal(await b.tryTake(1), 0, 'b first sees the revision');
  w.now += LEASE - 1;
  t.equal(await b.tryTake(1), 0, 'not before a whole lease time');
  w.now += 500;
  await a.renewAll();
  w.now += 2600;
  t.equal(await b.tryTake(1), 0, 'a renewal moved the revision: b waits again');
  w.now += LEASE;
  const taken = await b.tryTake(1);
  t.ok(taken > term, 'unchanged for a lease time: b takes it with a later revision');
  t.notOk(a.valid(1), 'a stopped acting long before (its renewals stopped)');
});

t.test('a lease being taken is renewed every tick, however long the catch-up', async (t) => {
  const w = new World();
  const a = w.keeper('a');
  const b = w.keeper('b');
  const first = await a.tryTake(1);
  await b.tryTake(1);
  // The catch-up takes four lease times; a ticks every third of one, b watches.
  let stolen = 0;
  for (let i = 0; i < 12; i++) {
    w.now += LEASE / 3;
    await a.renewAll();
    stolen = stolen || (await b.tryTake(1));
  }
  t.equal(stolen, 0, 'b never takes it');
  const term = await a.confirm(1);
  t.ok(term > first, `the marker's term (${term}) comes from a renewal right before it`);
  t.equal(a.term(1), term, 'and is the term held');
});

t.test('a takeover that cannot renew before its marker aborts', async (t) => {
  const w = new World();
  const lost: string[] = [];
  const a = w.keeper('a', lost);
  const b = w.keeper('b');
  await a.tryTake(1);
  // a stalls (no ticks) for longer than a lease time; b takes the key meanwhile.
  await b.tryTake(1);
  w.now += LEASE + 1;
  t.ok((await b.tryTake(1)) > 0, 'b takes the lease a left unrenewed');
  t.equal(await a.confirm(1), 0, "a's renewal before its marker fails: no term, no marker");
  t.notOk(a.holds(1), 'a no longer holds it');
  t.same(lost, ['1: another node took it'], 'and is told why');
});

t.test(
  'an owner stops acting at once when its renewals stop, and acts again after one',
  async (t) => {
    const w = new World();
    const a = w.keeper('a');
    await a.tryTake(1);
    t.equal(await a.confirm(1), a.term(1));
    a.establish(1);
    const renewedAt = w.now;
    w.cutOff.set('a', 'lost');
    for (let i = 0; i < 3; i++) {
      w.now += LEASE / 3 - 1;
      await a.renewAll();
    }
    t.equal(w.now - renewedAt, LEASE - 3);
    t.notOk(a.valid(1), 'past the lease time minus the margin: not an owner, still holding');
    t.ok(a.holds(1), 'the lease is kept (nobody else wrote it)');
    w.now = renewedAt + LEASE - MARGIN - 1;
    t.ok(a.valid(1), 'valid one millisecond before');
    w.now = renewedAt + LEASE - MARGIN;
    t.notOk(a.valid(1), 'not at the lease time minus the margin');
    w.cutOff.delete('a');
    await a.renewAll();
    t.ok(a.valid(1), 'a renewal answered: owner again');
  },
);

t.test("a renewal's time is when it was sent", async (t) => {
  const w = new World();
  const a = w.keeper('a');
  await a.tryTake(1);
  a.establish(1);
  // The bucket answers this renewal only 2 s after it was sent.
  let answer!: () => void;
  const slow = new Promise<void>((r) => (answer = r));
  const store = w.store('a');
  const keeper = new LeaseKeeper(
    {
      ...store,
      update: async (realm, revision) => {
        await slow;
        return store.update(realm, revision);
      },
    },
    { leaseMs: LEASE, marginMs: MARGIN, clock: () => w.now },
  );
  await keeper.claim(2);
  keeper.establish(2);
  const sentAt = w.now;
  const renewal = keeper.renew(2);
  w.now += 2000;
  answer();
  t.ok(await renewal, 'renewed');
  w.now = sentAt + LEASE - MARGIN;
  t.notOk(keeper.valid(2), 'valid until its sending plus the lease time minus the margin only');
});

t.test('a renewal refused because its own unanswered write landed keeps the lease', async (t) => {
  const w = new World();
  const lost: string[] = [];
  const a = w.keeper('a', lost);
  await a.tryTake(1);
  a.establish(1);
  w.cutOff.set('a', 'landed'); // the write lands, its answer is lost
  t.notOk(await a.renew(1), 'unanswered');
  w.cutOff.delete('a');
  t.ok(
    await a.renew(1),
    'the next renewal, refused at the old revision, adopts its own and renews',
  );
  t.ok(a.valid(1), 'still the owner');
  t.same(lost, [], 'nothing lost');
  t.equal(a.term(1), w.keys.get(1)!.revision, 'holding the revision the bucket has');
});

t.test('two nodes are never both valid owners, one of them cut off for a while', (t) =>
  neverBothValid(t, 'cut'),
);

t.test('a lapsed lease is renewed between ticks; a valid one is left to its tick', async (t) => {
  const w = new World();
  let writes = 0;
  const store = w.store('a');
  const a = new LeaseKeeper(
    { ...store, update: (realm, rev) => (writes++, store.update(realm, rev)) },
    { leaseMs: LEASE, marginMs: MARGIN, clock: () => w.now },
  );
  await a.claim(1);
  a.establish(1);
  await a.renewLapsed();
  t.equal(writes, 0, 'valid: nothing written');
  w.now += LEASE;
  t.notOk(a.valid(1), 'lapsed');
  await a.renewLapsed();
  t.equal(writes, 1, 'renewed at once');
  t.ok(a.valid(1), 'and valid again');
});

t.test(
  "a renewal sent during the bucket's election is asked again at the next look at a lapsed lease",
  async (t) => {
    const w = new World();
    const a = w.keeper('a');
    await a.claim(1);
    a.establish(1);
    w.electing.set('a', 'lost'); // the bucket's leader is gone: writes go unanswered
    w.now += LEASE;
    t.notOk(a.valid(1), 'lapsed');
    const first = a.renewLapsed(); // sent during the election: never answered
    await settle();
    w.electing.delete('a'); // elected: what is sent from now on is answered
    w.now += 250;
    await a.renewLapsed(); // the next quarter-second look
    await settle();
    t.ok(a.valid(1), 'asked again beside the unanswered renewal: acting again');
    t.equal(a.term(1), w.keys.get(1)!.revision, 'holding the revision the bucket has');
    w.timeOut(); // the first attempt's timeout, late: ignored
    await first;
    t.ok(a.valid(1), 'still valid');
  },
);

t.test(
  "the bucket's election announced: every renewal under way is asked again at once",
  async (t) => {
    const w = new World();
    const a = w.keeper('a');
    await a.claim(1);
    a.establish(1);
    await a.claim(2); // being taken: renewed at every tick like an owner
    w.electing.set('a', 'lost');
    const tick = a.renewAll(); // a tick during the election, both leases still valid
    await settle();
    const before = w.sent.get('a');
    w.electing.delete('a');
    w.now += LEASE; // the election took long: both renewals' leases have lapsed
    await a.elected();
    await settle();
    t.ok((w.sent.get('a') ?? 0) > before!, 'asked again');
    t.ok(a.valid(1), 'the owner acts again');
    w.now += 1;
    t.ok(await a.confirm(2), 'the lease being taken is still held');
    w.timeOut();
    await tick;
  },
);

t.test(
  'a renewal that landed during the election but went unanswered: the attempt asked again is refused, the lease kept',
  async (t) => {
    const w = new World();
    const lost: string[] = [];
    const a = w.keeper('a', lost);
    await a.claim(1);
    a.establish(1);
    w.electing.set('a', 'landed');
    w.now += LEASE;
    const first = a.renewLapsed();
    await settle();
    const landed = w.keys.get(1)!.revision;
    w.electing.delete('a');
    await a.elected();
    await settle();
    t.same(lost, [], 'not lost');
    t.ok(a.valid(1), 'its own revision adopted, renewed again: acting');
    t.ok(a.term(1) > landed, 'holding a revision after the one that landed unanswered');
    w.timeOut();
    await first;
  },
);

t.test(
  "a renewal counts from the sending of the attempt that answered, never an earlier one's",
  async (t) => {
    const w = new World();
    const a = w.keeper('a');
    await a.claim(1);
    a.establish(1);
    w.electing.set('a', 'lost');
    w.now += LEASE;
    const first = a.renewLapsed(); // sent at LEASE, unanswered
    await settle();
    w.now += 2000;
    w.electing.delete('a');
    const askedAt = w.now;
    await a.elected(); // sent at LEASE + 2000, answered
    await settle();
    w.now = askedAt + LEASE - MARGIN - 1;
    t.ok(
      a.valid(1),
      'valid until the answering attempt was sent plus the lease time less the margin',
    );
    w.now += 1;
    t.notOk(a.valid(1), 'and no longer');
    w.timeOut();
    await first;
  },
);

t.test('two nodes are never both valid owners across a bucket election seen by one', (t) =>
  neverBothValid(t, 'election'),
);

/**
 * Node a owns; at a random moment it loses the bucket for a random time, b ticking and taking over
 * when it may; every simulated 50 ms step checks that they are not both valid. `cut`: a's writes
 * fail at once (landing or not). `election`: they are never answered until their timeout a second
 * later (landing or not), and when the bucket answers again the election is announced to a. Node a
 * renews at its ticks and looks at a lapsed lease every 250 ms, as a node does.
 */
async function neverBothValid(t: Test, fault: 'cut' | 'election'): Promise<void> {
  let takeovers = 0;
  for (let run = 0; run < 40; run++) {
    const w = new World();
    const a = w.keeper('a');
    const b = w.keeper('b');
    const faults = fault === 'cut' ? w.cutOff : w.electing;
    await a.tryTake(1);
    if ((await a.confirm(1)) === 0) t.fail('a could not confirm');
    a.establish(1);
    const cutAt = 50 * (10 + Math.floor(Math.random() * 60));
    const healAt = cutAt + 50 * (10 + Math.floor(Math.random() * 190));
    const landing = Math.random() < 0.5 ? 'landed' : 'lost';
    let both = 0;
    let bTook = 0;
    const tick = LEASE / 3;
    for (w.now = 0; w.now < 15_000; w.now += 50) {
      if (w.now === cutAt) faults.set('a', landing);
      if (w.now === healAt) {
        faults.delete('a');
        if (fault === 'election') void a.elected();
      }
      if (w.now % 1000 === 0) w.timeOut();
      if (w.now % tick < 50) {
        void a.renewAll();
        if (!b.holds(1) && (await b.tryTake(1)) > 0) {
          bTook = w.now;
          if ((await b.confirm(1)) > 0) b.establish(1);
        } else await b.renewAll();
      }
      if (w.now % 250 === 0) void a.renewLapsed();
      await settle();
      if (a.valid(1) && b.valid(1)) both++;
    }
    w.timeOut();
    await settle();
    if (both > 0)
      t.fail(`run ${run}: both valid at ${both} steps (cut ${cutAt}-${healAt}, b at ${bTook})`);
    if (bTook > 0) takeovers++;
  }
  t.ok(takeovers > 0, `b took over in ${takeovers} runs of 40`);
  t.pass('never both valid in 40 runs');
}
