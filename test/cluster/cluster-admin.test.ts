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
 * - `manage` writes (create-user, change-role, regenerate-api-key, deactivate-user) through the
 *   admin sockets of the two nodes that do not own the first realm: every node serves their
 *   effects, the third node at once.
 * - `manage` on a stopped node's data directory: every write refused (the node's copy unchanged),
 *   reads and backup served; the same write through the node's socket once it runs again.
 *
 * Skipped when nats-server or nginx is not installed.
 */
import path from 'node:path';
import t, { type Test } from 'tap';
import {
  appendEntry,
  clusterNames,
  isWrongLastSequence,
  type Entry,
} from '../../src/cluster/jetstream.js';
import { alive, killNode, readRecord, startNodeAgain } from '../../src/cluster/local.js';
import { ApiClient } from '../helpers/api.js';
import { kvString, leaseHolder, withLeaseBucket } from '../helpers/cluster-kv.js';
import { askServer } from '../../src/admin/socket-client.js';
import { manage, type ManageRun } from '../helpers/manage.js';
import { runWithEngines, upForTest } from '../helpers/cluster-run.js';

const IN_USE = 'Subdomain is already in use. Please choose a different one.';
/** CLUSTER_RESERVATION_TIMEOUT_MS of the test's cluster. */
const RESERVATION_TIMEOUT_MS = 5000;

// Three nodes, nginx and a dozen admin-tool processes: 50-60 s in CI, 120 s (tap's default limit)
// once under a loaded run; a limit on waiting, not on an outcome.
t.setTimeout(360_000);
await runWithEngines(run);

async function run(): Promise<void> {
  const { dir, rec } = await upForTest('cluster-admin', {
    CLUSTER_RESERVATION_TIMEOUT_MS: String(RESERVATION_TIMEOUT_MS),
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
    let r = fresh;
    if (fresh.status === 0) {
      // The tool took longer than the timeout (a loaded machine): it found the reservation stale.
      t.ok(Date.now() - since >= RESERVATION_TIMEOUT_MS, 'created only once it was stale');
    } else {
      t.equal(fresh.status, 1, 'refused while the reservation is fresh');
      t.equal(fresh.json.error, IN_USE, 'as a taken subdomain');
      await sleep(Math.max(0, since + RESERVATION_TIMEOUT_MS + 500 - Date.now()));
      r = await createRealm('n3', 'ghost', 'heir');
    }
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

  // ---- manage on the first realm: through a node that does not own it, and with a node stopped

  // The nodes not owning the first realm: read in the first of the tests using them, not here. A
  // wait at this level, between tests, can outlast the tests queued before it, and the root test
  // (a teardown of its own) then ends by itself once idle (tap's rule; 7c0f1fb).
  let x = '';
  let y = '';
  const firstRealm = { realmId: 1, users: {}, notificationBotId: 0 };
  const api = (on: string) => new ApiClient(nodeUrl(on), firstRealm);
  const admin = { email: rec.owner.email, api_key: rec.owner.api_key };
  const userOn = async (on: string, id: number) => {
    const r = await api(on).get(admin, `users/${id}`);
    return r.body.user as { role: number; is_active: boolean } | undefined;
  };
  const email = 'ophelia@cluster-admin.example.com';
  let userId = 0;
  let apiKey = '';

  t.test(
    'writes through the admin sockets of nodes not owning the realm reach every node',
    async (t) => {
      const owner = await leaseHolder(rec, 1);
      [x, y] = rec.nodes.filter((n) => n.name !== owner).map((n) => n.name) as [string, string];
      const made = await manage(node(x).dataDir, [
        'create-user',
        '--realm',
        '',
        '--email',
        email,
        '--full-name',
        'Ophelia',
        '--without-password',
      ]);
      t.equal(made.status, 0, `create-user on ${x} (${owner} owns the realm) ${made.stderr}`);
      userId = made.json.user_id as number;
      // At once, through the third node's admin socket: its read barrier applies the log up to
      // the creation first, as for an API request.
      const role = await askServer(node(y).dataDir, {
        command: 'change-role',
        args: { realm: '', user: email, role: 'moderator' },
      });
      t.same(
        role,
        { ok: true, result: { user_id: userId, role: 'moderator' } },
        `change-role on ${y}`,
      );
      for (const n of rec.nodes) {
        const u = await userOn(n.name, userId);
        t.same([u?.role, u?.is_active], [300, true], `${n.name}: the new user, a moderator`);
      }
      const key = await manage(node(x).dataDir, [
        'regenerate-api-key',
        '--realm',
        '',
        '--user',
        email,
      ]);
      t.equal(key.status, 0, `regenerate-api-key on ${x}`);
      apiKey = key.json.api_key as string;
      const me = await api(y).get({ email, api_key: apiKey }, 'users/me');
      t.equal(me.status, 200, `${y} takes the new API key`);
      const off = await manage(node(y).dataDir, [
        'deactivate-user',
        '--realm',
        '',
        '--user',
        email,
      ]);
      t.equal(off.status, 0, `deactivate-user on ${y}`);
      for (const n of rec.nodes) {
        t.equal((await userOn(n.name, userId))?.is_active, false, `${n.name}: deactivated`);
        const refused = await api(n.name).get({ email, api_key: apiKey }, 'users/me');
        t.equal(refused.status, 401, `${n.name}: the deactivated user’s key is refused`);
      }
    },
  );

  t.test('manage on a stopped node’s data directory: writes refused, reads served', async (t) => {
    const stopped = node(y);
    await killNode(dir, Number(y.slice(1)), 'SIGTERM');
    const writes: [string, string[], string?][] = [
      ['reactivate-user', ['--realm', '', '--user', email]],
      ['change-role', ['--realm', '', '--user', email, '--role', 'member']],
      [
        'create-user',
        ['--realm', '', '--email', 'x@y.example.com', '--full-name', 'X', '--without-password'],
      ],
      [
        'reset-password',
        ['--realm', '', '--user', email, '--password-stdin'],
        'another-secret-password\n',
      ],
      ['deactivate-realm', ['--realm', '']],
      [
        'create-realm',
        [
          '--name',
          'Offline',
          '--subdomain',
          'offline',
          '--owner-email',
          'a@offline.example.com',
          '--password-stdin',
        ],
        'secret-offline-password\n',
      ],
    ];
    for (const [command, args, stdin] of writes) {
      const r = await manage(stopped.dataDir, [command, ...args], stdin ? { stdin } : {});
      t.equal(r.status, 1, `${command}: refused`);
      t.equal(r.json.code, 'CLUSTER_NODE_NOT_RUNNING', `${command}: because the node is stopped`);
      t.match(
        r.json.error,
        /cluster node's data directory.*would reach no other node.*Start the node and run/,
        `${command}: says to run it while the node runs`,
      );
    }
    const imported = await manage(stopped.dataDir, [
      'import-realm',
      '--from',
      path.join(dir, 'no-such-archive.tar.gz'),
      '--subdomain',
      'imported',
    ]);
    t.match(
      imported.json.error,
      /does not run on a cluster node or its data directory/,
      'import-realm: refused',
    );

    const users = await manage(stopped.dataDir, [
      'list-users',
      '--realm',
      '',
      '--include-deactivated',
    ]);
    t.equal(users.status, 0, 'list-users is served');
    const listed = (
      users.json.users as { user_id: number; is_active: boolean; role: string }[]
    ).find((u) => u.user_id === userId);
    t.same(
      [listed?.is_active, listed?.role],
      [false, 'moderator'],
      'the copy is unchanged: the user still deactivated, still a moderator',
    );
    const realms = await manage(stopped.dataDir, ['list-realms']);
    t.equal(realms.status, 0, 'list-realms is served');
    t.notOk(
      (realms.json.realms as { string_id: string }[]).some((r) => r.string_id === 'offline'),
      'no realm was created',
    );
    const backup = await manage(stopped.dataDir, ['backup', '--to', path.join(dir, 'backup')]);
    t.equal(backup.status, 0, `backup is served ${backup.stderr}`);

    await startNodeAgain(dir, Number(y.slice(1)));
    const on = await manage(stopped.dataDir, ['reactivate-user', '--realm', '', '--user', email]);
    t.equal(on.status, 0, `reactivate-user once ${y} runs again`);
    for (const n of rec.nodes) {
      t.equal((await userOn(n.name, userId))?.is_active, true, `${n.name}: reactivated`);
      const me = await api(n.name).get({ email, api_key: apiKey }, 'users/me');
      t.equal(me.status, 200, `${n.name}: the key works again`);
    }
    await everyNodeRunning(t, dir);
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
