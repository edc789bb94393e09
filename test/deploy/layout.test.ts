/**
 * The install directory docs/operations.md describes ("Install and build"): package.json,
 * node_modules/ and dist/, nothing else (no sources, no scripts/). `npm start` serves from it and
 * the admin tool works in it, as documented: `npm run -s manage -- …` prints the one JSON object
 * alone on stdout (without -s, npm's own banner comes first), so its output can be piped.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { rawRequest } from '../helpers/api.js';

t.setTimeout(300_000);

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const npm = spawnSync('npm', ['--version'], { encoding: 'utf8' });

/** npm with the test runner's hooks left out of NODE_OPTIONS. */
function npmEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.NODE_OPTIONS;
  for (const k of Object.keys(env)) if (k.startsWith('TAP') || k.startsWith('npm_')) delete env[k];
  return env;
}

function runNpm(cwd: string, args: string[], env: Record<string, string>) {
  return spawnSync('npm', args, { cwd, env: npmEnv(env), encoding: 'utf8' });
}

t.test('npm start and the admin tool in an install directory', async (t) => {
  if (npm.status !== 0) {
    t.pass('skipped: no npm on the PATH');
    return;
  }
  const dir = t.testdir();
  const app = path.join(dir, 'confab');
  fs.mkdirSync(app);
  fs.copyFileSync(path.join(REPO, 'package.json'), path.join(app, 'package.json'));
  fs.cpSync(path.join(REPO, 'dist'), path.join(app, 'dist'), {
    recursive: true,
    // The tests are no part of an install.
    filter: (src) => !src.startsWith(path.join(REPO, 'dist/test')),
  });
  // node_modules as installed (a link to the checkout's: the same packages, not copied).
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(app, 'node_modules'));
  t.same(fs.readdirSync(app).sort(), ['dist', 'node_modules', 'package.json'], 'nothing else');

  const dataDir = path.join(dir, 'data');
  const env = {
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    FIRST_OWNER_EMAIL: 'op@example.org',
  };
  // In a process group of its own, stopped as a terminal's Ctrl-C or systemd stops it: npm runs
  // the script through sh, which does not pass npm's SIGTERM on to node.
  const server = spawn('npm', ['start'], { cwd: app, env: npmEnv(env), detached: true });
  const closed = new Promise((resolve) => server.on('close', resolve));
  const stop = (signal: NodeJS.Signals) => {
    try {
      process.kill(-server.pid!, signal);
    } catch {
      // gone already
    }
  };
  t.teardown(() => stop('SIGKILL'));
  let out = '';
  server.stdout.on('data', (c: Buffer) => (out += c.toString()));
  server.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const look = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    };
    server.stdout.on('data', look);
    server.on('exit', (code) => reject(new Error(`npm start exited (${String(code)}):\n${out}`)));
  });
  t.notMatch(out, /MODULE_NOT_FOUND|Cannot find module/, 'nothing missing');
  const health = await rawRequest(url, { method: 'GET', path: '/health' });
  t.equal(health.status, 200, '/health');

  const quiet = runNpm(app, ['run', '-s', 'manage', '--', 'list-users', '--realm', ''], env);
  t.equal(quiet.status, 0, quiet.stderr);
  const users = JSON.parse(quiet.stdout) as { users: { email: string }[] };
  t.ok(
    users.users.some((u) => u.email === 'op@example.org'),
    'npm run -s manage: stdout is the JSON alone (through the running server)',
  );
  const loud = runNpm(app, ['run', 'manage', '--', 'list-realms'], env);
  t.equal(loud.status, 0);
  t.match(loud.stdout, /^\s*> confab@[\d.]+ manage/, 'without -s, npm prints its banner first');

  stop('SIGTERM');
  await closed;
  const direct = runNpm(app, ['run', '-s', 'manage', '--', 'list-realms'], env);
  t.equal(direct.status, 0, direct.stderr);
  t.match(JSON.parse(direct.stdout), { realms: [{ string_id: '' }] }, 'and with no server running');

  // The systemd unit's command (deploy/confab.service), run from this install directory with its
  // settings file: Node comes from the CONFAB_NODE setting, and the shell hands over to it.
  const unit = fs.readFileSync(path.join(REPO, 'deploy/confab.service'), 'utf8');
  t.match(unit, /^Environment=CONFAB_NODE=\/opt\/node\/bin\/node$/m, 'Node from a setting');
  const exec = /^ExecStart=\/bin\/sh -c '(.*)'$/m.exec(unit)?.[1];
  t.ok(exec, 'ExecStart runs a shell command');
  const envFile = path.join(dir, 'confab.env');
  fs.writeFileSync(envFile, `DATA_DIR=${dataDir}\nPORT=0\nHOST=127.0.0.1\n`);
  const script = exec!
    .replaceAll('$$', '$')
    .replaceAll('/opt/confab/', `${app}/`)
    .replaceAll('/etc/confab/confab.env', envFile);
  const unitEnv = npmEnv({ CONFAB_NODE: process.execPath });
  const service = spawn('/bin/sh', ['-c', script], { cwd: app, env: unitEnv });
  t.teardown(() => {
    if (service.exitCode === null) service.kill('SIGKILL');
  });
  const serviceClosed = new Promise<number | null>((resolve) => service.on('close', resolve));
  let serviceOut = '';
  service.stdout.on('data', (c: Buffer) => (serviceOut += c.toString()));
  service.stderr.on('data', (c: Buffer) => (serviceOut += c.toString()));
  const serviceUrl = await new Promise<string>((resolve, reject) => {
    service.stdout.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(serviceOut);
      if (m) resolve(m[1]!);
    });
    service.on('exit', (code) =>
      reject(new Error(`the unit's command exited (${code}):\n${serviceOut}`)),
    );
  });
  const again = await rawRequest(serviceUrl, { method: 'GET', path: '/health' });
  t.equal(again.status, 200, "the unit's command serves");
  // systemd signals the process it started: with exec, that is Node, which stops gracefully.
  service.kill('SIGTERM');
  t.equal(await serviceClosed, 0, 'SIGTERM reaches Node: a graceful stop, exit 0');
});
