/**
 * AddressLimits (src/http/address-limits.ts) with stand-in requests that count how often their
 * address is read: a request with credentials held while the server holds fewer than
 * `maxConnections` is counted without reading its address (uWS makes it anew on each call), and
 * every decision stays what it was with every address read — the limit is reached, refused and
 * given back exactly, however the requests were counted. Raw sockets through a real server:
 * test/api/address-limits.test.ts.
 */
import t from 'tap';
import { AddressLimits } from '../../src/http/address-limits.js';
import { JsonableError } from '../../src/lib/errors.js';
import type { RequestContext } from '../../src/http/request.js';

type Fake = RequestContext & { reads: number; done: boolean };

/** A request from `address` whose address reads are counted ('' once it is done, as uWS's). */
function from(address: string): Fake {
  const fake = {
    reads: 0,
    done: false,
    forwardedFor: '',
    peerAddress(): string {
      if (fake.done) return '';
      fake.reads++;
      return address;
    },
  };
  return fake as unknown as Fake;
}

const refused = (limits: AddressLimits, ctx: RequestContext, anonymous = false) => {
  try {
    limits.admit(ctx, anonymous)();
    return false;
  } catch (err) {
    return err instanceof JsonableError && err.httpStatus === 429;
  }
};

t.test('held requests with credentials are counted unread until a limit comes near', (t) => {
  const limits = new AddressLimits(4, 2, [], []);
  const a = [from('10.0.0.1'), from('10.0.0.1'), from('10.0.0.1')];
  const releases = a.map((ctx) => limits.take(ctx, false));
  t.same(
    a.map((c) => c.reads),
    [0, 0, 0],
    'three of four: no address read',
  );
  t.equal(limits.unreadCount, 3);
  t.notOk(limits.mayRefuse(false), 'nobody can be refused yet');

  const fourth = from('10.0.0.1');
  const release4 = limits.take(fourth, false);
  t.same(
    [...a, fourth].map((c) => c.reads),
    [1, 1, 1, 1],
    'at the fourth every address is read',
  );
  t.equal(limits.unreadCount, 0);
  t.ok(limits.mayRefuse(false), '10.0.0.1 is at its limit');
  t.ok(refused(limits, from('10.0.0.1')), 'a fifth from 10.0.0.1 is refused');
  t.notOk(refused(limits, from('10.0.0.2')), 'another address is served');

  releases[0]!();
  releases[0]!(); // once only
  t.notOk(limits.mayRefuse(false), 'one given back: under the limit again');
  t.equal(limits.heldBy('10.0.0.1'), 3);
  releases[1]!();
  releases[2]!();
  release4();
  t.equal(limits.addresses, 0, 'all given back');
  t.end();
});

t.test('an unread request given back before it was read leaves nothing behind', (t) => {
  const limits = new AddressLimits(3, 2, [], []);
  const r1 = limits.take(from('10.0.0.1'), false);
  const r2 = limits.take(from('10.0.0.1'), false);
  r1();
  r1();
  t.equal(limits.unreadCount, 1);
  // Room again for two unread: the limit is reached by address only when it can be.
  const r3 = limits.take(from('10.0.0.1'), false);
  t.equal(limits.unreadCount, 2);
  const third = from('10.0.0.1');
  const r4 = limits.take(third, false);
  t.equal(third.reads, 1, 'the third held in all is read');
  t.equal(limits.heldBy('10.0.0.1'), 3);
  t.ok(refused(limits, from('10.0.0.1')), 'and the address is at its limit');
  r2();
  r3();
  r4();
  t.equal(limits.addresses, 0);
  t.end();
});

t.test('requests without credentials, upgrades and exempt addresses', (t) => {
  const limits = new AddressLimits(10, 1, ['127.0.0.1'], []);
  const anon = from('10.0.0.1');
  const ra = limits.take(anon, true);
  t.equal(anon.reads, 1, 'a request without credentials is counted by address at once');
  t.ok(limits.mayRefuse(true), '10.0.0.1 at its anonymous limit');
  t.ok(refused(limits, from('10.0.0.1'), true), 'a second anonymous one is refused');

  const authed = from('10.0.0.1');
  const rb = limits.take(authed, false);
  t.equal(authed.reads, 0, 'one with credentials is not read');
  const local = from('127.0.0.1');
  const rc = limits.take(local, false);
  t.equal(limits.heldBy('10.0.0.1'), 2, 'read when asked: 10.0.0.1 holds two');
  t.equal(limits.heldBy('127.0.0.1'), 0, 'the exempt address is not counted');
  ra();
  rb();
  rc();
  t.equal(limits.addresses, 0);
  t.end();
});

t.test('at most 256 unread; past them every address is read once, exempt ones too', (t) => {
  for (const address of ['10.0.0.1', '127.0.0.1']) {
    const limits = new AddressLimits(2000, 100, ['127.0.0.1'], []);
    const held = Array.from({ length: 300 }, () => from(address));
    const releases = held.map((ctx) => limits.take(ctx, false));
    t.same([...new Set(held.map((c) => c.reads))], [1], `${address}: each of 300 held read once`);
    t.equal(limits.unreadCount, 0, `${address}: none unread`);
    t.equal(limits.heldBy(address), address === '10.0.0.1' ? 300 : 0);
    for (const r of releases) r();
    const again = from(address);
    const r = limits.take(again, false);
    t.equal(again.reads, 0, `${address}: all given back, the next is not read`);
    r();
    t.equal(limits.addresses, 0);
  }
  t.end();
});

t.test('connections off: never read for the count', (t) => {
  const limits = new AddressLimits(0, 5, [], []);
  const held = Array.from({ length: 50 }, () => from('10.0.0.1'));
  const releases = held.map((ctx) => limits.take(ctx, false));
  t.equal(
    held.reduce((n, c) => n + c.reads, 0),
    0,
    'fifty held, none read',
  );
  t.notOk(limits.mayRefuse(false));
  for (const r of releases) r();
  t.equal(limits.addresses, 0);
  t.end();
});
