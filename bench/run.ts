/**
 * `npm run bench -- <name>`: runs one bench. Benches are scripts, not tests: they print figures and
 * ratios and never fail a build on speed. Each one bounds itself in time and stops by itself.
 */
import { alertWordsBench } from './alert-words.bench.js';
import { editBench } from './edit.bench.js';
import { fanoutBench } from './fanout.bench.js';
import { channelsBench } from './channels.bench.js';
import { clusterBench } from './cluster.bench.js';
import { httpBench } from './http.bench.js';
import { loadBench } from './load.bench.js';
import { messagesBench } from './messages.bench.js';
import { presenceBench } from './presence.bench.js';
import { renderBench } from './render.bench.js';
import { settingsBench } from './settings.bench.js';
import { usersBench } from './users.bench.js';
import { uploadsBench } from './uploads.bench.js';

const BENCHES: Record<string, () => Promise<void>> = {
  http: httpBench,
  render: renderBench,
  fanout: fanoutBench,
  channels: channelsBench,
  users: usersBench,
  uploads: uploadsBench,
  settings: settingsBench,
  'alert-words': alertWordsBench,
  messages: messagesBench,
  edit: editBench,
  presence: presenceBench,
  load: loadBench,
  cluster: clusterBench,
};

const name = process.argv[2];
const bench = name === undefined ? undefined : BENCHES[name];
if (!bench) {
  console.error(`usage: npm run bench -- <${Object.keys(BENCHES).join('|')}>`);
  process.exit(2);
}
bench().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
