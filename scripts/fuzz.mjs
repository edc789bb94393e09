// `npm run fuzz`: the fuzz suite alone, with no time limit per file, on a fresh random seed unless
// CONFAB_FUZZ_SEED names one (printed first, to repeat the run). CONFAB_FUZZ_RUNS=N runs N times
// the cases of the CI run (docs/robustness.md "Fuzzing"). Exits with tap's status.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';

const FILES = [
  'dist/test/api/fuzz-endpoints-a.test.js',
  'dist/test/api/fuzz-endpoints-b.test.js',
  'dist/test/api/fuzz-endpoints-c.test.js',
  'dist/test/api/fuzz-endpoints-d.test.js',
  'dist/test/api/fuzz-http.test.js',
  'dist/test/api/cut-bodies-sweep.test.js',
  'dist/test/api/cut-bodies-random.test.js',
  'dist/test/api/narrows-property.test.js',
  'dist/test/unit/parsers-property.test.js',
  'dist/test/delivery/buffer-property.test.js',
];

const seed = process.env.CONFAB_FUZZ_SEED ?? String(crypto.randomInt(1, 2 ** 31));
const runs = process.env.CONFAB_FUZZ_RUNS ?? '1';
console.log(`fuzz: CONFAB_FUZZ_SEED=${seed} CONFAB_FUZZ_RUNS=${runs}`);
const build = spawnSync('npx', ['--no-install', 'tsc', '-p', '.'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const run = spawnSync('npx', ['--no-install', 'tap', '--timeout', '0', ...FILES], {
  stdio: 'inherit',
  env: { ...process.env, CONFAB_FUZZ_SEED: seed, CONFAB_FUZZ_RUNS: runs },
});
console.log(`fuzz: CONFAB_FUZZ_SEED=${seed} CONFAB_FUZZ_RUNS=${runs} (repeat with these)`);
process.exit(run.status ?? 1);
