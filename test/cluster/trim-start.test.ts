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
 * src/cluster/main.ts answers by starting again from the snapshot: with a trim landing just after
 * the node's first look, the node process does so (one line; /health not answered until it has
 * caught up; no exit). Either way the copy is set aside under `<DATA_DIR>/discarded/` (the newest
 * two kept), and the node's reported position (`applied-n1`) goes from the copy's to the
 * snapshot's at once.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { KvWatchInclude } from 'nats';
import t, { type Test } from 'tap';
import {
  clusterNames,
  connectJetStream,
  packEntry,
  POSITION_SUBJECT,
  SNAPSHOT_NAME,
} from '../../src/cluster/jetstream.js';
import { localNatsEnv, localNatsIsUnsafe, missingEngines, ports } from '../../src/cluster/local.js';
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
   * copy (`marks` marks), and a snapshot at its end is uploaded (n1's copy at that position: the
   * entries between change no row). `trim` then trims the log up to it and appends one more entry.
   */
  const snapshotPastCopy = async (
    marks = 5,
  ): Promise<{ at: number; snapshot: number; trim: () => Promise<void> }> => {
    const at = inspectCopy(dataDir).applied;
    let snapshot = 0;
    for (let i = 0; i < marks; i += 100)
      snapshot = Math.max(
        ...(await Promise.all(Array.from({ length: Math.min(100, marks - i) }, () => mark()))),
      );
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
    const trim = async () => {
      // The marks up to the snapshot go (a trim keeps each realm's newest entry, not marks).
      await h.jsm.streams.purge(names.stream, {
        filter: `${names.log}.${POSITION_SUBJECT}`,
        seq: snapshot + 1,
      });
      await mark();
    };
    return { at, snapshot, trim };
  };

  /** Both steps at once: the log trimmed past n1's copy before it starts. */
  const trimPastCopy = async (): Promise<{ at: number; snapshot: number }> => {
    const { at, snapshot, trim } = await snapshotPastCopy();
    await trim();
    return { at, snapshot };
  };

  /** The values n1's applied position (trim.ts `applied-n1`) takes from now on, in order. */
  const watchReports = async (t: Test, seen: (value: number) => void) => {
    const iter = await h.kv.watch({ key: 'applied-n1', include: KvWatchInclude.UpdatesOnly });
    t.teardown(() => iter.stop());
    void (async () => {
      for await (const e of iter) if (e.operation === 'PUT') seen(Number(e.string()));
    })();
  };

  /** The copies set aside in n1's data directory (src/cluster/main.ts), oldest first. */
  const setAside = () => {
    const root = path.join(dataDir, 'discarded');
    return fs.existsSync(root) ? fs.readdirSync(root).sort() : [];
  };

  /** What the copy holds that the log's marks do not change. */
  const rows = (file = dataDir) => {
    const db = new Database(path.join(file, 'confab.sqlite3'), { readonly: true });
    try {
      return db
        .prepare<[], { users: number; messages: number; last: number | null }>(
          'SELECT (SELECT count(*) FROM users) AS users, (SELECT count(*) FROM messages) AS messages, (SELECT max(id) FROM messages) AS last',
        )
        .get()!;
    } finally {
      db.close();
    }
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

    const reports: { value: number; serving: boolean }[] = [];
    // Watched before the node starts: its first report comes soon after.
    let said = () => '';
    await watchReports(t, (value) => reports.push({ value, serving: /listening on/.test(said()) }));
    const node = nodeProc(env());
    t.teardown(() => node.kill());
    said = node.output;
    const up = await node.waitFor(/listening on (http:\/\/\S+)/);
    const output = node.output();
    t.ok(up, 'it serves, without exiting', { output, code: node.code() });
    t.notMatch(output, /stopping: the log was trimmed past this copy/, 'no stop for a supervisor');
    t.match(
      output,
      new RegExp(
        `at log position ${at}, the log's next entry is \\d+ \\(trimmed\\); rebuilding \\(the copy is kept in ${dataDir}/discarded/\\S+\\)`,
      ),
      'says why it set its copy aside, and where, in one line',
    );
    // Its copy's position (reported before it looked) is replaced by the snapshot's at once: the
    // set-aside copy's would hold every trim at it until the node reports again, once it serves.
    const i = reports.findIndex((r) => r.value === at);
    t.ok(i >= 0, `it reported its copy's position ${at} first`, { reports });
    t.same(reports[i + 1], { value: snapshot, serving: false }, 'then the snapshot’s, at once', {
      reports,
    });
    // The copy is kept for diagnosis, not removed.
    const aside = setAside();
    t.equal(aside.length, 1, 'one copy set aside', { aside });
    t.equal(
      inspectCopy(path.join(dataDir, 'discarded', aside[0]!)).applied,
      at,
      'the set-aside copy is the node’s, as it was',
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

  t.test('a trim landing while the node starts: it starts again from the snapshot', async (t) => {
    // Two older set-aside copies: with the one this start sets aside, only the newest two stay.
    for (const old of ['2000-01-01T00-00-00.000Z', '2000-01-02T00-00-00.000Z']) {
      fs.mkdirSync(path.join(dataDir, 'discarded', old), { recursive: true });
      fs.writeFileSync(path.join(dataDir, 'discarded', old, 'confab.sqlite3'), 'old');
    }
    const kept = setAside().filter((d) => !d.startsWith('2000-'));
    // Entries after the copy for the node to catch up on (the consumer meets the gap there when
    // the trim lands after ClusterNode.start looked).
    const { at, snapshot, trim } = await snapshotPastCopy(500);
    const before = rows();
    // The trim lands right after the node's first look at its copy (prepareCopy: STREAM.MSG.GET
    // of the entry after it) was answered: that look found no gap, so the node opens its copy and
    // meets the gap later in its start (ClusterNode.start's look, or its consumer).
    const looks = new Set<string>();
    // (A holder: assigned in a callback, which the compiler's narrowing does not see.)
    const trimming: { done: Promise<void> | null } = { done: null };
    const requests = h.nc.subscribe(`$JS.API.STREAM.MSG.GET.${names.stream}`, {
      callback: (_err, m) => {
        const q = JSON.parse(new TextDecoder().decode(m.data)) as { seq?: number };
        if (q.seq === at + 1 && m.reply) looks.add(m.reply);
      },
    });
    const answers = h.nc.subscribe('_INBOX.>', {
      callback: (_err, m) => {
        if (trimming.done === null && looks.has(m.subject)) trimming.done = trim();
      },
    });
    t.teardown(() => {
      requests.unsubscribe();
      answers.unsubscribe();
    });
    const reports: { value: number; serving: boolean }[] = [];
    const [port] = await ports(1);
    const base = `http://127.0.0.1:${port}`;
    let said = () => '';
    await watchReports(t, (value) => reports.push({ value, serving: /listening on/.test(said()) }));
    // The subscriptions above are the server's before the node starts.
    await h.nc.flush();
    const node = nodeProc(env({ PORT: String(port) }));
    t.teardown(() => node.kill());
    said = node.output;
    // /health, every 100 ms from the start: what it answered, and what the node had said by then.
    const health: { status: number | 'refused'; said: string }[] = [];
    let polling = true;
    const polled = (async () => {
      while (polling) {
        const status = await fetch(`${base}/health`).then(
          (r) => r.arrayBuffer().then(() => r.status),
          () => 'refused' as const,
        );
        health.push({ status, said: node.output() });
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const up = await node.waitFor(/listening on/);
    // A moment serving: it goes on (no exit for a supervisor), /health says ok.
    await new Promise((r) => setTimeout(r, 1500));
    polling = false;
    await polled;
    const output = node.output();
    t.ok(trimming.done !== null, 'the trim landed after the node looked at its copy');
    await trimming.done;
    t.ok(up, 'it serves', { output, code: node.code() });
    t.equal(node.code(), undefined, 'it did not exit');
    t.notMatch(output, /stopping:/, 'no stop for a supervisor');
    t.notMatch(output, /rebuilding/, 'its first look found no gap (the trim came after it)');
    const retry = new RegExp(
      `cluster n1: the log was trimmed past this copy \\(at ${at}, next entry \\d+\\) while it started: setting the copy aside \\(kept in ${dataDir}/discarded/\\S+\\) and starting again from the newest snapshot`,
    );
    t.equal(output.split('\n').filter((l) => retry.test(l)).length, 1, 'says so in one line', {
      output,
    });
    t.match(output, `started from the snapshot at log position ${snapshot}`, 'and where from');
    // Not ready until it has rebuilt its copy and caught up: nothing answered before it listened.
    const ready = health.findIndex((h) => h.status === 200);
    if (!t.ok(ready >= 0, '/health says ok once it serves', { health: health.slice(-3), output }))
      return;
    t.ok(
      health.slice(0, ready).every((h) => h.status !== 200),
      'no ok before it is ready',
    );
    t.ok(
      health.some((h) => h.status === 'refused' && retry.test(h.said)),
      'asked while it rebuilt, /health was not answered',
    );
    t.match(
      health[ready]!.said,
      `started from the snapshot at log position ${snapshot}`,
      'ok only after it started from the snapshot',
    );
    t.ok(
      health.slice(ready).every((h) => h.status === 200),
      'and ok from then on',
      { health: health.slice(ready).map((h) => h.status) },
    );
    // Its reported position: the copy's, then the snapshot's at once (not the copy's until the
    // node reports again, serving).
    const i = reports.findIndex((r) => r.value === at);
    t.ok(i >= 0, `it reported its copy's position ${at} first`, { reports });
    t.same(reports[i + 1], { value: snapshot, serving: false }, 'then the snapshot’s, at once', {
      reports,
    });
    // The data: the realm, its owner and its messages.
    const me = await fetch(`${base}/api/v1/users/me`, {
      headers: {
        authorization: `Basic ${Buffer.from(`${creds.email}:${creds.api_key}`).toString('base64')}`,
      },
    });
    t.equal(me.status, 200, 'the realm and its owner are there');
    await node.stop();
    t.same(rows(), before, 'its users and messages are those it had');
    t.ok(inspectCopy(dataDir).applied > snapshot, 'its copy went on from the snapshot');
    // The copy set aside is kept, with one before it; the older ones went.
    const aside = setAside();
    t.equal(aside.length, 2, 'two copies kept', { aside });
    t.same(aside.slice(0, -1), kept.slice(-1), 'the newest before it, and this one');
    t.equal(
      inspectCopy(path.join(dataDir, 'discarded', aside[1]!)).applied,
      at,
      'the set-aside copy is the one the node started on',
    );
    t.same(rows(path.join(dataDir, 'discarded', aside[1]!)), before, 'as it was');
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
