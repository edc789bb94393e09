/**
 * Realm exports on a test cluster (upForTest), as its first realm's owner, through each node:
 * what test/cluster/cluster-exports.test.ts and export-time-limit.test.ts ask and poll.
 */
import type { Test } from 'tap';
import type { ClusterRecord } from '../../src/cluster/local.js';
import { ApiClient, assertSuccess } from './api.js';
import { kvString } from './cluster-kv.js';

/** An export as GET /export/realm lists it. */
export type Listed = {
  id: number;
  pending: boolean;
  failed_timestamp: number | null;
  export_url: string | null;
};

/** An export's state as a node shows it ('unknown': no answer, say a read barrier's 503). */
export type ExportState = 'pending' | 'failed' | 'succeeded' | 'unknown';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function clusterExports(rec: ClusterRecord) {
  const fx = {
    realmId: 1,
    users: { owner: { id: 0, ...rec.owner, role: 100 as const } },
    notificationBotId: 0,
  };
  /** The owner's client of node `name` (n1, n2, n3), not through the proxy. */
  const via = (name: string) =>
    new ApiClient(`http://127.0.0.1:${rec.nodes.find((n) => n.name === name)!.port}`, fx);

  /** Export `id` as node `name` shows it. */
  const stateOn = async (name: string, id: number): Promise<ExportState> => {
    const r = await via(name).get('owner', 'export/realm');
    if (r.status !== 200) return 'unknown';
    const e = (r.body.exports as Listed[]).find((x) => x.id === id);
    if (!e) return 'unknown';
    if (e.pending) return 'pending';
    if (e.failed_timestamp !== null) return 'failed';
    return e.export_url !== null ? 'succeeded' : 'unknown';
  };

  /** Asks for an export through node `name`; its id, once the lease bucket names its runner. */
  const requestOn = async (t: Test, name: string): Promise<number> => {
    const { id } = assertSuccess(t, await via(name).post('owner', 'export/realm', {}), name) as {
      id: number;
    };
    // Recorded before the request was answered.
    const runner = await kvString(rec, `export.${id}`);
    t.equal(runner && (JSON.parse(runner) as { node: string }).node, name, `${name} runs ${id}`);
    return id;
  };

  /**
   * Polls export `id` on `nodes` until each shows it finished (or `ms` passed): each node's
   * first finished state, when it came (ms after `since`), and whether any showed it failed.
   */
  const watch = async (nodes: string[], id: number, since: number, ms: number) => {
    const seen = new Map<string, { state: ExportState; after: number }>();
    let everFailed = false;
    for (const until = Date.now() + ms; Date.now() < until && seen.size < nodes.length;) {
      for (const n of nodes) {
        if (seen.has(n)) continue;
        const s = await stateOn(n, id);
        if (s === 'failed') everFailed = true;
        if (s === 'failed' || s === 'succeeded')
          seen.set(n, { state: s, after: Date.now() - since });
      }
      await sleep(250);
    }
    return { seen, everFailed };
  };

  /** Whether the lease bucket's `key` is gone within `ms`. */
  const gone = async (key: string, ms: number): Promise<boolean> => {
    for (const until = Date.now() + ms; ; await sleep(100)) {
      if ((await kvString(rec, key)) === null) return true;
      if (Date.now() > until) return false;
    }
  };

  return { via, stateOn, requestOn, watch, gone };
}
