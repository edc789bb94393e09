// Runs before `npm start` and `npm run manage` (prestart, premanage): they run dist/, so say so
// when it is missing, or older than the sources (a checkout or an edit since the last build).
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

if (!existsSync('dist/src/main.js')) {
  console.error('Confab is not built: run `npm run build` (npm ci builds too).');
  process.exit(1);
}
const built = statSync('dist/src/main.js').mtimeMs;
function newer(dir) {
  if (!existsSync(dir)) return null;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      const hit = newer(p);
      if (hit) return hit;
    } else if (e.name.endsWith('.ts') && statSync(p).mtimeMs > built) return p;
  }
  return null;
}
const changed = newer('src') ?? newer('actors') ?? newer('workers');
if (changed) {
  console.error(`warning: ${changed} changed since the last build; \`npm run build\` to run it.`);
}
// The web app (dist/web, served at /): built by `npm run build` too.
if (!existsSync('dist/web/index.html')) {
  console.error('warning: the web app is not built (dist/web): `npm run build` to serve it.');
} else {
  const webBuilt = statSync('dist/web/index.html').mtimeMs;
  const webChanged = (function newerThan(dir) {
    if (!existsSync(dir)) return null;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        const hit = newerThan(p);
        if (hit) return hit;
      } else if (statSync(p).mtimeMs > webBuilt) return p;
    }
    return null;
  })('web');
  if (webChanged) {
    console.error(
      `warning: ${webChanged} changed since the last build; \`npm run build\` to serve it.`,
    );
  }
}
