/**
 * Which modules a child process loads, for tests of what a start costs (the admin tool's paths:
 * test/api/admin-tool.test.ts). Run `node --import <this file> ...` with LOADED_MODULES_FILE=FILE
 * in the environment: each ES module's URL is appended to FILE as the loader loads it (a hook,
 * loaded-modules-hooks.ts), and at exit those of the CommonJS modules required (a native
 * addon's package, as src/storage/sqlite.ts requires better-sqlite3), one a line. Without the
 * variable it does nothing.
 */
import fs from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const file = process.env.LOADED_MODULES_FILE;
if (file) {
  register('./loaded-modules-hooks.js', import.meta.url);
  const cache = createRequire(import.meta.url).cache;
  process.on('exit', () => {
    const urls = Object.keys(cache).map((p) => pathToFileURL(p).href);
    fs.appendFileSync(file, urls.map((u) => u + '\n').join(''));
  });
}
