/**
 * `npm run cluster -- up --nodes 3 --dir DIR [--base-port P] [--seed DATA_DIR]`: a NATS cluster
 * with JetStream, N Confab nodes and nginx in front, on loopback; prints one JSON line with the
 * base URL and the first realm's owner credentials. With --seed, node 1 starts on a copy of a
 * (stopped) single-process data directory and moves it onto the cluster (CLUSTER_SEED): no first
 * realm is created, the copy's realms and users are the cluster's.
 * Each node runs under a supervisor that starts it again when it exits (src/cluster/supervise.ts;
 * --no-supervise: not).
 * `npm run cluster -- kill-node N --dir DIR`: SIGKILLs node N (failover drills; its supervisor
 * starts it again). `freeze-node N`/`thaw-node N`: SIGSTOP/SIGCONT it.
 * `npm run cluster -- kill-nats N --dir DIR`, `freeze-nats N`, `thaw-nats N`: SIGKILL, SIGSTOP,
 * SIGCONT NATS server N; `start-nats N` starts a killed one again on its store.
 * `npm run cluster -- start-node N --dir DIR [--empty]`: starts node N again (empty: from nothing).
 * `npm run cluster -- down --dir DIR`: stops everything `up` started.
 * `npm run cluster -- detach --data-dir DIR`: turns a stopped node's data directory into a
 * single-process one (src/cluster/detach.ts), NATS reached as the node reaches it (CLUSTER_NATS,
 * CLUSTER_NAMESPACE); prints one JSON line.
 */
import { parseArgs } from 'node:util';
import { warnIfStale } from '../build-check.js';
import { detach } from './detach.js';
import { clusterNames } from './jetstream.js';
import {
  down,
  killNode,
  missingEngines,
  signalNats,
  signalNode,
  startNatsAgain,
  startNodeAgain,
  up,
} from './local.js';

const USAGE = `usage: npm run cluster -- up --nodes N --dir DIR [--base-port P] [--seed DATA_DIR]
                                   [--no-supervise]
       npm run cluster -- kill-node|freeze-node|thaw-node N --dir DIR
       npm run cluster -- kill-nats|freeze-nats|thaw-nats|start-nats N --dir DIR
       npm run cluster -- start-node N --dir DIR [--empty]
       npm run cluster -- down --dir DIR
       npm run cluster -- detach --data-dir DIR   (CLUSTER_NATS, CLUSTER_NAMESPACE as the node's)`;

const COMMANDS = [
  'up',
  'kill-node',
  'freeze-node',
  'thaw-node',
  'kill-nats',
  'freeze-nats',
  'thaw-nats',
  'start-nats',
  'start-node',
  'down',
  'detach',
];

async function main(): Promise<void> {
  warnIfStale();
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      help: { type: 'boolean', default: false },
      nodes: { type: 'string', default: '3' },
      dir: { type: 'string' },
      'base-port': { type: 'string' },
      seed: { type: 'string' },
      empty: { type: 'boolean', default: false },
      'no-supervise': { type: 'boolean', default: false },
      'data-dir': { type: 'string' },
    },
  });
  const [command, arg] = positionals;
  if (values.help) {
    // The options were parsed (an unknown one is refused); a command, if given, must exist.
    if (command !== undefined && !COMMANDS.includes(command)) throw new Error(USAGE);
    console.log(USAGE);
    return;
  }
  if (command === 'detach') {
    const dataDir = values['data-dir'];
    const servers = (process.env.CLUSTER_NATS ?? '').split(',').filter((s) => s !== '');
    if (!dataDir) throw new Error(USAGE);
    if (servers.length === 0) throw new Error('CLUSTER_NATS is required (the NATS URLs)');
    const names = clusterNames(process.env.CLUSTER_NAMESPACE ?? '');
    console.log(JSON.stringify(await detach({ servers, names, dataDir })));
    return;
  }
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
        supervise: !values['no-supervise'],
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
    case 'freeze-node':
      signalNode(dir, nodeNumber(), 'SIGSTOP');
      return;
    case 'thaw-node':
      signalNode(dir, nodeNumber(), 'SIGCONT');
      return;
    case 'kill-nats':
      await signalNats(dir, nodeNumber(), 'SIGKILL');
      return;
    case 'freeze-nats':
      await signalNats(dir, nodeNumber(), 'SIGSTOP');
      return;
    case 'thaw-nats':
      await signalNats(dir, nodeNumber(), 'SIGCONT');
      return;
    case 'start-nats':
      await startNatsAgain(dir, nodeNumber());
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
  // parseArgs: an unknown or malformed option; a usage error likewise exits 2.
  const usage = (err instanceof TypeError && 'code' in err) || (err as Error).message === USAGE;
  process.exit(usage ? 2 : 1);
});
