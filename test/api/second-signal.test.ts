/**
 * A second SIGINT/SIGTERM during the graceful shutdown stops at once (src/signals.ts): the real
 * server as a child process, under a write load, with a request half received so that the drain
 * would wait its full 10 s. The second signal ends the process within a few seconds with exit
 * status 128 + the signal's number and a warning line; after a restart on the same data every
 * acknowledged write is there and the database passes its checks (as after a SIGKILL). One Ctrl-C
 * under `npm start` (the terminal's SIGINT to the whole process group, npm's included, which
 * forwards it to its script's shell) is still a graceful shutdown: no second signal reaches the
 * server.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { firstOwner, startChild } from '../helpers/child-server.js';
import {
  checkAcknowledged,
  checkDatabase,
  checkServes,
  prepare,
  seed,
  writeLoad,
} from '../helpers/crash-load.js';

t.setTimeout(300_000);

/** A request whose head has arrived and whose body never will: the drain waits for it. */
function halfRequest(url: string): Promise<net.Socket> {
  const u = new URL(url);
  const sock = net.connect(Number(u.port), u.hostname);
  sock.on('error', () => {});
  return new Promise((resolve) =>
    sock.on('connect', () => {
      sock.write(
        `POST /api/v1/messages HTTP/1.1\r\nHost: ${u.host}\r\n` +
          `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ntype=`,
      );
      resolve(sock);
    }),
  );
}

for (const [signal, status] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  t.test(`a second ${signal} during the drain stops at once, the data intact`, async (t) => {
    const dataDir = t.testdir();
    const users = seed(dataDir);
    const first = await startChild(dataDir, { LOG_FORMAT: 'json' });
    t.teardown(() => void first.kill('SIGKILL'));
    await prepare(first.url, users);
    const load = writeLoad(first.url, users, 6);
    await load.reached(100);
    const half = await halfRequest(first.url);
    t.teardown(() => half.destroy());
    // The half request has reached the server once a later request is answered.
    await fetch(`${first.url}/api/v1/server_settings`);

    first.child.kill(signal);
    await first.waitFor(new RegExp(`${signal}: shutting down`));
    // The same signal again at once (a terminal's and npm's copies of one Ctrl-C) is not a second.
    first.child.kill(signal);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    t.equal(first.child.exitCode, null, 'the copy within a second did not stop it at once');
    const sent = Date.now();
    first.child.kill(signal);
    const { code } = await first.exited;
    const took = Date.now() - sent;
    load.stop();
    await load.done;
    t.equal(code, status, `exit status ${status} (128 + the signal's number)`);
    t.ok(took < 5000, `stopped at once (${took} ms; the drain alone would wait 10 s)`);
    t.match(
      first.output(),
      new RegExp(`"level":"warn".*"msg":"${signal} again during the shutdown: stopping at once`),
      'the log says why',
    );

    const second = await startChild(dataDir);
    t.teardown(() => void second.kill('SIGKILL'));
    await checkAcknowledged(t, second.url, users, load.acked);
    await checkDatabase(t, dataDir, second.url, users);
    await checkServes(t, second.url, users[1]!);
    t.equal((await second.kill('SIGTERM')).code, 0, 'a clean shutdown afterwards');
  });
}

t.test('one Ctrl-C under npm start: still a graceful shutdown', async (t) => {
  const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  const dataDir = t.testdir();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_FORMAT: 'json',
  };
  delete env.NODE_OPTIONS;
  for (const k of Object.keys(env)) if (k.startsWith('TAP') || k.startsWith('npm_')) delete env[k];
  // In a process group of its own, as in a terminal: the group's SIGINT is the terminal's Ctrl-C.
  const npm = spawn('npm', ['start'], { cwd: repo, env, detached: true });
  const group = (signal: NodeJS.Signals) => {
    try {
      process.kill(-npm.pid!, signal);
    } catch {
      // gone already
    }
  };
  t.teardown(() => group('SIGKILL'));
  let out = '';
  npm.stdout.on('data', (c: Buffer) => (out += c.toString()));
  npm.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const closed = new Promise<void>((resolve) => npm.on('close', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    npm.stdout.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    npm.on('exit', (code) => reject(new Error(`npm start exited (${String(code)}):\n${out}`)));
  });
  // A queue to save: a graceful shutdown writes it, a stop at once does not.
  const owner = firstOwner(dataDir);
  const auth = 'Basic ' + Buffer.from(`${owner.email}:${owner.apiKey}`).toString('base64');
  const reg = await fetch(`${url}/api/v1/register`, {
    method: 'POST',
    headers: { authorization: auth },
  });
  t.equal(reg.status, 200, 'a queue registered');

  group('SIGINT');
  await closed; // npm itself then ends by the SIGINT it got
  t.match(out, /SIGINT: shutting down/, 'the shutdown began');
  t.notMatch(out, /again during the shutdown/, 'the copy forwarded by npm is not a second Ctrl-C');
  t.ok(fs.existsSync(path.join(dataDir, 'event-queues.msgpack')), 'the queues were saved');
});
