/**
 * The admin tool's commands import what they run on with import() when they run (commands.ts
 * "Loading"), and the server loads all of it at its start (service.ts's side-effect imports), so
 * that a command it runs never reads code from dist/ (an upgrade may have replaced it). The two
 * lists are kept in step by hand (46d8474, feb1ff1): this test reads the compiled command modules
 * and service.js and fails when they drift, either way: a module a command imports with import()
 * that the server does not load at its start, or one the server loads that no command imports
 * (a stale entry). Checked by removing `import './backup.js'` from service.ts (fails), and by
 * adding `import './archive.js'` (fails).
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { DIST_SRC } from '../helpers/plain-node.js';

const ADMIN = path.join(DIST_SRC, 'admin');

/** The command modules (commands.ts's table is made of them): commands.js and every *-commands.js. */
const COMMAND_MODULES = fs
  .readdirSync(ADMIN)
  .filter((f) => f === 'commands.js' || f.endsWith('-commands.js'));

/**
 * Modules a command imports only in the tool's own process (its `runLocal`, which the server never
 * runs): the server need not load them. check-config reads the environment the tool was given.
 */
const TOOL_ONLY = new Set([path.join(ADMIN, 'check-config.js')]);

/** The relative specifiers of `import('...')` (dynamic) in `file`, resolved to absolute paths. */
function dynamicImports(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g)].map((m) =>
    path.resolve(path.dirname(file), m[1]!),
  );
}

/** The relative specifiers of side-effect imports (`import './x.js';`) in `file`, resolved. */
function sideEffectImports(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/^import\s+['"](\.{1,2}\/[^'"]+)['"];/gm)].map((m) =>
    path.resolve(path.dirname(file), m[1]!),
  );
}

const rel = (f: string) => path.relative(DIST_SRC, f);

t.test('the server loads at its start what the commands import when they run', (t) => {
  t.ok(COMMAND_MODULES.length >= 5, `command modules: ${COMMAND_MODULES.join(', ')}`);
  const imported = new Set<string>();
  for (const m of COMMAND_MODULES)
    for (const f of dynamicImports(path.join(ADMIN, m))) if (!TOOL_ONLY.has(f)) imported.add(f);
  // What those import() in turn is loaded lazily as well: followed until nothing new.
  for (const f of imported) for (const g of dynamicImports(f)) imported.add(g);
  const preloaded = new Set(sideEffectImports(path.join(ADMIN, 'service.js')));
  t.ok(imported.size >= 5, `the commands import ${imported.size} modules when they run`);
  for (const f of [...imported].sort())
    t.ok(preloaded.has(f), `service.ts loads ${rel(f)} (a command imports it when it runs)`);
  for (const f of [...preloaded].sort())
    t.ok(imported.has(f), `service.ts's ${rel(f)} is imported by a command when it runs`);
  for (const f of TOOL_ONLY) t.ok(fs.existsSync(f), `${rel(f)} (tool only) exists`);
  t.end();
});
