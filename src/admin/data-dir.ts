/**
 * What the admin tool checks of the data directory before it runs a command on it: that it
 * exists and holds a Confab database (a tool run from the wrong directory, or without the
 * server's settings, would otherwise make an empty `./data` and answer as if the server had no
 * realms; only create-realm and restore start one), and that the tool runs as the directory's
 * owner (as root it would leave `uploads/` or `tmp/` owned by root, after which the server could
 * not write there).
 */
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from './errors.js';

export const DATABASE_FILE = 'confab.sqlite3';

/** A refusal: the message says what to do instead. */
export class DataDirRefused extends Error {
  constructor(
    message: string,
    readonly code: 'NO_DATA_DIR' | 'NO_DATABASE' | 'WRONG_USER',
  ) {
    super(message);
    this.name = 'DataDirRefused';
  }
}

/** The name of the user with `uid` (from /etc/passwd), or the number. */
export function userName(uid: number): string {
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (name && Number(id) === uid) return name;
    }
  } catch {
    // no /etc/passwd: the number will do
  }
  return String(uid);
}

/**
 * Throws DataDirRefused unless `dataDir` is a directory with a database, owned by this process's
 * user. `may-create` (create-realm, and restore, which needs it empty): no database needed, nor
 * the directory itself, which is made (0700).
 */
export function checkDataDir(dataDir: string, mode: 'must-exist' | 'may-create'): void {
  let st: fs.Stats;
  try {
    st = fs.statSync(dataDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (mode === 'may-create') {
      fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      return;
    }
    throw new DataDirRefused(
      `the data directory ${dataDir} does not exist: give the tool the server's settings ` +
        '(--env-file FILE, or DATA_DIR); only create-realm (or restore) starts a new data directory',
      'NO_DATA_DIR',
    );
  }
  if (!st.isDirectory()) {
    throw new DataDirRefused(`${dataDir} is not a directory`, 'NO_DATA_DIR');
  }
  const uid = process.getuid?.();
  if (uid !== undefined && uid !== st.uid) {
    const owner = userName(st.uid);
    throw new DataDirRefused(
      `the data directory ${dataDir} belongs to ${owner}, and this is ${userName(uid)}: run the ` +
        `tool as ${owner} (sudo -u ${owner} ...), so that what it writes stays usable by the server`,
      'WRONG_USER',
    );
  }
  if (mode === 'must-exist' && !fs.existsSync(path.join(dataDir, DATABASE_FILE))) {
    throw new DataDirRefused(
      `${dataDir} holds no Confab database: give the tool the server's settings (--env-file ` +
        'FILE, or DATA_DIR); only create-realm (or restore) starts a new data directory',
      'NO_DATABASE',
    );
  }
}

/**
 * Makes `dir` and its parents (0700) for a command's output (a backup, an export archive's
 * directory), and checks that it can be written in, or throws a UsageError saying why not: a file
 * in its place or its path, or no permission. The command may run in the server (which writes what the tool asks for while it
 * runs; under systemd only in /var/lib/confab-backups), so the user who could not is named.
 */
export function makeOutputDir(dir: string, what: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOTDIR')
      throw new UsageError(
        `${what} ${dir} cannot be made: ${code === 'EEXIST' ? 'a file has that name' : 'a file stands in its path'}`,
      );
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
      const uid = process.getuid?.();
      throw new UsageError(
        `${what} ${dir} cannot be written by ${uid === undefined ? 'this user' : userName(uid)} ` +
          `(${code === 'EROFS' ? 'a read-only file system' : 'permission denied'}): choose a ` +
          'directory it can write (with the server running, the server writes it: under systemd, ' +
          'inside /var/lib/confab-backups)',
      );
    }
    throw err;
  }
}
