/**
 * The icon-only close button is one shared component (web/app/bits.tsx CloseButton): no view
 * writes its own (a button named "Close…" by aria-label), so that its look, its name and its
 * behaviour stay one. Checked on the sources, as a linter would: the views are not compiled for
 * these tests. Their look before and after: test/browser/app-a11y's screenshots.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const APP = path.join(fileURLToPath(new URL('../../..', import.meta.url)), 'web', 'app');
const files = fs.readdirSync(APP).filter((f) => f.endsWith('.tsx'));

t.test('no view writes its own close button', (t) => {
  const own: string[] = [];
  for (const f of files) {
    if (f === 'bits.tsx') continue;
    const text = fs.readFileSync(path.join(APP, f), 'utf8');
    for (const m of text.matchAll(/aria-label=(?:"|\{?`|\{')Close\b/g)) {
      const line = text.slice(0, m.index).split('\n').length;
      own.push(`${f}:${line}`);
    }
  }
  t.same(own, [], 'every icon-only close button is a CloseButton');
  t.end();
});
