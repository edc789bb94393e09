/**
 * The SQLite binding, chosen for the running Node (docs/operations.md "Runtimes"):
 * better-sqlite3 12, compiled at `npm ci` against the running Node's headers, on Node 20 and 22;
 * better-sqlite3 13 (a Node-API build shipped prebuilt, installed as `better-sqlite3-napi`) on
 * Node 24 and later, where 12 aborts when a statement is collected outside a JavaScript context
 * (Node 24.19 changed `node::ObjectWrap`). 13 needs Node-API 10, which Node 20 never had. Both
 * have the same API; the types are 12's.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

export type SqlitePackage = 'better-sqlite3' | 'better-sqlite3-napi';

/** The binding for a Node version (`process.versions.node`) and its Node-API level. */
export function sqlitePackageFor(nodeVersion: string, napi: number): SqlitePackage {
  const major = Number(nodeVersion.split('.')[0]);
  return major >= 24 && napi >= 10 ? 'better-sqlite3-napi' : 'better-sqlite3';
}

export const SQLITE_PACKAGE = sqlitePackageFor(
  process.versions.node,
  Number(process.versions.napi ?? 0),
);

function load(): typeof BetterSqlite3 {
  const require = createRequire(import.meta.url);
  try {
    return require(SQLITE_PACKAGE) as typeof BetterSqlite3;
  } catch (err) {
    throw new Error(
      `Node ${process.versions.node} needs the SQLite binding ${SQLITE_PACKAGE}, which did not ` +
        `load (${(err as Error).message.split('\n')[0]}); run \`npm ci\` with this Node ` +
        '(docs/operations.md "Runtimes")',
      { cause: err },
    );
  }
}

const Database = load();
export default Database;
