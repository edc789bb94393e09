/**
 * The local cluster's nginx configuration (src/cluster/local.ts nginxConfig): every server of every
 * upstream, the per-node ones (an event queue's node first, the others as its backups) as well as
 * `all`, is left out for 2 s after a failure, not nginx's default 10 s (max_fails=1
 * fail_timeout=10s): a node that restarted was unreachable through nginx for up to 10 s, its
 * queues' requests answered by a backup (BAD_EVENT_QUEUE_ID, the client registering again).
 * test/deploy/cluster-nginx.test.ts checks the same with the real nginx.
 */
import t from 'tap';
import { nginxConfig } from '../../src/cluster/local.js';

const nodes = [
  { name: 'node1', port: 24001 },
  { name: 'node2', port: 24002 },
  { name: 'node3', port: 24003 },
];

/** Each upstream block's name and its `server` entries. */
function upstreams(conf: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of conf.matchAll(/upstream (\S+) \{([^}]*)\}/g))
    out.set(
      m[1]!,
      m[2]!
        .split(';')
        .map((s) => s.trim())
        .filter((s) => s.startsWith('server ')),
    );
  return out;
}

for (const queuesOn of [undefined, 'node2']) {
  t.test(`every upstream server: fail_timeout=2s (queues on ${queuesOn ?? 'any node'})`, (t) => {
    const found = upstreams(nginxConfig('/tmp/cluster', 24000, nodes, queuesOn));
    t.same([...found.keys()].sort(), ['all', 'node1', 'node2', 'node3'], 'the upstreams');
    for (const [name, servers] of found) {
      t.equal(servers.length, nodes.length, `${name}: a server per node`);
      const without = servers.filter((s) => !/\sfail_timeout=2s(\s|$)/.test(s));
      t.same(without, [], `${name}: each left out for 2 s after a failure`);
    }
    const node1 = found.get('node1')!;
    t.match(node1[0], /^server 127\.0\.0\.1:24001(\s|$)/, "node1's upstream: node1 first");
    t.ok(
      node1.slice(1).every((s) => /\sbackup(\s|$)/.test(s)),
      'the other nodes as its backups',
    );
    t.end();
  });
}
