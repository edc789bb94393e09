/**
 * The web app's first-load JavaScript (docs/web.md, "Budgets and figures"), from the build in
 * dist/web (`npm run build`): the page's script and the chunks it preloads (index.html), their
 * gzip siblings' sizes summed, as `npm run build` prints it. The parts loaded when first used
 * (web/app/lazy.tsx) are not in it: a marker of each (a class name only its code has) is in no
 * first-load file, and is in some file the build made.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const WEB = path.join(REPO, 'dist/web');

/** The budget (docs/web.md). */
const BUDGET = 60 * 1024;
/**
 * The first load's files: the page's script and one chunk of everything it imports (main.tsx,
 * firstLoad, re-exported by every module imported dynamically; a piece that lacks it splits the
 * first load into a chunk per set of pieces sharing a part of it, each compressed alone).
 */
const MAX_FILES = 2;

/** Markers of code loaded when first used: in no first-load file. */
const LAZY = {
  'the channel dialogs': 'dialog channel-dialog',
  'the status dialog': 'dialog status-dialog',
  'the message dialogs': 'message-dialog ',
  'the emoji picker': 'picker-grid',
  'the profile card': 'card-facts',
  'the message list': 'new-below',
  'a message row': 'msg-menu-btn',
  'the compose box': 'compose-bar',
  'the settings': 'settings-part',
  'Jump (Ctrl+K)': 'jump-options',
  'Recent conversations': 'recent-toggle',
};

function firstLoad(): string[] {
  const html = fs.readFileSync(path.join(WEB, 'index.html'), 'utf8');
  return [
    ...html.matchAll(/<(?:script type="module" src|link rel="modulepreload" href)="([^"]+)"/g),
  ].map((m) => m[1]!);
}

t.test('first-load JavaScript, gzip', (t) => {
  const files = firstLoad();
  t.ok(files.length >= 1 && files[0]!.startsWith('/static/app-'), 'the app’s script first');
  const sizes = files.map((f) => fs.statSync(path.join(WEB, f) + '.gz').size);
  const total = sizes.reduce((a, b) => a + b, 0);
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  t.comment(`first load ${kb(total)}: ${files.map((f, i) => `${f} ${kb(sizes[i]!)}`).join(', ')}`);
  t.ok(total <= BUDGET, `${kb(total)} ≤ ${kb(BUDGET)}, the budget`);
  t.ok(files.length <= MAX_FILES, `${files.length} files ≤ ${MAX_FILES}`);
  t.end();
});

t.test('what loads when first used is not in the first load', (t) => {
  const first = firstLoad().map((f) => fs.readFileSync(path.join(WEB, f), 'utf8'));
  const all = fs
    .readdirSync(path.join(WEB, 'static'))
    .filter((f) => f.endsWith('.js'))
    .map((f) => fs.readFileSync(path.join(WEB, 'static', f), 'utf8'));
  for (const [what, marker] of Object.entries(LAZY)) {
    t.ok(
      all.some((text) => text.includes(marker)),
      `${what} (“${marker}”) is in the build`,
    );
    t.notOk(
      first.some((text) => text.includes(marker)),
      `${what} is not in the first load`,
    );
  }
  t.end();
});
