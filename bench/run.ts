/**
 * `npm run bench -- <name> [--quick] [options]`: runs one bench. Benches are scripts, not tests:
 * they print figures and ratios and never fail a build on speed. Each one bounds itself in time
 * and stops by itself.
 *
 * `--quick` runs any bench small and short, to check that it still works (its figures mean
 * nothing): the capacity and soak benches take it as an option; for the others it sets the size
 * options below (an option already set in the environment wins).
 *
 * `npm run bench -- compare A.json B.json` puts two capacity/soak results side by side.
 */
import { alertWordsBench } from './alert-words.bench.js';
import { capacityBench, soakBench } from './capacity.bench.js';
import { editBench } from './edit.bench.js';
import { fanoutBench } from './fanout.bench.js';
import { channelsBench } from './channels.bench.js';
import { clusterBench } from './cluster.bench.js';
import { httpBench } from './http.bench.js';
import { compareFiles } from './lib/report.js';
import { compressBench } from './compress.bench.js';
import { loadBench } from './load.bench.js';
import { memoryBench } from './memory.bench.js';
import { messagesBench } from './messages.bench.js';
import { presenceBench } from './presence.bench.js';
import { renderBench } from './render.bench.js';
import { settingsBench } from './settings.bench.js';
import { usersBench } from './users.bench.js';
import { uploadsBench } from './uploads.bench.js';
import { webBench } from './web.bench.js';

const BENCHES: Record<string, (args: string[]) => Promise<void>> = {
  http: httpBench,
  compress: compressBench,
  render: renderBench,
  fanout: fanoutBench,
  channels: channelsBench,
  users: usersBench,
  uploads: uploadsBench,
  settings: settingsBench,
  'alert-words': alertWordsBench,
  memory: memoryBench,
  messages: messagesBench,
  edit: editBench,
  presence: presenceBench,
  load: loadBench,
  capacity: capacityBench,
  soak: soakBench,
  compare: (args) => {
    const files = args.filter((a) => !a.startsWith('--'));
    if (files.length !== 2) throw new Error('usage: npm run bench -- compare A.json B.json');
    console.log(compareFiles(files[0]!, files[1]!));
    return Promise.resolve();
  },
  cluster: clusterBench,
  web: webBench,
};

/** What `--quick` sets for the benches configured through the environment. */
export const QUICK_ENV: Record<string, Record<string, string>> = {
  http: { BENCH_SECONDS: '1', BENCH_ROUNDS: '1' },
  compress: { BENCH_SECONDS: '1', BENCH_ROUNDS: '1', BENCH_USERS: '300' },
  fanout: { BENCH_USERS: '100', BENCH_ROUNDS: '2' },
  channels: { BENCH_USERS: '200', BENCH_CHANNELS: '10', BENCH_SECONDS: '1' },
  users: { BENCH_USERS: '200' },
  uploads: { BENCH_SECONDS: '1' },
  settings: { BENCH_USERS: '200', BENCH_OPS: '20' },
  'alert-words': { BENCH_MS: '100' },
  messages: {
    BENCH_SECONDS: '1',
    BENCH_FETCH_MESSAGES: '5000',
    BENCH_PAGES_WARM: '300',
    BENCH_PAGES_ROUNDS: '20',
  },
  edit: { BENCH_SECONDS: '1', BENCH_TOPIC_SIZE: '100' },
  presence: {
    BENCH_USERS: '200',
    BENCH_CONNECTIONS: '8',
    BENCH_SCALE: '200,800',
    BENCH_ACTIVE: '100',
  },
  load: {
    LOAD_USERS: '60',
    LOAD_CHANNELS: '6',
    LOAD_HISTORY: '500',
    LOAD_RATES: '20',
    LOAD_SECONDS: '2',
  },
};

const [name, ...args] = process.argv.slice(2);
const bench = name === undefined ? undefined : BENCHES[name];
if (!bench) {
  console.error(`usage: npm run bench -- <${Object.keys(BENCHES).join('|')}> [--quick]`);
  process.exit(2);
}
if (args.includes('--quick')) {
  for (const [k, v] of Object.entries(QUICK_ENV[name!] ?? {})) process.env[k] ??= v;
}
bench(args).then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
