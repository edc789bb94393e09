/**
 * Ids in a cluster of several realms (docs/cluster.md "Ids"), for real: three NATS servers, three
 * Confab nodes and nginx (src/cluster/local.ts), blocks of 64 ids so that realms go through many
 * of them. The first realm's lease is held by one node, a second realm is created (`manage
 * create-realm`) on another node, which then holds its lease; concurrent writes to both through
 * the proxy (messages, reactions, drafts, a new channel) must give ids that no two realms share,
 * that increase within each realm, and rows every node serves, none overwritten by the other
 * realm's. Then the second realm's owner is killed: its new owner's ids come from fresh blocks.
 * Skipped when nats-server or nginx is not installed.
 */
import path from 'node:path';
import t, { type Test } from 'tap';
import { killNode } from '../../src/cluster/local.js';
import { ID_BLOCKS_KEY } from '../../src/cluster/id-blocks.js';
import { ApiClient, assertSuccess } from '../helpers/api.js';
import { manage } from '../helpers/manage.js';
import { clusterRealmFixture } from '../helpers/cluster-fixture.js';
import { kvNumber, leaseHolder } from '../helpers/cluster-kv.js';
import { runWithEngines, upForTest } from '../helpers/cluster-run.js';

const BLOCK = 64;

await runWithEngines(run);

type Sent = { id: number; content: string; sender: number };

async function run(): Promise<void> {
  const { dir, rec } = await upForTest('cluster-ids', { CLUSTER_ID_BLOCK_SIZE: String(BLOCK) });
  const nodeUrl = (name: string) =>
    `http://127.0.0.1:${rec.nodes.find((n) => n.name === name)!.port}`;
  const hostOf = (sub: string) => ({ host: `${sub}.127.0.0.1:${rec.proxyPort}` });

  // The first realm (bootstrapped on an empty cluster): its owner and two users.
  const first = await clusterRealmFixture(rec.url, {}, rec.owner);
  const firstOwner = await leaseHolder(rec, 1);

  // A second realm, created on another node, which takes its lease.
  const creator = rec.nodes.find((n) => n.name !== firstOwner)!;
  const made = await manage(
    creator.dataDir,
    [
      'create-realm',
      '--name',
      'Second',
      '--subdomain',
      'second',
      '--owner-email',
      'boss@second.example.com',
      '--password-stdin',
    ],
    { stdin: 'secret-boss\n' },
  );
  if (made.status !== 0) throw new Error(`create-realm on ${creator.name}: ${made.stderr}`);
  const secondId = made.json.realm_id as number;
  const secondOwner = await leaseHolder(rec, secondId);
  const second = await clusterRealmFixture(rec.url, hostOf('second'), {
    email: 'boss@second.example.com',
    api_key: made.json.api_key as string,
    password: 'secret-boss',
  });

  const realms = [
    { name: 'first', fx: first, headers: {} },
    { name: 'second', fx: second, headers: hostOf('second') },
  ];
  const clientFor = (url: string, i: number) =>
    new ApiClient(url, realms[i]!.fx, realms[i]!.headers);

  t.test('a second realm created on another node is its own and that node’s', (t) => {
    t.not(secondId, 1, `the second realm’s id: ${secondId}`);
    t.equal(secondOwner, creator.name, `${creator.name}, where it was created, owns it`);
    t.not(secondOwner, firstOwner, `the first realm’s owner is another node (${firstOwner})`);
    t.end();
  });

  t.test('a realm import is refused on a cluster node', async (t) => {
    const r = await manage(creator.dataDir, [
      'import-realm',
      '--from',
      path.join(dir, 'no-such-archive.tar.gz'),
      '--subdomain',
      'imported',
    ]);
    t.not(r.status, 0, 'refused');
    t.match(r.stderr, /does not run on a cluster node/, 'import-realm: refused with its reason');
  });

  // Concurrent writes into both realms through the proxy.
  const sent: Sent[][] = [[], []];
  const drafts: number[][] = [[], []];
  const channels: number[] = [];
  const failures: string[] = [];
  const write = async (t: Test, i: number) => {
    const api = clientFor(rec.url, i);
    assertSuccess(
      t,
      await api.post('owner', 'users/me/subscriptions', {
        subscriptions: [{ name: 'ids' }],
        principals: ['hamlet', 'othello'].map((u) => realms[i]!.fx.users[u]!.email),
      }),
      `${realms[i]!.name}: a channel`,
    );
    const sender = async (who: string, s: number) => {
      for (let k = 0; k < 40; k++) {
        const content = `${realms[i]!.name} ${who} ${k}`;
        const r = await api.post(who, 'messages', {
          type: 'stream',
          to: 'ids',
          topic: 'burst',
          content,
        });
        if (r.status !== 200) {
          failures.push(`${content}: ${r.status} ${r.text}`);
          continue;
        }
        const id = r.body.id as number;
        sent[i]!.push({ id, content: `<p>${content}</p>`, sender: s });
        if (k % 8 === 0) {
          const react = await api.post(who, `messages/${id}/reactions`, { emoji_name: 'smile' });
          if (react.status !== 200) failures.push(`reaction on ${id}: ${react.text}`);
        }
        if (k % 10 === 0) {
          const d = await api.post(who, 'drafts', {
            drafts: [{ type: '', to: [], topic: '', content }],
          });
          if (d.status !== 200) failures.push(`draft: ${d.text}`);
          else drafts[i]!.push(...(d.body.ids as number[]));
        }
      }
    };
    const made = async () => {
      const r = await api.post('owner', 'users/me/subscriptions', {
        subscriptions: [{ name: `new in ${realms[i]!.name}` }],
      });
      if (r.status !== 200) failures.push(`new channel: ${r.text}`);
      const got = await api.get('owner', 'get_stream_id', { stream: `new in ${realms[i]!.name}` });
      channels.push(got.body.stream_id as number);
    };
    await Promise.all([sender('owner', 0), sender('hamlet', 1), sender('othello', 2), made()]);
  };
  t.test('concurrent writes into both realms through the proxy', async (t) => {
    await Promise.all([write(t, 0), write(t, 1)]);
    t.same(failures, [], 'every write succeeded');
  });

  t.test('ids: disjoint across realms, increasing within each', async (t) => {
    const ids = sent.map((s) => s.map((m) => m.id));
    const inFirst = new Set(ids[0]);
    t.same(
      ids[1]!.filter((id) => inFirst.has(id)),
      [],
      'no message id in both realms',
    );
    const draftsOfFirst = new Set(drafts[0]);
    t.same(
      drafts[1]!.filter((id) => draftsOfFirst.has(id)),
      [],
      'no draft id in both realms',
    );
    t.not(channels[0], channels[1], 'the two new channels have different ids');
    for (const [i, realm] of sent.entries())
      for (const s of [0, 1, 2]) {
        const mine = realm.filter((m) => m.sender === s).map((m) => m.id);
        t.ok(
          mine.every((id, k) => k === 0 || id > mine[k - 1]!),
          `${realms[i]!.name}, sender ${s}: ${mine.length} ids, each above the one sent before`,
        );
      }
    for (const [i, realm] of ids.entries()) {
      const span = Math.max(...realm) - Math.min(...realm);
      t.ok(span >= BLOCK, `${realms[i]!.name}: its messages went through several blocks (${span})`);
    }
    const counter = await kvNumber(rec, ID_BLOCKS_KEY);
    t.ok(Math.max(...ids.flat()) < counter, `every id is below the claimed counter (${counter})`);
  });

  t.test('every node serves every message of both realms, none overwritten', async (t) => {
    for (const n of rec.nodes) {
      for (const [i, realm] of realms.entries()) {
        const api = clientFor(nodeUrl(n.name), i);
        const got = await fetchChannel(api, 'ids');
        const want = [...sent[i]!].sort((a, b) => a.id - b.id);
        t.same(
          got.map((m) => [m.id, m.content]),
          want.map((m) => [m.id, m.content]),
          `${n.name}: the ${want.length} messages of the ${realm.name} realm`,
        );
        const reacted = got.filter((m) => m.reactions.length > 0).length;
        t.equal(reacted, 15, `${n.name}: the ${realm.name} realm’s reactions`);
        const d = assertSuccess(t, await api.get('hamlet', 'drafts'), 'drafts');
        t.equal(
          (d.drafts as { content: string }[]).filter((x) => x.content.startsWith(realm.name))
            .length,
          4,
          `${n.name}: hamlet’s drafts in the ${realm.name} realm`,
        );
      }
    }
  });

  t.test('a new owner after failover gives ids from fresh blocks', async (t) => {
    const before = await kvNumber(rec, ID_BLOCKS_KEY);
    const owner = await leaseHolder(rec, secondId);
    await killNode(dir, Number(owner.slice(1)));
    const api = clientFor(rec.url, 1);
    let id = 0;
    for (const deadline = Date.now() + 60_000; id === 0 && Date.now() < deadline;) {
      const r = await api
        .post('hamlet', 'messages', {
          type: 'stream',
          to: 'ids',
          topic: 'after',
          content: 'after failover',
        })
        .catch(() => null);
      if (r?.status === 200) id = r.body.id as number;
      else await sleep(200);
    }
    const next = await leaseHolder(rec, secondId);
    t.not(next, owner, `${next} owns the second realm now`);
    t.ok(id >= before, `its id ${id} is from a block claimed after the failover (≥ ${before})`);
    t.ok(id > Math.max(...sent[1]!.map((m) => m.id)), 'above every id the realm had before');
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function fetchChannel(
  api: ApiClient,
  channel: string,
): Promise<{ id: number; content: string; reactions: unknown[] }[]> {
  const r = await api.get('hamlet', 'messages', {
    anchor: 'oldest',
    num_before: 0,
    num_after: 5000,
    narrow: [
      { operator: 'channel', operand: channel },
      { operator: 'topic', operand: 'burst' },
    ],
  });
  if (r.status !== 200) throw new Error(`fetch failed: ${r.text}`);
  return r.body.messages as { id: number; content: string; reactions: unknown[] }[];
}
