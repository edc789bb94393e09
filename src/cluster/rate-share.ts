/**
 * Cluster-wide rate limits (docs/cluster.md "Rate limits"): each node counts the requests it lets
 * through as a single process does (src/http/rate-limits.ts) and tells every other node over plain
 * NATS (`confab.rates`), which counts them too; so a client whose requests the proxy spreads over
 * the nodes meets the single-process limits, not the node count times them.
 *
 * The login, failed-authentication and password-reset limits (a few requests per minutes) are
 * told at once; the
 * per-user and per-address API limits (hundreds a minute) in batches every SHARE_MS. A node
 * therefore lets through, beyond the single-process limit, at most the requests that reached
 * other nodes within the time a count takes to arrive: about a millisecond on one machine for the
 * login and authentication limits, SHARE_MS plus that for the API limits (tested through the
 * proxy: test/cluster/cluster-limits.test.ts). Counts are not acknowledged: a node cut off from
 * NATS limits with its own counts alone until it is back.
 */
import type { Subscription } from 'nats';
import type { LimitName, SharedLimits } from '../http/rate-limits.js';
import { pack, unpack } from '../lib/pack.js';
import type { ClusterLink } from './link.js';

/** How often the API limits' counts go to the other nodes (ms). */
export const SHARE_MS = 50;

/** Limits told at once: rare requests, where each one counted late lets one more through. */
const AT_ONCE: ReadonlySet<LimitName> = new Set([
  'authenticate_by_username',
  'failed_authentication_by_ip',
  'password_reset_by_email',
]);

type Count = [limit: LimitName, key: string | number, count: number | 'cleared'];

export class RateShare implements SharedLimits {
  private readonly pending = new Map<LimitName, Map<string | number, number>>();
  private timer: NodeJS.Timeout | null = null;
  private apply:
    ((limit: LimitName, key: string | number, count: number | 'cleared') => void) | null = null;
  private sub: Subscription | null = null;

  constructor(private readonly link: ClusterLink) {}

  attach(apply: (limit: LimitName, key: string | number, count: number | 'cleared') => void): void {
    this.apply = apply;
    const { nc, names, incarnation } = this.link;
    this.sub ??= nc.subscribe(names.rates, {
      callback: (err, msg) => {
        if (err || this.apply === null) return;
        try {
          const [from, counts] = unpack<[string, Count[]]>(msg.data);
          if (from === incarnation) return;
          for (const [limit, key, count] of counts) this.apply(limit, key, count);
        } catch (e) {
          console.error('applying rate-limit counts of another node failed', e);
        }
      },
    });
  }

  counted(limit: LimitName, key: string | number): void {
    if (AT_ONCE.has(limit)) {
      this.send([[limit, key, 1]]);
      return;
    }
    let keys = this.pending.get(limit);
    if (!keys) this.pending.set(limit, (keys = new Map<string | number, number>()));
    keys.set(key, (keys.get(key) ?? 0) + 1);
    this.timer ??= setTimeout(() => this.flush(), SHARE_MS);
    this.timer.unref();
  }

  cleared(limit: LimitName, key: string | number): void {
    this.pending.get(limit)?.delete(key); // counted before the clearing: forgotten with it
    this.send([[limit, key, 'cleared']]);
  }

  private flush(): void {
    this.timer = null;
    const counts: Count[] = [];
    for (const [limit, keys] of this.pending)
      for (const [key, n] of keys) counts.push([limit, key, n]);
    this.pending.clear();
    if (counts.length > 0) this.send(counts);
  }

  private send(counts: Count[]): void {
    const { nc, names, incarnation } = this.link;
    try {
      nc.publish(names.rates, pack([incarnation, counts]));
    } catch {
      // NATS closed (the node is stopping): the counts stay this node's
    }
  }

  close(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.flush();
    this.sub?.unsubscribe();
    this.sub = null;
  }
}
