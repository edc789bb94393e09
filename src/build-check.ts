/**
 * Whether the build is current, said on stderr when the server (src/main.ts), the admin tool
 * (src/manage.ts) or the cluster tool start: they run dist/, which `npm run build` (and `npm ci`)
 * makes. In a checkout, a source file newer than the build means an edit not built yet; in an
 * install directory (package.json, node_modules/ and dist/ only: docs/operations.md "Install and
 * build") there are no sources to compare, only the web app's build to look for. Part of dist/
 * itself, so that it works wherever dist/ does, with nothing else beside it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory holding dist/ (a checkout, or an install directory). */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The first file under `dir` (with `ext`, if given) modified after `since`, relative to `root`. */
function newerThan(root: string, dir: string, since: number, ext?: string): string | null {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return null;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name === 'node_modules') continue;
      const hit = newerThan(root, p, since, ext);
      if (hit) return hit;
    } else if ((ext === undefined || e.name.endsWith(ext)) && fs.statSync(p).mtimeMs > since) {
      return path.relative(root, p);
    }
  }
  return null;
}

/** The warnings for this build (empty when it is current). */
export function buildWarnings(root = ROOT): string[] {
  const warnings: string[] = [];
  // The compiler rewrites only what changed, and its build info at every build.
  const info = path.join(root, 'dist/.tsbuildinfo');
  const main = path.join(root, 'dist/src/main.js');
  if (fs.existsSync(main)) {
    const built = Math.max(
      fs.statSync(main).mtimeMs,
      fs.existsSync(info) ? fs.statSync(info).mtimeMs : 0,
    );
    for (const dir of ['src', 'actors', 'workers']) {
      const changed = newerThan(root, path.join(root, dir), built, '.ts');
      if (changed) {
        warnings.push(`${changed} changed since the last build; \`npm run build\` to run it.`);
        break;
      }
    }
  }
  const index = path.join(root, 'dist/web/index.html');
  if (!fs.existsSync(index)) {
    warnings.push('the web app is not built (dist/web): `npm run build` to serve it.');
  } else {
    const changed = newerThan(root, path.join(root, 'web'), fs.statSync(index).mtimeMs);
    if (changed)
      warnings.push(`${changed} changed since the last build; \`npm run build\` to serve it.`);
  }
  return warnings;
}

/** Writes the warnings to stderr, for a person at a terminal (a script gets its output alone). */
export function warnIfStale(): void {
  if (!process.stderr.isTTY) return;
  for (const w of buildWarnings()) process.stderr.write(`warning: ${w}\n`);
}
