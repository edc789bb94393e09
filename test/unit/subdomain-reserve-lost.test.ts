/**
 * A subdomain reservation (src/cluster/subdomains.ts) whose create lands but whose answer is lost
 * (held by a frozen NATS server until the client's timeout), and whose look at the key, to learn
 * whether it landed, goes unanswered too; a look asked again beside it is answered. On the code
 * before, the reservation read the key once and, that look failing, threw the look's error: the
 * realm's creation failed with the subdomain held by its own reservation until the timeout.
 */
import type { KV } from 'nats';
import t from 'tap';
import { SubdomainReservations, subdomainKey } from '../../src/cluster/subdomains.js';

t.test('reserved: its create landed, the second look says so', async (t) => {
  const keys = new Map<string, { value: string; revision: number }>();
  const timeout = () =>
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(Object.assign(new Error('TIMEOUT'), { code: 'TIMEOUT' })), 4000),
    );
  let gets = 0;
  const kv = {
    create: (key: string, value: string) => {
      keys.set(key, { value, revision: 12 });
      return timeout();
    },
    get: (key: string) => {
      if (++gets === 1) return timeout();
      const e = keys.get(key);
      return Promise.resolve(
        e && { operation: 'PUT', revision: e.revision, string: () => e.value, created: new Date() },
      );
    },
  } as unknown as KV;
  const reservations = new SubdomainReservations(kv, 'n1', 'i1', 60_000, () =>
    Promise.resolve(false),
  );
  t.equal(await reservations.reserve('zephyr', 5), 12, 'its revision');
  t.ok(keys.has(subdomainKey('zephyr')));
  t.equal(gets, 2, 'the look asked again once');
});
