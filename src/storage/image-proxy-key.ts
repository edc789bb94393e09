/**
 * The image proxy's signing key: DATA_DIR/image_proxy_key, made on first start (32 random bytes,
 * hex), readable by the server's user only (mode 0600), kept across restarts so that the URLs in
 * messages already rendered keep working.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export function loadImageProxyKey(dataDir: string): string {
  const file = path.join(dataDir, 'image_proxy_key');
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
  if (!/^[0-9a-f]{32,}$/.test(key)) throw new Error(`${file} does not hold a key`);
  return key;
}
