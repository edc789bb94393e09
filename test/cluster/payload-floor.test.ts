/**
 * The floor on NATS's max_payload (jetstream.ts MIN_MAX_PAYLOAD, 64 KiB; docs/cluster.md "Entry
 * size"), on real nats-servers of this file's own, each configured with its max_payload:
 *
 * - one at 65,535 bytes, one under the floor: connectJetStream refuses it before opening anything,
 *   and a node process (src/cluster/main.ts) refuses to start, exit status 78, with one line that
 *   names max_payload, the value, the floor and the NATS default; no stream or bucket is created.
 *   On the code before, the node started, and `manage create-realm` under a max_payload of 5 KiB
 *   left a realm in the log without its default channels (its set-up refused after its rows);
 * - one at the floor itself: the node starts, and the realm made by `manage create-realm` with the
 *   largest inputs it accepts (a name of 40 four-byte characters, a 63-character subdomain, an
 *   owner's name of 100 four-byte characters, an e-mail address of 254 three-byte characters) is
 *   made whole; every entry of its creation (its rows, then each transaction of its set-up), and
 *   the one entry of a cluster's first realm made with the same inputs, measured as it is in the
 *   log, takes at most half of the floor's bound (ENTRY_MOST below). That is the guarantee
 *   the floor stands for: a later change that makes the set-up larger (welcome messages, default
 *   channels) fails here well before a realm could be left half set up.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, Events, type NatsConnection } from 'nats';
import t, { type Test } from 'tap';
import { ensureFirstRealm } from '../../src/bootstrap.js';
import {
  appendSurely,
  clusterNames,
  connectJetStream,
  ENTRY_HEADROOM,
  entryLimit,
  followPayloadFloor,
  MIN_MAX_PAYLOAD,
  packEntry,
  PayloadTooSmallError,
  skipCurrentServer,
  type Entry,
} from '../../src/cluster/jetstream.js';
import {
  alive,
  binary,
  listens,
  localNatsIsUnsafe,
  missingEngines,
  ports,
  sleep,
  start,
  waitFor,
} from '../../src/cluster/local.js';
import { isValidEmail } from '../../src/lib/email-validation.js';
import { unpack } from '../../src/lib/pack.js';
import { checkRealmName } from '../../src/lib/realm-settings.js';
import { checkFullName } from '../../src/lib/user-rules.js';
import { manage } from '../helpers/manage.js';
import { nodeInProcess, nodeProcess } from '../helpers/cluster-node.js';

const missing = missingEngines();
if (missing)
  t.plan(0, `${missing} is not installed (apt-get install -y nats-server nginx): skipped`);

/**
 * The most bytes any entry of a realm's creation may take here: half of what one NATS message
 * takes at the floor (64,512 bytes), leaving room for what this test does not reach: the ids of a
 * cluster that made millions of rows (this one's are a new cluster's; larger ones pack to a few
 * bytes more each, nine at most), a later field or two. Measured: 12,647 bytes at most (the first realm's
 * one entry), a set-up transaction 6,298.
 */
const ENTRY_MOST = Math.floor((MIN_MAX_PAYLOAD - ENTRY_HEADROOM) / 2);

/** The largest inputs `manage create-realm` accepts, in bytes (checked below). */
const astral = '\u{1D504}'; // 𝔄: one code point, two UTF-16 units, four bytes in UTF-8
const wide = '\u4E2D'; // 中: one code point, one UTF-16 unit, three bytes in UTF-8
const LARGEST = {
  realmName: astral.repeat(40),
  subdomain: 'a'.repeat(63),
  ownerFullName: astral.repeat(100),
  // 254 UTF-16 units (isValidEmail's bound), all three-byte characters but the @ and the dot.
  ownerEmail: `${wide.repeat(200)}@${wide.repeat(50)}.${wide.repeat(2)}`,
};

t.test('the largest inputs are the largest create-realm accepts', (t) => {
  const refuse = (_: unknown, message: string): never => {
    throw new Error(message);
  };
  t.equal(checkRealmName(LARGEST.realmName, refuse), LARGEST.realmName, 'a name of 40');
  t.throws(() => checkRealmName(LARGEST.realmName + astral, refuse), 'not of 41');
  t.equal(checkFullName(LARGEST.ownerFullName), LARGEST.ownerFullName, "an owner's name of 100");
  t.throws(() => checkFullName(LARGEST.ownerFullName + astral), 'not of 101');
  t.equal(LARGEST.ownerEmail.length, 254);
  t.ok(isValidEmail(LARGEST.ownerEmail), 'an e-mail address of 254 units');
  t.notOk(isValidEmail(wide + LARGEST.ownerEmail), 'not of 255');
  t.end();
});

t.test('max_payload under the floor: the node refuses to start', async (t) => {
  if (missing) return;
  const url = await natsServer(t, MIN_MAX_PAYLOAD - 1);
  const servers = [url];
  const streamNames = async () => {
    const nc = await connect({ servers });
    try {
      const jsm = await nc.jetstreamManager();
      return (await jsm.streams.names().next()).sort();
    } finally {
      await nc.close();
    }
  };

  const err = await connectJetStream({
    servers,
    node: 'n1',
    replicas: 1,
    names: clusterNames('refused'),
    allowUnsafeNats: true,
  }).then(
    (opened) => opened.nc.close().then(() => null),
    (e: unknown) => e,
  );
  t.ok(err instanceof PayloadTooSmallError, 'connectJetStream refuses it');
  if (err instanceof PayloadTooSmallError) {
    t.equal(err.maxPayload, MIN_MAX_PAYLOAD - 1);
    t.notMatch(err.message, /\n/, 'one line');
  }
  t.same(await streamNames(), [], 'no stream or bucket was created');

  const dataDir = path.join(t.testdir(), 'node');
  const node = await nodeProcess({
    CLUSTER_NODE: 'n1',
    CLUSTER_NATS: url,
    CLUSTER_REPLICAS: '1',
    CLUSTER_NAMESPACE: 'node',
    CLUSTER_ALLOW_UNSAFE_NATS: localNatsIsUnsafe() ? '1' : '0',
    CLUSTER_BOOTSTRAP: path.join(dataDir, 'owner.json'),
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
  });
  t.equal(node.code, 78, 'exit status 78 (EX_CONFIG)');
  const lines = node.output.split('\n').filter((l) => l.includes('refusing to start'));
  t.equal(lines.length, 1, 'says so in one line');
  t.match(
    lines[0],
    /^refusing to start: the NATS servers' max_payload is 65535 bytes, below the 65536 bytes \(64 KiB\) a cluster node needs: .*Set max_payload to at least 64KB .*the NATS default of 1 MB is fine\.$/,
    lines[0] ?? node.output.slice(-2000),
  );
  t.same(await streamNames(), [], 'no log, no bucket: nothing was written');
  t.notOk(fs.existsSync(path.join(dataDir, 'owner.json')), 'no first realm');
});

t.test('max_payload at the floor: a realm of the largest inputs is made whole', async (t) => {
  if (missing) return;
  const url = await natsServer(t, MIN_MAX_PAYLOAD);
  const nc = await connect({ servers: url });
  t.teardown(() => nc.close());
  const jsm = await nc.jetstreamManager();
  const dir = t.testdir();

  let serial = 0;
  const node = async () => {
    const namespace = `floor${++serial}`;
    const { server, dataDir } = await nodeInProcess(t, { url, dir, serial, namespace });
    const names = clusterNames(namespace);
    /** The realm's entries in the log, packed as appended: their sizes and what they hold. */
    const entries = async (realmId: number) => {
      const out: { bytes: number; changes: number; events: number }[] = [];
      // Until the log stops growing (the last set-up transaction's append may still be on its way).
      let last = (await jsm.streams.info(names.stream)).state.last_seq;
      for (;;) {
        await sleep(300);
        const now = (await jsm.streams.info(names.stream)).state.last_seq;
        if (now === last) break;
        last = now;
      }
      for (let seq = 1; seq <= last; seq++) {
        const m = await jsm.streams.getMessage(names.stream, { seq }).catch(() => null);
        if (m?.subject !== `${names.log}.${realmId}`) continue;
        const entry = unpack<Entry>(m.data);
        if (entry.k !== 'batch') continue;
        out.push({
          bytes: m.data.length,
          changes: entry.changes.length,
          events: entry.events.length,
        });
      }
      return out;
    };
    return { server, dataDir, entries };
  };
  const count = (
    server: Awaited<ReturnType<typeof node>>['server'],
    table: string,
    realmId: number,
  ) =>
    server.store.db
      .prepare(`SELECT count(*) FROM ${table} WHERE realm_id = ?`)
      .pluck()
      .get(realmId);

  await t.test('manage create-realm: its rows, then its set-up', async (t) => {
    const { server, dataDir, entries } = await node();
    const made = await manage(
      dataDir,
      [
        'create-realm',
        '--name',
        LARGEST.realmName,
        '--subdomain',
        LARGEST.subdomain,
        '--owner-email',
        LARGEST.ownerEmail,
        '--owner-name',
        LARGEST.ownerFullName,
        '--password-stdin',
      ],
      { stdin: 'secret-owner\n' },
    );
    t.equal(made.status, 0, `made (${made.stderr.slice(0, 400)})`);
    const realmId = made.json.realm_id as number;
    t.equal(server.store.realms.byId(realmId)?.name, LARGEST.realmName, 'its name, whole');
    t.equal(server.store.channels.byRealm(realmId).length, 3, 'its default channels');
    t.equal(
      count(server, 'messages', realmId),
      13,
      "its welcome messages, the Welcome Bot's to the owner too",
    );
    const sizes = await entries(realmId);
    t.ok(sizes.length >= 15, `its rows and each set-up transaction: ${sizes.length} entries`);
    checkSizes(t, sizes);
  });

  await t.test("a cluster's first realm: one entry", async (t) => {
    const { server, entries } = await node();
    const creds = await server.cluster!.bootstrap(() =>
      ensureFirstRealm(server.store, { ...server.context.config }, LARGEST),
    );
    t.ok(creds, 'made');
    const realmId = creds!.realm_id;
    t.equal(
      count(server, 'messages', realmId),
      13,
      "its welcome messages, the Welcome Bot's to the owner too",
    );
    const sizes = await entries(realmId);
    t.equal(sizes.length, 1, 'one entry');
    checkSizes(t, sizes);
  });
});

t.test('a reconnection to a server under the floor: said, and left for another', async (t) => {
  if (missing) return;
  // Two servers apart (the client does not mind that they are not one NATS cluster): one of the
  // NATS default, one under the floor. connectJetStream checks only the first one reached.
  const good = await natsServer(t, 1024 * 1024);
  const small = await natsServer(t, MIN_MAX_PAYLOAD / 2);
  const nc = await connect({ servers: [good, small], ...IN_ORDER });
  t.teardown(() => nc.close());
  const lines: string[] = [];
  void followPayloadFloor(nc, (line) => lines.push(line));
  const at = () => `nats://${nc.getServer()}`;
  t.equal(at(), good, 'connected to the server of the NATS default');
  // Off to the other one, as a reconnection after the first died or froze.
  skipCurrentServer(nc);
  await nc.reconnect();
  await waitFor('the line about the server under the floor', () => lines.length > 0, 30_000);
  t.equal(lines.length, 1, 'one line');
  t.match(
    lines[0],
    new RegExp(
      `^ERROR: NATS server \\S+ \\(${small.slice('nats://'.length)}\\) has max_payload ` +
        `${MIN_MAX_PAYLOAD / 2} bytes, below the ${MIN_MAX_PAYLOAD} bytes .*: connecting to ` +
        'another\\. Set max_payload to at least 64KB',
    ),
    'names the server, its max_payload and the floor',
  );
  await waitFor('the connection back on the other server', () => at() === good, 30_000);
  t.equal(at(), good, 'left for the server of the NATS default');
  t.equal(lines.length, 1, 'nothing more said');
});

t.test('on a server under the floor, an entry it cannot carry waits for another', async (t) => {
  if (missing) return;
  const good = await natsServer(t, 1024 * 1024);
  const small = await natsServer(t, MIN_MAX_PAYLOAD / 2);
  const names = clusterNames('held');
  const opened = await connectJetStream({
    servers: [good],
    node: 'n1',
    replicas: 1,
    names,
    allowUnsafeNats: true,
  });
  await opened.nc.close();
  const nc = await connect({ servers: [good, small], ...IN_ORDER });
  t.teardown(() => nc.close());
  const js = nc.jetstream();
  const jsm = await nc.jetstreamManager();
  const at = () => `nats://${nc.getServer()}`;
  await moveOn(nc);
  t.equal(at(), small, 'on the server under the floor');
  t.equal(entryLimit(nc), MIN_MAX_PAYLOAD - ENTRY_HEADROOM, "the writer's bound stays the floor's");
  // An entry within that bound that the server cannot carry (a batch naming a large result).
  const entry: Entry = {
    k: 'batch',
    node: 'n1',
    inc: 'held',
    term: 1,
    changes: [],
    events: [],
    ended: [],
    fw: [['big', 'x'.repeat(40_000)]],
  };
  const bytes = packEntry(entry).length;
  t.ok(bytes > MIN_MAX_PAYLOAD / 2 && bytes <= entryLimit(nc), `${bytes} bytes`);
  let failed = 0;
  const deadline = Date.now() + 60_000;
  const appended = appendSurely(
    js,
    jsm,
    names,
    1,
    entry,
    0,
    'held-1',
    () => Date.now() < deadline,
    () => void failed++,
  );
  await waitFor('an attempt refused on that server', () => failed > 0, 30_000);
  t.equal(at(), small, 'asked again, not given up, while on it');
  // Moved on (as followPayloadFloor does): the entry lands.
  await moveOn(nc);
  t.equal(at(), good, 'on the other server');
  t.equal(await appended, 1, 'appended once on the other server');
  const stored = await jsm.streams.getMessage(names.stream, { seq: 1 });
  t.equal(stored.data.length, bytes, 'the whole entry is in the log');
});

/**
 * A connection that reconnects to its servers in their order: nats.js dials a server it dialed
 * less than `reconnectTimeWait` plus a random jitter (up to 100 ms) ago only after the next.
 */
const IN_ORDER = { noRandomize: true, reconnectTimeWait: 0, reconnectJitter: 0 };

/** Moves the connection to the next server of its list; resolves once it is connected there. */
async function moveOn(nc: NatsConnection): Promise<void> {
  const moved = (async () => {
    for await (const s of nc.status()) if (s.type === Events.Reconnect) return;
  })();
  skipCurrentServer(nc);
  await nc.reconnect();
  await moved;
}

/** Every entry within ENTRY_MOST, the largest named. */
function checkSizes(t: Test, sizes: { bytes: number; changes: number; events: number }[]): void {
  const largest = Math.max(...sizes.map((s) => s.bytes));
  t.comment(
    `entries (bytes/changes/events): ${sizes.map((s) => `${s.bytes}/${s.changes}/${s.events}`).join(' ')}`,
  );
  for (const [i, s] of sizes.entries())
    t.ok(
      s.bytes <= ENTRY_MOST,
      `entry ${i + 1}: ${s.bytes} bytes (${s.changes} row changes, ${s.events} events), at most ` +
        `${ENTRY_MOST}`,
    );
  t.ok(largest > 0, `the largest: ${largest} bytes`);
}

/** A nats-server with JetStream whose max_payload is `maxPayload` bytes: its client URL. */
async function natsServer(t: Test, maxPayload: number): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'payload-floor-'));
  const [port] = await ports(1);
  const conf = path.join(dir, 'nats.conf');
  fs.writeFileSync(
    conf,
    `listen: 127.0.0.1:${port}\nmax_payload: ${maxPayload}\n` +
      `jetstream {\n  store_dir: "${path.join(dir, 'store')}"\n}\n`,
  );
  const pid = start(binary('nats-server'), ['-c', conf], path.join(dir, 'nats.log'));
  t.teardown(async () => {
    if (alive(pid)) process.kill(pid, 'SIGKILL');
    while (alive(pid)) await sleep(50);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await waitFor('nats-server', () => listens(port!));
  return `nats://127.0.0.1:${port}`;
}
