/**
 * The in-memory rate limiter (src/lib/rate-limit.ts) on a hand-moved clock: N at once then one
 * every W/N seconds, refused requests not counted, several rules, the standing reported for the
 * X-RateLimit-* headers, memory dropped after a silence — and, on random schedules, agreement with
 * a plain token-bucket model that keeps one counter per key and never forgets.
 */
import t from 'tap';
import { RateLimiter, type RateRule, type RateStatus } from '../../src/lib/rate-limit.js';
import { configFromEnv, DEFAULT_RATE_LIMITS } from '../../src/config.js';
import {
  addressKey,
  clientAddress,
  ipv4FromBytes,
  normalizeAddress,
  ProxyTrust,
} from '../../src/http/client-address.js';

function clock(startMs = 5_000_000) {
  const c = { ms: startMs, now: () => c.ms, advance: (s: number) => void (c.ms += s * 1000) };
  return c;
}

function status(): RateStatus {
  return { limit: 0, remaining: 0, resetSeconds: 0 };
}

t.test('N requests at once, then one every W/N seconds', (t) => {
  const c = clock();
  const rl = new RateLimiter<number>([[60, 5]], c.now);
  const s = status();
  for (let i = 0; i < 5; i++) {
    t.equal(rl.attempt(7, s), 0, `request ${i + 1} passes`);
    t.same(s, { limit: 5, remaining: 4 - i, resetSeconds: 12 * (i + 1) }, 'standing');
  }
  t.equal(rl.attempt(7, s), 12, 'the sixth waits W/N = 12 s');
  t.same(s, { limit: 5, remaining: 0, resetSeconds: 60 }, 'nothing left');
  t.equal(rl.attempt(8), 0, 'another key has its own budget');
  c.advance(11);
  t.equal(rl.attempt(7), 1, 'one second short');
  c.advance(1);
  t.equal(rl.attempt(7, s), 0, 'after 12 s one more passes');
  t.equal(s.remaining, 0);
  t.equal(rl.attempt(7), 12, 'and the next waits again');
  c.advance(60);
  for (let i = 0; i < 5; i++) t.equal(rl.attempt(7), 0, `whole budget back (${i + 1})`);
  t.end();
});

t.test('refused requests are not counted', (t) => {
  const c = clock();
  const rl = new RateLimiter<string>([[10, 2]], c.now);
  t.equal(rl.attempt('a'), 0);
  t.equal(rl.attempt('a'), 0);
  for (let i = 0; i < 50; i++) t.ok(rl.attempt('a') > 0, 'refused while knocking');
  c.advance(5);
  t.equal(rl.attempt('a'), 0, 'free after W/N, however many refusals');
  t.end();
});

t.test('several rules: the tightest decides, a refusal charges none', (t) => {
  const c = clock();
  // 3 per second and 5 per minute.
  const rl = new RateLimiter<number>(
    [
      [60, 5],
      [1, 3],
    ],
    c.now,
  );
  const s = status();
  for (let i = 0; i < 3; i++) t.equal(rl.attempt(1, s), 0);
  t.same(
    s,
    { limit: 3, remaining: 0, resetSeconds: 36 },
    'the standing of the rule with the fewest left, the latest reset',
  );
  const wait = rl.attempt(1, s);
  t.ok(wait > 0 && wait <= 1 / 3 + 1e-9, 'the per-second rule refuses the fourth');
  c.advance(1);
  t.equal(rl.attempt(1), 0);
  t.equal(rl.attempt(1), 0);
  t.equal(rl.attempt(1, s), 11, 'then the minute rule: 5 used, one more 12 s after the fifth');
  t.same(s, { limit: 5, remaining: 0, resetSeconds: 59 });
  t.end();
});

t.test('peek, charge and clear (failed attempts counted after the fact)', (t) => {
  const c = clock();
  const rl = new RateLimiter<string>([[1800, 3]], c.now);
  t.equal(rl.peek('x'), 0);
  rl.charge('x');
  rl.charge('x');
  t.equal(rl.peek('x'), 0, 'two failures: a third attempt is allowed');
  rl.charge('x');
  t.equal(rl.peek('x'), 600, 'three: wait for one to expire (1800 / 3)');
  t.equal(rl.peek('x'), 600, 'peeking counts nothing');
  rl.clear('x');
  t.equal(rl.peek('x'), 0, 'cleared');
  t.end();
});

t.test('no rules: never limited', (t) => {
  const rl = new RateLimiter<number>([], () => 0);
  t.ok(rl.empty);
  for (let i = 0; i < 1000; i++) t.equal(rl.attempt(1), 0);
  t.end();
});

t.test('bad rules are refused at construction', (t) => {
  t.throws(() => new RateLimiter([[0, 5]], () => 0));
  t.throws(() => new RateLimiter([[60, 0]], () => 0));
  t.throws(() => new RateLimiter([[60, 1.5]], () => 0));
  t.end();
});

t.test('keys untouched for a whole window are dropped, without a timer', (t) => {
  const c = clock();
  const rl = new RateLimiter<number>([[60, 200]], c.now);
  for (let k = 0; k < 1000; k++) rl.attempt(k);
  t.equal(rl.size, 1000);
  c.advance(61);
  rl.attempt(5000); // rotation: the 1000 move to the older generation
  t.equal(rl.size, 1001);
  t.equal(rl.attempt(3), 0, 'an old key found again is moved back');
  c.advance(61);
  rl.attempt(5001); // the older generation (untouched > 60 s) is dropped
  t.equal(rl.size, 3, 'only the keys used in the last window remain');
  c.advance(500);
  rl.attempt(1);
  t.equal(rl.size, 1, 'after a long silence everything else is gone');
  t.end();
});

t.test('a limited key survives rotations (its debt is not forgotten)', (t) => {
  const c = clock();
  const rl = new RateLimiter<number>([[60, 2]], c.now); // one every 30 s
  t.equal(rl.attempt(1), 0);
  c.advance(50);
  t.equal(rl.attempt(1), 0);
  t.equal(rl.attempt(1), 0, 'three in 50 s: the bucket refilled one');
  t.equal(rl.attempt(1), 30, 'then empty');
  c.advance(11); // past the first rotation (60 s): the key moves to the older generation
  t.equal(rl.attempt(1), 19, 'still limited after the rotation');
  c.advance(19);
  t.equal(rl.attempt(1), 0);
  t.end();
});

/** A token bucket with exact bookkeeping, per key, never forgetting: the model. */
class ModelBucket {
  private tokens = new Map<number, { level: number; at: number }>();
  constructor(
    private readonly w: number,
    private readonly n: number,
  ) {}
  attempt(key: number, now: number): boolean {
    const b = this.tokens.get(key) ?? { level: this.n, at: now };
    const level = Math.min(this.n, b.level + ((now - b.at) * this.n) / this.w);
    if (level < 1 - 1e-9) {
      this.tokens.set(key, { level, at: now });
      return false;
    }
    this.tokens.set(key, { level: level - 1, at: now });
    return true;
  }
}

t.test('agrees with a token-bucket model on random schedules', (t) => {
  let seed = 0x2545f491;
  const rand = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const rules: RateRule[] = [
    [60, 200],
    [10, 3],
    [1, 1],
    [1800, 5],
  ];
  let disagreements = 0;
  let refusals = 0;
  for (const [w, n] of rules) {
    const c = clock(1_000_000);
    const rl = new RateLimiter<number>([[w, n]], c.now);
    const model = new ModelBucket(w, n);
    for (let i = 0; i < 20_000; i++) {
      // Bursts and pauses: mostly short gaps, sometimes a long one (rotations happen).
      const r = rand();
      c.advance(r < 0.8 ? (rand() * w) / n / 4 : r < 0.98 ? (rand() * w) / n : rand() * 3 * w);
      const key = Math.floor(rand() * 4);
      const ok = rl.attempt(key) === 0;
      if (!ok) refusals++;
      if (ok !== model.attempt(key, c.ms / 1000)) disagreements++;
    }
  }
  t.equal(disagreements, 0, 'same verdict on every request');
  t.ok(refusals > 1000, `the schedules do hit the limits (${refusals} refusals)`);
  t.end();
});

t.test('addresses: canonical text, /64 keys for IPv6', (t) => {
  t.equal(normalizeAddress('0000:0000:0000:0000:0000:ffff:7f00:0001'), '127.0.0.1');
  t.equal(normalizeAddress('0000:0000:0000:0000:0000:0000:0000:0001'), '::1');
  t.equal(normalizeAddress('2001:0DB8:0000:0000:0000:0000:0000:0042'), '2001:db8::42');
  t.equal(normalizeAddress('::ffff:10.1.2.3'), '10.1.2.3');
  t.equal(normalizeAddress(' 203.0.113.9 '), '203.0.113.9');
  t.equal(normalizeAddress('203.0.113.9:4711'), '203.0.113.9');
  t.equal(normalizeAddress('[2001:db8::1]:443'), '2001:db8::1');
  for (const bad of ['', 'unknown', '1.2.3', '999.1.1.1', '[::1', 'a:b:c', '\u0000', '1.2.3.4.5']) {
    t.equal(normalizeAddress(bad), '', `invalid: ${JSON.stringify(bad)}`);
  }
  t.equal(addressKey('198.51.100.7'), '198.51.100.7');
  t.equal(addressKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
  t.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64');
  t.equal(addressKey('2001:db8::ffff:1'), addressKey('2001:db8::2'), 'one /64, one bucket');
  t.equal(addressKey('::1'), '0:0:0:0::/64');
  t.end();
});

t.test("IPv4 peers from uWS's binary address", (t) => {
  t.equal(ipv4FromBytes(new Uint8Array([127, 0, 0, 1])), '127.0.0.1');
  t.equal(
    ipv4FromBytes(new Uint8Array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 198, 51, 100, 7])),
    '198.51.100.7',
  );
  t.equal(
    ipv4FromBytes(new Uint8Array([...Array<number>(15).fill(0), 1])),
    null,
    '::1 is not IPv4',
  );
  t.equal(
    ipv4FromBytes(new Uint8Array([32, 1, 13, 184, 0, 0, 0, 0, 0, 0, 255, 255, 1, 2, 3, 4])),
    null,
  );
  t.equal(ipv4FromBytes(new Uint8Array(0)), null);
  t.end();
});

t.test('X-Forwarded-For is believed only from trusted proxies', (t) => {
  const mapped = (v4: string) => {
    const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
    const hex = (x: number) => x.toString(16).padStart(4, '0');
    return `0000:0000:0000:0000:0000:ffff:${hex((a << 8) | b)}:${hex((c << 8) | d)}`;
  };
  t.equal(clientAddress(mapped('127.0.0.1'), '203.0.113.5', null), '127.0.0.1', 'no proxy: peer');
  const trust = new ProxyTrust(['127.0.0.1', '10.0.0.0/8', '2001:db8::/32']);
  t.ok(trust.trusts('10.200.3.4'));
  t.notOk(trust.trusts('11.0.0.1'));
  t.ok(trust.trusts('2001:db8:5::1'));
  t.equal(clientAddress(mapped('127.0.0.1'), '203.0.113.5', trust), '203.0.113.5');
  t.equal(
    clientAddress(mapped('198.51.100.1'), '203.0.113.5', trust),
    '198.51.100.1',
    'an untrusted peer cannot claim another address',
  );
  t.equal(
    clientAddress(mapped('127.0.0.1'), '1.1.1.1, 203.0.113.5, 10.0.0.9', trust),
    '203.0.113.5',
    'from the right, past trusted hops, to the first untrusted one',
  );
  t.equal(
    clientAddress(mapped('127.0.0.1'), 'garbage, 10.0.0.9', trust),
    '10.0.0.9',
    'an invalid entry stops the walk at the last good address',
  );
  t.equal(clientAddress(mapped('127.0.0.1'), '', trust), '127.0.0.1', 'no header: the peer');
  t.throws(() => new ProxyTrust(['not-an-address']));
  t.throws(() => new ProxyTrust(['10.0.0.0/40']));
  t.end();
});

t.test('configuration from the environment', (t) => {
  t.same(configFromEnv({}).rateLimits, DEFAULT_RATE_LIMITS, 'on by default');
  t.same(DEFAULT_RATE_LIMITS.api_by_user, [[60, 200]], "the reference's 200 per minute per user");
  t.equal(configFromEnv({ RATE_LIMITING: 'off' }).rateLimits, null);
  t.equal(configFromEnv({ RATE_LIMITING: '0' }).rateLimits, null);
  const merged = configFromEnv({ RATE_LIMITING_RULES: '{"api_by_user": [[1, 5], [60, 100]]}' });
  t.same(merged.rateLimits, {
    ...DEFAULT_RATE_LIMITS,
    api_by_user: [
      [1, 5],
      [60, 100],
    ],
  });
  t.throws(() => configFromEnv({ RATE_LIMITING_RULES: '{' }), /not valid JSON/);
  t.throws(() => configFromEnv({ RATE_LIMITING_RULES: '{"api_by_usr": []}' }), /RATE_LIMITING/);
  t.throws(() => configFromEnv({ RATE_LIMITING_RULES: '{"api_by_ip": [[60, -1]]}' }));
  t.same(configFromEnv({ TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8' }).trustedProxies, [
    '127.0.0.1',
    '10.0.0.0/8',
  ]);
  t.end();
});
