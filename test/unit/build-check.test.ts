/**
 * The stale-build warnings the server and the admin tool print on a terminal (src/build-check.ts):
 * in a checkout, a source newer than the build; anywhere, a missing or outdated web build; in an
 * install directory (dist/ without sources), nothing about sources.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildWarnings } from '../../src/build-check.js';

function touch(file: string, secondsAgo: number): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (!fs.existsSync(file)) fs.writeFileSync(file, '');
  const when = new Date(Date.now() - secondsAgo * 1000);
  fs.utimesSync(file, when, when);
}

t.test('a current checkout: no warning', (t) => {
  const root = t.testdir();
  touch(path.join(root, 'src/main.ts'), 100);
  touch(path.join(root, 'web/app/main.ts'), 100);
  touch(path.join(root, 'dist/src/main.js'), 50);
  touch(path.join(root, 'dist/web/index.html'), 50);
  t.same(buildWarnings(root), []);
  t.end();
});

t.test('a source or a web file edited since the build', (t) => {
  const root = t.testdir();
  touch(path.join(root, 'dist/src/main.js'), 50);
  touch(path.join(root, 'dist/.tsbuildinfo'), 50);
  touch(path.join(root, 'dist/web/index.html'), 50);
  touch(path.join(root, 'actors/realm.ts'), 10);
  touch(path.join(root, 'web/styles/app.css'), 10);
  const w = buildWarnings(root);
  t.equal(w.length, 2);
  t.match(w[0], /^actors\/realm\.ts changed since the last build/);
  t.match(w[1], /^web\/styles\/app\.css changed since the last build; `npm run build` to serve it/);
  t.end();
});

t.test('an install directory: dist/ alone', (t) => {
  const root = t.testdir();
  touch(path.join(root, 'dist/src/main.js'), 50);
  t.same(buildWarnings(root), [
    'the web app is not built (dist/web): `npm run build` to serve it.',
  ]);
  touch(path.join(root, 'dist/web/index.html'), 50);
  t.same(buildWarnings(root), [], 'no sources to compare: nothing to say');
  t.end();
});
