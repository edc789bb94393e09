/**
 * The local cluster's ports (src/cluster/local.ts `ports`) are claimed machine-wide: a port picked
 * by one process is not handed to another while the first lives, though nothing listens on it yet
 * (a node binds its port only once caught up with the log; a killed node's port is free until it
 * is started again). CI runs two test files at once, each picking ports from the same range: a
 * supervised node whose port another test picked meanwhile never listened ("timed out waiting for
 * node n3", CI at cc4d78f). The claims live in a directory of the test's own here.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { claimPort, ports, takeoverLock } from '../../src/cluster/local.js';

const LOCAL = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'src',
  'cluster',
  'local.js',
);

/** Candidates drawn from `list` in turn (then 0: a port the kernel picks). */
const drawn = (list: number[]) => {
  let i = 0;
  return () => list[i++] ?? 0;
};

/**
 * Two ports nothing listens on now, below the ephemeral range (no outgoing connection takes them
 * meanwhile), claimed in the machine's claims for this process: no other test picks them. The
 * cases then claim them again in claims of their own.
 */
async function idlePorts(): Promise<[number, number]> {
  const [a, b] = await ports(2);
  return [a!, b!];
}

function claimsDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'port-claims-'));
}

t.test('a port another live process claimed is not handed out, though free', async (t) => {
  const dir = claimsDir();
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const [p, q] = await idlePorts();
  // Another process picks p (as another test's `up` would) and lives on.
  const other = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { ports } = await import(${JSON.stringify(LOCAL)});
       const got = await ports(1, undefined, () => ${p}, ${JSON.stringify(dir)});
       console.log(got[0]);
       setInterval(() => {}, 1000);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  t.teardown(() => other.kill('SIGKILL'));
  const said = await new Promise<string>((resolve) =>
    other.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())),
  );
  t.equal(said, String(p), 'the other process got p');
  t.same(await ports(1, undefined, drawn([p, q]), dir), [q], 'this one is handed q, not p');

  // Once the other process is gone, its claim is void.
  other.kill('SIGKILL');
  await new Promise((r) => other.once('exit', r));
  t.same(await ports(1, undefined, drawn([p]), dir), [p], "a gone process's claim is taken over");
});

t.test("a process's own claim, and a port something listens on", async (t) => {
  const dir = claimsDir();
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const [p, q] = await idlePorts();
  t.ok(claimPort(p, dir), 'claimed');
  t.ok(claimPort(p, dir), 'claimed again by the same process');
  // A claim file being written (empty for a moment) is a live claim.
  fs.writeFileSync(path.join(dir, String(q)), '');
  t.notOk(claimPort(q, dir), 'a claim being written is respected');
  // A port something listens on is skipped whatever the claims say.
  const net = await import('node:net');
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(p, '127.0.0.1', r));
  t.teardown(() => server.close());
  const [got] = await ports(1, undefined, drawn([p]), dir);
  t.not(got, p, 'a port in use is not handed out');
});

t.test('claims that cannot be written: the port is handed out unclaimed', async (t) => {
  // The claims directory made by another user (not writable here) or a read-only /tmp: `npm run
  // cluster` and the tests start as they did before claims, instead of failing on the write (a
  // path under a file stands in for it: not writable even by root).
  const [p] = await idlePorts();
  const unwritable = path.join(fs.realpathSync('/dev/null'), 'claims');
  t.ok(claimPort(p, unwritable), 'claimed without a claim file');
  t.same(await ports(1, undefined, drawn([p]), unwritable), [p], 'the free port is handed out');
});

t.test('a void claim two processes take over at once: one of them has it', async (t) => {
  // Both find the claim of a process that is gone. On the code before, each removed the claim
  // it had judged void and wrote its own: the second's removal took the first's new claim away,
  // and both were handed the port (two clusters then bound it, or failed to).
  const dir = claimsDir();
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const [p] = await idlePorts();
  const gone = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => gone.once('exit', r));
  const file = path.join(dir, String(p));
  fs.writeFileSync(file, String(gone.pid));
  // Another live process (tap's runner, say) takes it over between this one's judging it void
  // and its taking it over (one process plays both: the other's pid given by hand).
  const other = process.ppid;
  let second: boolean | null = null;
  const first = claimPort(p, dir, {
    judged: () => {
      second = claimPort(p, dir, { pid: other });
    },
  });
  t.equal(second, true, 'the other took it over first');
  t.equal(first, false, 'this one is refused');
  t.equal(fs.readFileSync(file, 'latin1'), String(other), 'the claim is the other’s');
});

t.test('a void takeover lock two processes clear at once: one of them holds it', async (t) => {
  // The lock under which a void claim is taken over (takeOver), left by a process that died
  // holding it. Another live process clears it and takes it between this one's judging it void
  // and its clearing it (one process plays both: the other's pid given by hand). On the code
  // before (a stat, then the removal of whatever lock was there), this one then removed the
  // other's fresh lock, and a third process took it while the other still held it: both took the
  // same void claim over.
  const dir = claimsDir();
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const lock = path.join(dir, '1.takeover');
  const gone = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => gone.once('exit', r));
  t.ok(takeoverLock(lock, gone.pid!), 'the process now gone took it');
  const long = new Date(Date.now() - 60_000);
  for (const f of [lock, ...fs.readdirSync(lock).map((e) => path.join(lock, e))])
    fs.utimesSync(f, long, long);

  const other = process.ppid;
  let theirs: (() => void) | null = null;
  const mine = takeoverLock(lock, process.pid, () => {
    // At most two calls: one clearing the void lock, one taking it.
    for (let i = 0; i < 2 && theirs === null; i++) theirs = takeoverLock(lock, other);
  });
  t.ok(theirs, 'the other took it');
  t.equal(mine, null, 'this one did not');
  t.equal(takeoverLock(lock, process.pid), null, 'nor does anyone while the other holds it');
  theirs!();
  const next = takeoverLock(lock, process.pid);
  t.ok(next, 'taken once the other released it');
  next?.();
  t.notOk(fs.existsSync(lock), 'and gone once released');
});
