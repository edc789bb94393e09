/**
 * The image proxy's signing key: DATA_DIR/image_proxy_key, made on first start (32 random bytes,
 * hex), readable by the server's user only (mode 0600), kept across restarts so that the URLs in
 * messages already rendered keep working.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const KEY_FILE = 'image_proxy_key';
const KEY = /^[0-9a-f]{32,}$/;

export function loadImageProxyKey(dataDir: string): string {
  const file = path.join(dataDir, KEY_FILE);
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    const fd = fs.openSync(
      file,
      fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL,
      0o600,
    );
    try {
      fs.writeSync(fd, crypto.randomBytes(32).toString('hex') + '\n');
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  if ((fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, 0o600);
  const key = fs.readFileSync(file, 'utf8').trim();
  if (!KEY.test(key)) throw new Error(`${file} does not hold a key`);
  return key;
}

/**
 * Puts `key` in DATA_DIR/image_proxy_key (0600, written aside and renamed) in place of what is
 * there (a cluster's key, for a detached node's directory); whether the file changed.
 */
export function storeImageProxyKey(dataDir: string, key: string): boolean {
  if (!KEY.test(key)) throw new Error('not an image-proxy key');
  const file = path.join(dataDir, KEY_FILE);
  let local: string | null = null;
  try {
    local = fs.readFileSync(file, 'utf8').trim();
  } catch {
    // none yet
  }
  if (local === key) return false;
  const tmp = `${file}.${crypto.randomBytes(6).toString('hex')}`;
  const fd = fs.openSync(tmp, 'wx', 0o600);
  try {
    fs.writeSync(fd, key + '\n');
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  return true;
}
