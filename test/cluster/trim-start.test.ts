/**
 * A node started on its own copy while the log no longer holds the entries after it (trimmed
 * behind a snapshot by another node: src/cluster/trim.ts), for real: one NATS server, a node
 * process (src/cluster/main.ts) and the log played by the test as the other nodes would.
 *
 * The trimmed position the lease bucket records is left below the copy here: the copy passes that
 * check, as it did when another node's trim recorded its position just after this node read it
 * and removed the entries before the node's consumer reached them. Before, the node's consumer
 * met the gap and the process stopped (exit status 75, "the log was trimmed past this copy") for
 * its supervisor to start it again. Now the node finds the gap before it opens the copy (the entry
 * after the copy's position is looked for in the log), rebuilds it from the newest snapshot in the
 * same process and serves; and a start that meets the gap later (ClusterNode.start, the server
 * made in this process) fails with TrimmedPastError having closed what it opened, which
 * src/cluster/main.ts answers by starting again from the snapshot.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import t from 'tap';
import {
  clusterNames,
  connectJetStream,
  packEntry,
  POSITION_SUBJECT,
  SNAPSHOT_NAME,
} from '../../src/cluster/jetstream.js';
import { localNatsEnv, localNatsIsUnsafe, missingEngines } from '../../src/cluster/local.js';
import { TrimmedPastError } from '../../src/cluster/log-applier.js';
import { inspectCopy } from '../../src/cluster/seed.js';
import { within } from '../../src/lib/within.js';
import { DataDirLock } from '../../src/storage/data-lock.js';
import { openDatabase } from '../../src/storage/db.js';
import { recordSeeded } from '../../src/storage/replication.js';
import Database from '../../src/storage/sqlite.js';
import { nodeInProcess } from '../helpers/cluster-node.js';
import { oneNatsServer } from '../helpers/one-nats.js';
import { DIST_SRC, plainNode } from '../helpers/plain-node.js';

t.setTimeout(240_000);

if (missingEngines() === 'nats-server') {
  t.plan(0, 'nats-server is not installed: skipped');
} else {
  await run();
}

/** A node process: its output so far, a wait for a line, and its stop. */
function nodeProc(env: Record<string, string>) {
  const node = plainNode([path.join(DIST_SRC, 'cluster', 'main.js')], env);
  const child = spawn(node.file, node.args, { env: node.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let code: number | null | undefined;
  const seen: (() => void)[] = [];
  const grow = (c: Buffer) => {
    output += c.toString();
    for (const f of seen.splice(0)) f();
  };
  child.stdout.on('data', grow);
  child.stderr.on('data', grow);
  const exited = new Promise<void>((resolve) =>
    child.on('exit', (c) => {
      code = c;
      for (const f of seen.splice(0)) f();
      resolve();
    }),
  );
  return {
    output: () => output,
    code: () => code,
    /** Resolves once the output matches `re` (true) or the process exited (false); 60 s at most. */
    async waitFor(re: RegExp): Promise<boolean> {
      const deadline = Date.now() + 60_000;
      while (!re.test(output) && code === undefined && Date.now() < deadline)
        await new Promise<void>((r) => {
          seen.push(r);
          setTimeout(r, 200);
        });
      return re.test(output);
    },
    async stop(): Promise<void> {
      if (code === undefined) child.kill('SIGTERM');
      await exited;
    },
    kill: () => code === undefined && child.kill('SIGKILL'),
  };
}

async function run(): Promise<void> {
  const url = await oneNatsServer(t, 'trim-start');
  const servers = [url];
  const namespace = 'ts';
  const names = clusterNames(namespace);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trim-start-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const dataDir = path.join(dir, 'n1');
  const ownerFile = path.join(dir, 'owner.json');
  const env = (extra: Record<string, string> = {}) => ({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    CLUSTER_NODE: 'n1',
    CLUSTER_NATS: url,
    CLUSTER_REPLICAS: '1',
    CLUSTER_NAMESPACE: namespace,
    ...localNatsEnv(),
    ...extra,
  });
  const h = await connectJetStream({
    servers,
    node: 'test',
    replicas: 1,
    names,
    allowUnsafeNats: localNatsIsUnsafe(),
  });
  t.teardown(() => h.nc.close());

  /** Appends a position mark (an entry that changes no row), as another node's first read does. */
  const mark = async () =>
    (await h.js.publish(`${names.log}.${POSITION_SUBJECT}`, packEntry({ k: 'mark', node: 'n2' })))
      .seq;

  /**
   * What another node does while n1 is away, its trimmed position aside: the log grows past n1's
   * copy (marks), a snapshot at its end is uploaded (n1's copy at that position: the entries
   * between change no row), and the log is trimmed up to it; then one more entry.
   */
  const trimPastCopy = async (): Promise<{ at: number; snapshot: number }> => {
    const at = inspectCopy(dataDir).applied;
    let snapshot = 0;
    for (let i = 0; i < 5; i++) snapshot = await mark();
    const file = path.join(dir, `snapshot-${snapshot}.sqlite3`);
    const db = openDatabase(dataDir);
    db.prepare('VACUUM INTO ?').run(file);
    db.close();
    const copy = new Database(file);
    recordSeeded(copy, snapshot);
    copy.close();
    const current = await h.snapshots.info(SNAPSHOT_NAME);
    await h.snapshots.put(
      { name: SNAPSHOT_NAME, description: String(snapshot) },
      Readable.toWeb(fs.createReadStream(file)) as ReadableStream<Uint8Array>,
      { previousRevision: current?.revision ?? 0 },
    );
    // The marks up to the snapshot go (a trim keeps each realm's newest entry, not marks).
    await h.jsm.streams.purge(names.stream, {
      filter: `${names.log}.${POSITION_SUBJECT}`,
      seq: snapshot + 1,
    });
    await mark();
    return { at, snapshot };
  };

  // The cluster's first node: the first realm, then a graceful stop.
  let creds = { email: '', api_key: '' };
  t.test('the first node makes the first realm and stops', async (t) => {
    const first = nodeProc(env({ CLUSTER_BOOTSTRAP: ownerFile }));
    t.teardown(() => first.kill());
    t.ok(await first.waitFor(/listening on/), 'it started', { output: first.output() });
    await first.stop();
    t.ok(fs.existsSync(ownerFile), 'the first realm made', { output: first.output() });
    creds = JSON.parse(fs.readFileSync(ownerFile, 'utf8')) as typeof creds;
    t.notOk(inspectCopy(dataDir).unacked, 'its copy holds nothing the log did not acknowledge');
  });

  t.test('a node started on its copy rebuilds it from the snapshot and serves', async (t) => {
    const { at, snapshot } = await trimPastCopy();
    t.ok(at > 0 && snapshot > at + 1, `the copy at ${at}, the log trimmed up to ${snapshot}`);
    const info = await h.jsm.streams.info(names.stream);
    t.ok(info.state.last_seq > snapshot, 'the log holds an entry after the gap');

    const node = nodeProc(env());
    t.teardown(() => node.kill());
    const up = await node.waitFor(/listening on (http:\/\/\S+)/);
    const output = node.output();
    t.ok(up, 'it serves, without exiting', { output, code: node.code() });
    t.notMatch(output, /stopping: the log was trimmed past this copy/, 'no stop for a supervisor');
    t.match(
      output,
      new RegExp(`at log position ${at}, the log's next entry is \\d+ \\(trimmed\\); rebuilding`),
      'says why it set its copy aside, in one line',
    );
    t.match(output, `started from the snapshot at log position ${snapshot}`, 'and where from');
    const base = /listening on (http:\/\/\S+)/.exec(output)![1]!;
    const health = await fetch(`${base}/health`);
    t.equal(health.status, 200, '/health says ok once it listens');
    const me = await fetch(`${base}/api/v1/users/me`, {
      headers: {
        authorization: `Basic ${Buffer.from(`${creds.email}:${creds.api_key}`).toString('base64')}`,
      },
    });
    t.equal(me.status, 200, 'the realm and its owner are there');
    t.equal(((await me.json()) as { email: string }).email, creds.email);
    await node.stop();
    t.ok(inspectCopy(dataDir).applied > snapshot, 'its copy went on from the snapshot');
  });

  t.test('a start that meets the gap fails having closed what it opened', async (t) => {
    const { at } = await trimPastCopy();
    // The server made in this process (main.ts's second check, after it looked at the copy):
    // before, the node stopped the process (here: `fatal`) and its start never ended.
    const stopped: string[] = [];
    const started = nodeInProcess(t, {
      url,
      dir,
      serial: 1,
      namespace,
      extra: { fatal: (reason: string) => void stopped.push(reason) },
    }).then(
      () => null,
      (err: unknown) => err,
    );
    const done = await within(performance.now() + 60_000, started);
    t.ok(done, 'the start ended', { stopped });
    if (!done) return; // (its server is left to the process's end)
    const err = await started;
    t.ok(err instanceof TrimmedPastError, `it failed with TrimmedPastError (${String(err)})`);
    t.match(err, { at }, 'at the copy’s position');
    t.same(stopped, [], 'the process was not stopped');
    // Closed: the data directory's lock and database are free for the next start.
    const lock = DataDirLock.acquire(dataDir, 'server');
    lock.release();
    t.pass('the data directory is free again');
  });
}
