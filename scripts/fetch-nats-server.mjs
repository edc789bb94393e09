// `npm run fetch-nats-server`: puts a nats-server recent enough for a Confab cluster at
// .cache/nats-server/nats-server, which the local cluster (`npm run cluster`) and the cluster tests
// use before any nats-server on the PATH, and prints its path.
//
// Why: nats-server before 2.9.21 may accept two concurrent writes to a replicated stream that both
// expect the same last sequence on one subject (nats-server issue 4320), and a cluster's leases,
// id blocks and log fencing rest on that check (docs/cluster.md "NATS version"). Debian 12 ships
// 2.9.10. Debian 13's package (2.10.27: a static Go binary, which runs on Debian 12 too) is
// fetched from Debian's archive, checked against the SHA-256 Debian publishes for it, and
// unpacked with dpkg-deb, not installed. amd64 only; elsewhere install nats-server >= 2.9.21.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const dest = path.join(root, '.cache', 'nats-server');
const version = '2.10.27-1+b2';
const sha256 = '6d913ac987b78734c08537c2adeb1526cf735f216173a9170d94b185fcfe6f8a';
const url = `http://deb.debian.org/debian/pool/main/n/nats-server/nats-server_${version}_amd64.deb`;
const bin = path.join(dest, 'nats-server');
const stamp = path.join(dest, 'version');

if (fs.existsSync(bin) && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === version) {
  console.log(bin);
  process.exit(0);
}
if (process.arch !== 'x64' || process.platform !== 'linux') {
  console.error('fetch-nats-server: linux amd64 only; install nats-server 2.9.21 or later');
  process.exit(1);
}
const res = await fetch(url);
if (!res.ok) {
  console.error(`fetch-nats-server: ${url}: ${res.status}`);
  process.exit(1);
}
const deb = Buffer.from(await res.arrayBuffer());
const got = crypto.createHash('sha256').update(deb).digest('hex');
if (got !== sha256) {
  console.error(`fetch-nats-server: ${url}: SHA-256 ${got}, expected ${sha256}`);
  process.exit(1);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-deb-'));
try {
  fs.writeFileSync(path.join(tmp, 'nats.deb'), deb);
  const x = spawnSync('dpkg-deb', ['-x', path.join(tmp, 'nats.deb'), path.join(tmp, 'x')], {
    stdio: 'inherit',
  });
  if (x.status !== 0) {
    console.error('fetch-nats-server: dpkg-deb could not unpack the package');
    process.exit(1);
  }
  fs.mkdirSync(dest, { recursive: true });
  fs.copyFileSync(path.join(tmp, 'x', 'usr', 'sbin', 'nats-server'), `${bin}.new`);
  fs.chmodSync(`${bin}.new`, 0o755);
  fs.renameSync(`${bin}.new`, bin);
  fs.writeFileSync(stamp, version);
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
spawnSync(bin, ['--version'], { stdio: ['ignore', 'inherit', 'inherit'] });
console.log(bin);
