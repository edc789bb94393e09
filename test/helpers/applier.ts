/**
 * A log applier (src/cluster/log-applier.ts) on a hand-played link, for unit and NATS tests: the
 * rest of the node stubbed (no rows to apply, no queues, no hooks); `died` collects its `die`
 * reasons and `applied()` the last position it recorded.
 */
import type { ClusterLink } from '../../src/cluster/link.js';
import { LogApplier } from '../../src/cluster/log-applier.js';

export function stubbedApplier(link: ClusterLink): {
  applier: LogApplier;
  died: string[];
  applied: () => number;
} {
  const died: string[] = [];
  let applied = 0;
  const applier = new LogApplier({
    link,
    replication: {
      state: () => ({ applied: 0, unacked: 0 }),
      markApplied: (seq: number) => void (applied = seq),
      flushApplied: () => undefined,
    } as never,
    ids: { withoutBlocksSync: <T>(f: () => T) => f() } as never,
    queues: { publish: () => undefined, endSessions: () => undefined } as never,
    hooks: {},
    mine: () => false,
    mineInLog: () => undefined,
    displaced: () => null,
    applied: () => undefined,
    die: (reason) => void died.push(reason),
  });
  return { applier, died, applied: () => applied };
}
