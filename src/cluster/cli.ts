/**
 * `npm run cluster -- up --nodes 3 --dir DIR [--base-port P] [--seed DATA_DIR]`: a NATS cluster
 * with JetStream, N Confab nodes and nginx in front, on loopback; prints one JSON line with the
 * base URL and the first realm's owner credentials. With --seed, node 1 starts on a copy of a
 * (stopped) single-process data directory and moves it onto the cluster (CLUSTER_SEED): no first
 * realm is created, the copy's realms and users are the cluster's.
 * `npm run cluster -- kill-node N --dir DIR`: SIGKILLs node N (failover drills).
 * `npm run cluster -- start-node N --dir DIR [--empty]`: starts node N again (empty: from nothing).
 * `npm run cluster -- down --dir DIR`: stops everything `up` started.
 */
import { parseArgs } from 'node:util';
import { down, killNode, missingEngines, startNodeAgain, up } from './local.js';

const USAGE = `usage: npm run cluster -- up --nodes N --dir DIR [--base-port P] [--seed DATA_DIR]
       npm run cluster -- kill-node N --dir DIR
       npm run cluster -- start-node N --dir DIR [--empty]
       npm run cluster -- down --dir DIR`;

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      nodes: { type: 'string', default: '3' },
      dir: { type: 'string' },
      'base-port': { type: 'string' },
      seed: { type: 'string' },
      empty: { type: 'boolean', default: false },
    },
  });
  const [command, arg] = positionals;
  const dir = values.dir;
  if (!command || !dir) throw new Error(USAGE);
  const nodeNumber = () => {
    const n = Number(arg);
    if (!Number.isInteger(n) || n < 1) throw new Error(USAGE);
    return n;
  };
  switch (command) {
    case 'up': {
      const missing = missingEngines();
      if (missing)
        throw new Error(`${missing} is not installed (apt-get install -y nats-server nginx)`);
      const nodes = Number(values.nodes);
      if (!Number.isInteger(nodes) || nodes < 1 || nodes > 5) throw new Error('--nodes: 1 to 5');
      const basePort = values['base-port'] !== undefined ? Number(values['base-port']) : undefined;
      const seedFrom = values.seed;
      const rec = await up({
        dir,
        nodes,
        ...(basePort !== undefined ? { basePort } : {}),
        ...(seedFrom !== undefined ? { seedFrom } : {}),
      });
      console.log(
        JSON.stringify({
          url: rec.url,
          ...(seedFrom === undefined
            ? { owner: { email: rec.owner.email, api_key: rec.owner.api_key } }
            : {}),
        }),
      );
      return;
    }
    case 'kill-node':
      await killNode(dir, nodeNumber());
      return;
    case 'start-node':
      await startNodeAgain(dir, nodeNumber(), values.empty);
      return;
    case 'down':
      await down(dir);
      return;
    default:
      throw new Error(USAGE);
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
