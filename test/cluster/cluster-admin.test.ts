/**
 * Realms created and users administered on a cluster (docs/cluster.md "Creating realms"), for
 * real: three NATS servers, three Confab nodes and nginx (src/cluster/local.ts), `manage` run as
 * a child process against the nodes' data directories.
 *
 * - Two nodes creating a realm with the same subdomain at the same moment (create-realm on both
 *   admin sockets at once, several rounds): exactly one succeeds, the other is refused as a
 *   single process refuses a taken subdomain, and every node keeps running with the same realms;
 *   a subdomain taken earlier is refused by `manage create-realm` on every node.
 * - A subdomain reservation left by a node that died before its realm reached the log: refused
 *   while fresh, taken over once stale, and the dead node's realm can no longer be appended.
 *
 * Skipped when nats-server or nginx is not installed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import {
  appendEntry,
  clusterNames,
  isWrongLastSequence,
  type Entry,
} from '../../src/cluster/jetstream.js';
import {
  alive,
  down,
  missingEngines,
  readRecord,
  up,
  type ClusterRecord,
} from '../../src/cluster/local.js';
import { ApiClient } from '../helpers/api.js';
import { kvString, withLeaseBucket } from '../helpers/cluster-kv.js';
import { askServer } from '../../src/admin/socket.js';
import { manage, type ManageRun } from '../helpers/manage.js';

const IN_USE = 'Subdomain is already in use. Please choose a different one.';
/** CLUSTER_RESERVATION_TIMEOUT_MS of the test's cluster. */
const RESERVATION_TIMEOUT_MS = 5000;

const missing = missingEngines();
if (missing) {
  t.plan(
    0,
    `${missing} is not installed (apt-get install -y nats-server nginx): cluster tests skipped`,
  );
} else {
  // A failure fails the test (and the teardown stops the cluster) rather than the process.
  await run().catch((err: unknown) => t.error(err));
}

async function run(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-admin-'));
  let rec: ClusterRecord;
  try {
    rec = await up({
      dir,
      nodes: 3,
      env: {
        RATE_LIMITING: 'off',
        CLUSTER_RESERVATION_TIMEOUT_MS: String(RESERVATION_TIMEOUT_MS),
      },
    });
  } catch (err) {
    await down(dir);
    throw err;
  }
  t.teardown(async () => {
    await down(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const node = (name: string) => rec.nodes.find((n) => n.name === name)!;
  const nodeUrl = (name: string) => `http://127.0.0.1:${node(name).port}`;
  const createRealm = (on: string, subdomain: string, owner: string) =>
    manage(
      node(on).dataDir,
      [
        'create-realm',
        '--name',
        `Realm ${subdomain}`,
        '--subdomain',
        subdomain,
        '--owner-email',
        `${owner}@${subdomain}.example.com`,
        '--password-stdin',
      ],
      { stdin: `secret-${owner}-password\n` },
    );
  const created: { subdomain: string; realmId: number; email: string; apiKey: string }[] = [];
  const noteCreated = (subdomain: string, r: ManageRun) =>
    created.push({
      subdomain,
      realmId: r.json.realm_id as number,
      email: r.json.email as string,
      apiKey: r.json.api_key as string,
    });

  t.test('two nodes creating the same subdomain at once: one realm, no node stops', async (t) => {
    // Through the admin sockets (what `manage` sends), both at the same instant: two `manage`
    // processes start too far apart for the race (each node saw the other's realm already).
    const ask = (on: string, subdomain: string) =>
      askServer(node(on).dataDir, {
        command: 'create-realm',
        args: {
          name: `Realm ${subdomain}`,
          subdomain,
          'owner-email': `${on}@${subdomain}.example.com`,
          password: `secret-${on}-password`,
        },
      }).catch((err: unknown) => ({ ok: false, error: String(err), code: 'NO_ANSWER' }));
    const names = rec.nodes.map((n) => n.name);
    for (let round = 0; round < 6; round++) {
      const a = names[round % 3]!;
      const b = names[(round + 1) % 3]!;
      const subdomain = `race${round}`;
      const answers = await Promise.all([ask(a, subdomain), ask(b, subdomain)]);
      const won = answers.filter((r) => r?.ok === true);
      const lost = answers.filter((r) => r?.ok !== true);
      t.equal(won.length, 1, `${subdomain} on ${a} and ${b}: exactly one created it`);
      t.same(
        lost,
        [{ ok: false, error: IN_USE, code: 'BAD_REQUEST' }],
        `${subdomain}: the other refused as a taken subdomain`,
      );
      const result = (won[0] as { result?: Record<string, unknown> } | undefined)?.result;
      if (won.length === 1 && result)
        created.push({
          subdomain,
          realmId: result.realm_id as number,
          email: result.email as string,
          apiKey: result.api_key as string,
        });
    }
    await everyNodeRunning(t, dir);
  });

  t.test('a subdomain taken earlier is refused on every node', async (t) => {
    for (const n of rec.nodes) {
      const r = await createRealm(n.name, 'race0', 'late');
      t.equal(r.status, 1, `${n.name}: refused`);
      t.equal(r.json.error, IN_USE, `${n.name}: as a taken subdomain`);
    }
  });

  t.test('a reservation whose realm never came: refused while fresh, then taken', async (t) => {
    // What a node that died between reserving and appending its realm leaves behind.
    const ghost = 987_654_321;
    await withLeaseBucket(rec, (kv) =>
      kv.create('subdomain-ghost', JSON.stringify({ realm: ghost, node: 'n9', inc: 'dead' })),
    );
    const since = Date.now();
    const fresh = await createRealm('n2', 'ghost', 'early');
    if (Date.now() - since < RESERVATION_TIMEOUT_MS) {
      t.equal(fresh.status, 1, 'refused while the reservation is fresh');
      t.equal(fresh.json.error, IN_USE, 'as a taken subdomain');
    }
    await sleep(Math.max(0, since + RESERVATION_TIMEOUT_MS + 500 - Date.now()));
    const r = await createRealm('n3', 'ghost', 'heir');
    t.equal(r.status, 0, `created once the reservation is stale ${r.stderr}`);
    noteCreated('ghost', r);
    const held = JSON.parse((await kvString(rec, 'subdomain-ghost'))!) as { realm: number };
    t.equal(held.realm, r.json.realm_id, 'the reservation names the new realm');
    t.not(held.realm, ghost);
    // The dead node's realm, should its first entry arrive late, is refused by the log.
    const late = await withLeaseBucket(rec, async (_kv, nc) => {
      const entry: Entry = {
        k: 'batch',
        node: 'n9',
        inc: 'dead',
        term: 1,
        changes: [],
        events: [],
        ended: [],
      };
      const first = 'Nats-Expected-Last-Subject-Sequence';
      return appendEntry(nc.jetstream(), clusterNames(), ghost, entry, first, 0).then(
        () => null,
        (err: unknown) => err,
      );
    });
    t.ok(isWrongLastSequence(late), 'a late first entry of the voided realm id is refused');
    await everyNodeRunning(t, dir);
  });

  t.test('every node has the same realms, and serves each created one', async (t) => {
    let lists: string[] = [];
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(200)) {
      lists = await Promise.all(
        rec.nodes.map(async (n) => {
          const r = await manage(n.dataDir, ['list-realms']);
          const realms = r.json.realms as { realm_id: number; string_id: string }[];
          return JSON.stringify(realms.map((x) => [x.realm_id, x.string_id]));
        }),
      );
      if (lists.every((l) => l === lists[0])) break;
    }
    t.ok(
      lists.every((l) => l === lists[0]),
      `every node lists the same realms: ${lists.join(' | ')}`,
    );
    const listed = JSON.parse(lists[0]!) as [number, string][];
    for (const c of created) {
      t.same(
        listed.filter(([, s]) => s === c.subdomain),
        [[c.realmId, c.subdomain]],
        `${c.subdomain}: one realm`,
      );
      for (const n of rec.nodes) {
        const api = new ApiClient(
          nodeUrl(n.name),
          { realmId: c.realmId, users: {}, notificationBotId: 0 },
          { host: `${c.subdomain}.127.0.0.1:${rec.proxyPort}` },
        );
        const me = await api.get({ email: c.email, api_key: c.apiKey }, 'users/me');
        t.equal(me.status, 200, `${n.name} serves ${c.subdomain}’s owner`);
      }
    }
  });
}

/** Every node of the cluster is still running (none stopped on a log entry it could not apply). */
async function everyNodeRunning(t: Test, dir: string): Promise<void> {
  await sleep(500); // a node applying a bad entry stops at once: give it the time to
  for (const n of readRecord(dir).nodes) t.ok(alive(n.pid), `${n.name} is running`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
