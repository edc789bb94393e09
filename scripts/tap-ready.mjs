// Builds tap's test module for the plugins .taprc names (`tap build`) when it was built for others,
// as it is after `npm ci`. tap rebuilds it itself on a run that finds it stale, but that run's
// test processes still get the loaders of the plugins it was built with: the default set's
// TypeScript and mock loaders (`--import`), which .taprc turns off. In CI that made every module
// load of every test file go through them (the server's import took about 3x the CPU time).
// `npm test` and the runtimes check run this first; when the build matches it does nothing.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { TapConfig } from '@tapjs/config';
import { signature } from '@tapjs/test';

const config = await TapConfig.load();
if (config.pluginSignature !== signature) {
  const tap = createRequire(import.meta.url)
    .resolve('tap/package.json')
    .replace(/package\.json$/, 'dist/esm/run.mjs');
  console.log('tap-ready: building tap for the plugins in .taprc (tap build)');
  const r = spawnSync(process.execPath, [tap, 'build'], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
