/**
 * Listing a key-value bucket's keys without nats.js's `kv.keys` (src/cluster/jetstream.ts
 * bucketKeys), for real: the keys a node's start (the exports its previous process left) and a
 * trim (the nodes' positions) read, from the bucket stream's info; and its bound. nats.js lists
 * them through an ordered push consumer whose re-creation after a reset it asks for without limit
 * while JetStream answers 503 (`_resetOrderedConsumer`, `retries: -1`), with no handle to stop it:
 * not provoked here (the consumer would have to be reset in the instant between its creation and
 * its last key). What is checked is that the listing's own questions stop: against a NATS server
 * without JetStream every JetStream question is answered 503 ("no responders"), and the listing
 * fails after its patience, saying so, instead of asking on.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect } from 'nats';
import t from 'tap';
import { bucketKeys } from '../../src/cluster/jetstream.js';
import {
  alive,
  binary,
  listens,
  missingEngines,
  ports,
  sleep,
  start,
  waitFor,
} from '../../src/cluster/local.js';
import { oneNatsServer } from '../helpers/one-nats.js';

if (missingEngines() === 'nats-server') {
  t.plan(0, 'nats-server is not installed: skipped');
} else {
  run();
}

function run(): void {
  t.test('the keys under a filter, as the bucket holds them', async (t) => {
    const url = await oneNatsServer(t, 'bucket-keys');
    const nc = await connect({ servers: url });
    t.teardown(() => nc.close());
    const kv = await nc.jetstream().views.kv('keys_test');
    for (const k of ['export.7', 'export.9', 'applied-n1', 'applied-n2', 'lease.1'])
      await kv.put(k, 'x');
    await kv.delete('export.9');
    const jsm = await nc.jetstreamManager();
    t.same(
      (await bucketKeys(jsm, 'keys_test', 'export.*')).sort(),
      ['export.7', 'export.9'],
      "a filter's keys, a deleted one's marker too (callers read each key)",
    );
    t.same(
      (await bucketKeys(jsm, 'keys_test')).sort(),
      ['applied-n1', 'applied-n2', 'export.7', 'export.9', 'lease.1'],
      'every key by default',
    );
    t.same(await bucketKeys(jsm, 'keys_test', 'none.*'), [], 'none');
  });

  t.test('JetStream answering 503: the listing gives up after its patience', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bucket-keys-'));
    const [port] = await ports(1);
    // A NATS server without JetStream: every JetStream question is answered "no responders".
    const pid = start(
      binary('nats-server'),
      ['-a', '127.0.0.1', '-p', String(port)],
      path.join(dir, 'nats.log'),
    );
    t.teardown(async () => {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
      while (alive(pid)) await sleep(50);
      fs.rmSync(dir, { recursive: true, force: true });
    });
    await waitFor('nats-server', () => listens(port!));
    const nc = await connect({ servers: `nats://127.0.0.1:${port}` });
    t.teardown(() => nc.close());
    const jsm = await nc.jetstreamManager({ checkAPI: false, timeout: 1000 });
    const began = performance.now();
    const err = await bucketKeys(jsm, 'keys_test', 'export.*', 1500).then(
      () => null,
      (e: unknown) => e as Error,
    );
    const took = performance.now() - began;
    t.ok(err, 'it fails');
    t.match(
      err?.message,
      /^the keys of bucket keys_test went unanswered for \d+ ms \(.*503/,
      'why',
    );
    t.ok(
      took >= 1400 && took < 5000,
      `after its patience (${Math.round(took)} ms), asked again meanwhile`,
    );
  });
}
