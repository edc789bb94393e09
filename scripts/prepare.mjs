// `npm ci` / `npm install` run this (the `prepare` script): build once (the server with tsc, the
// web app with tsc's typecheck and esbuild), so `npm start` and `npm run manage` run the compiled
// JavaScript without compiling anything.
// A production install (`npm ci --omit=dev`) has no TypeScript: it must come with dist/ built.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let tsc = null;
try {
  tsc = require.resolve('typescript/bin/tsc');
} catch {
  // no dev dependencies
}
if (tsc === null) {
  if (!existsSync('dist/src/main.js') || !existsSync('dist/web/index.html')) {
    console.error(
      'Confab: no TypeScript and no dist/: build first (npm ci && npm run build), then install without dev dependencies.',
    );
    process.exit(1);
  }
  process.exit(0);
}
for (const args of [[tsc, '-p', '.'], [tsc, '-p', 'web'], ['scripts/build-web.mjs']]) {
  const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
