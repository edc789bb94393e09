/**
 * Moving an existing single-process server onto a cluster (docs/cluster.md "Moving an existing
 * server onto a cluster"; src/cluster/seed.ts), for real. The single-process server (`npm start`'s
 * main.js) writes a data directory: two realms, their users, messages with reactions, an upload,
 * an image and its thumbnail, an external image shown through the image proxy, and the newest
 * message deleted (its id must never be given again); it is stopped. A three-node cluster (three
 * NATS servers, nginx) then starts with node 1 on a copy of that directory and CLUSTER_SEED=1,
 * nodes 2 and 3 empty (src/cluster/local.ts `up --seed`). Checked: every node serves both realms'
 * messages, users, upload, thumbnail and external image (signed with the single process's key,
 * now the cluster's); new writes to each realm through each node reach every node, with ids above
 * every id the single process gave, none shared across realms; a node on another single-process
 * database is refused, with or without CLUSTER_SEED, its database left byte for byte as it was;
 * the seeding node started again (CLUSTER_SEED still set) and a node started again empty serve
 * everything. Skipped when nats-server or nginx is not installed.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import { down, killNode, localNatsEnv, up, type ClusterRecord } from '../../src/cluster/local.js';
import { ApiClient, assertSuccess } from '../helpers/api.js';
import { firstOwner, startChild } from '../helpers/child-server.js';
import { clusterRealmFixture } from '../helpers/cluster-fixture.js';
import type { Fixture } from '../helpers/fixtures.js';
import { manage } from '../helpers/manage.js';
import { DIST_SRC, plainNode } from '../helpers/plain-node.js';
import { thirdPartyImage } from '../helpers/third-party.js';
import { multipartBody, request, upload } from '../helpers/uploads.js';
import { reapOnExit, runWithEngines, startAgainLogged } from '../helpers/cluster-run.js';
import { channelContents } from '../helpers/messages.js';

/** The single process's settings (EXTERNAL_HOST: realms by subdomain of 127.0.0.1). */
const SINGLE_ENV = { EXTERNAL_HOST: '127.0.0.1', IMAGE_PROXY_ALLOW_PRIVATE: '1' };

await runWithEngines(run);

/** One realm of the single-process server, as the cluster must serve it. */
type Realm = {
  name: string;
  /** The subdomain ('' for the root domain's realm). */
  sub: string;
  fx: Fixture;
  /** The channel's messages as the single process served them: [id, content]. */
  messages: [number, string][];
  emails: string[];
};

/**
 * A file the single process stored, the thumbnail of an image it stored, and the image proxy's
 * URL of an external image in a message it rendered.
 */
type Upload = { uri: string; data: Buffer; thumbnail: string; external: string; icon: string };

/** The Host header choosing a realm by its subdomain (EXTERNAL_HOST's host is 127.0.0.1). */
function hostFor(sub: string, port: number): Record<string, string> {
  return sub === '' ? {} : { host: `${sub}.127.0.0.1:${port}` };
}

async function run(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-seed-'));
  const single = path.join(root, 'single');
  const other = path.join(root, 'other');
  const dir = path.join(root, 'cluster');
  t.teardown(async () => {
    await down(dir);
    fs.rmSync(root, { recursive: true, force: true });
  });

  const { thirdParty, cat } = await thirdPartyImage(t, '#c22');
  const { realms, file, deletedId, largestBefore } = await singleProcessData(
    single,
    thirdParty.url('/cat.png'),
  );
  // Another single-process data directory (its first realm only), for the refusals.
  const otherServer = await startChild(other, SINGLE_ENV);
  await otherServer.kill('SIGTERM');
  const otherDb = path.join(other, 'confab.sqlite3');
  const otherHash = sha256(otherDb);

  let rec: ClusterRecord;
  try {
    rec = await up({
      dir,
      nodes: 3,
      seedFrom: single,
      env: { RATE_LIMITING: 'off', CLUSTER_ID_BLOCK_SIZE: '64', IMAGE_PROXY_ALLOW_PRIVATE: '1' },
    });
  } catch (err) {
    await down(dir);
    throw err;
  }
  reapOnExit(dir);
  const nodeUrl = (name: string) =>
    `http://127.0.0.1:${rec.nodes.find((n) => n.name === name)!.port}`;
  const client = (url: string, r: Realm) => new ApiClient(url, r.fx, hostFor(r.sub, rec.proxyPort));

  /** Every node serves each realm's channel as the single process did, plus `extra`. */
  const servesEverything = async (t: Test, names: string[], extra: [number, string][][] = []) => {
    for (const name of names) {
      for (const [i, r] of realms.entries()) {
        const api = client(nodeUrl(name), r);
        const got = await channelContents(api, 'old');
        t.same(
          got.filter(([id]) => id <= largestBefore),
          r.messages,
          `${name}: the ${r.messages.length} messages the single process had in ${r.name}`,
        );
        t.same(
          got.filter(([id]) => id > largestBefore),
          extra[i] ?? [],
          `${name}: and the cluster's new ones in ${r.name}`,
        );
        const users = assertSuccess(t, await api.get('hamlet', 'users'), `${name}: users`);
        const emails = (users.members as { email: string }[]).map((u) => u.email);
        t.ok(
          r.emails.every((e) => emails.includes(e)),
          `${name}: the users of ${r.name} (${r.emails.join(', ')})`,
        );
      }
      const got = await request(client(nodeUrl(name), realms[0]!), 'GET', 'hamlet', file.uri);
      t.equal(got.status, 200, `${name}: the single process's upload`);
      t.ok(got.body.equals(file.data), `${name}: its bytes`);
      const thumb = await request(
        client(nodeUrl(name), realms[0]!),
        'GET',
        'hamlet',
        file.thumbnail,
      );
      t.equal(thumb.status, 200, `${name}: the single process's thumbnail`);
      const meta = await sharp(thumb.body).metadata();
      t.same([meta.format, meta.width, meta.height], ['webp', 747, 560], `${name}: the thumbnail`);
      // Signed with the single process's key, which is the cluster's.
      const proxied = await request(client(nodeUrl(name), realms[0]!), 'GET', null, file.external);
      t.equal(proxied.status, 200, `${name}: an external image of a message, through the proxy`);
      t.ok(proxied.body.equals(cat), `${name}: the image itself`);
      const icon = await request(client(nodeUrl(name), realms[0]!), 'GET', null, file.icon);
      t.equal(icon.status, 200, `${name}: the single process's organization icon`);
    }
  };

  t.test('every node serves both realms’ messages, users, upload and thumbnail', async (t) => {
    await servesEverything(
      t,
      rec.nodes.map((n) => n.name),
    );
  });

  const added: [number, string][][] = realms.map(() => []);
  t.test('new writes to each realm through any node reach every node', async (t) => {
    for (const [i, r] of realms.entries()) {
      for (const n of rec.nodes) {
        const content = `${r.name} through ${n.name}`;
        const sent = await client(nodeUrl(n.name), r).post('othello', 'messages', {
          type: 'stream',
          to: 'old',
          topic: 'after the move',
          content,
        });
        added[i]!.push([
          assertSuccess(t, sent, `send ${content}`).id as number,
          `<p>${content}</p>`,
        ]);
      }
      // A row the single process wrote, changed through the cluster.
      const first = r.messages[0]![0];
      assertSuccess(
        t,
        await client(nodeUrl('n3'), r).post('hamlet', `messages/${first}/reactions`, {
          emoji_name: 'tada',
        }),
        `${r.name}: a reaction on message ${first} through n3`,
      );
    }
    for (const n of rec.nodes) {
      for (const [i, r] of realms.entries()) {
        const got = await channelContents(client(nodeUrl(n.name), r), 'old');
        t.same(
          got.filter(([id]) => id > largestBefore),
          added[i],
          `${n.name}: the ${r.name} messages sent through every node`,
        );
        const m = assertSuccess(
          t,
          await client(nodeUrl(n.name), r).get('hamlet', `messages/${r.messages[0]![0]}`),
        ).message as { reactions: { emoji_name: string }[] };
        t.ok(
          m.reactions.some((x) => x.emoji_name === 'tada'),
          `${n.name}: the reaction on ${r.name}'s first message`,
        );
      }
    }
  });

  t.test('new ids never reuse one the single process gave', (t) => {
    const ids = added.flat().map(([id]) => id);
    t.ok(
      ids.every((id) => id > deletedId),
      `every new message id is above the deleted message's ${deletedId} (${ids.join(', ')})`,
    );
    const [a, b] = added.map((m) => new Set(m.map(([id]) => id)));
    t.same(
      [...a!].filter((id) => b!.has(id)),
      [],
      'no id in both realms',
    );
    t.end();
  });

  t.test(
    'a node on another single-process database is refused, the database untouched',
    async (t) => {
      const env = {
        CLUSTER_NODE: 'n4',
        CLUSTER_NATS: rec.natsUrls.join(','),
        CLUSTER_REPLICAS: '3',
        DATA_DIR: other,
        PORT: '0',
        HOST: '127.0.0.1',
        EXTERNAL_HOST: `127.0.0.1:${rec.proxyPort}`,
      };
      const plain = await clusterNode(env);
      t.equal(plain.code, 78, 'without CLUSTER_SEED: refused (EX_CONFIG)');
      t.match(plain.output, /refusing to start: .* holds a single-process database \(1 realm\)/);
      t.match(plain.output, /CLUSTER_SEED=1/, 'the message says how to move it');
      t.equal(sha256(otherDb), otherHash, 'the database is byte for byte as it was');

      const seeding = await clusterNode({ ...env, CLUSTER_SEED: '1' });
      t.equal(seeding.code, 78, 'with CLUSTER_SEED: refused (EX_CONFIG)');
      t.match(seeding.output, /refusing to start: CLUSTER_SEED: the cluster's log is not empty/);
      t.match(seeding.output, /seeded by node n1/, 'the message names the seeding node');
      t.equal(sha256(otherDb), otherHash, 'the database is byte for byte as it was');
      t.notOk(fs.existsSync(`${otherDb}-wal`), 'no write-ahead log left beside it');

      const r = realms[0]!;
      const sent = await client(rec.url, r).post('hamlet', 'messages', {
        type: 'stream',
        to: 'old',
        topic: 'after the refusals',
        content: 'still here',
      });
      assertSuccess(t, sent, 'the cluster still takes writes');
      added[0]!.push([sent.body.id as number, '<p>still here</p>']);
    },
  );

  t.test(
    'the seeding node started again (CLUSTER_SEED still set) and a node started again empty',
    async (t) => {
      await killNode(dir, 1, 'SIGTERM');
      const log1 = await startAgainLogged(dir, 1);
      await killNode(dir, 2, 'SIGTERM');
      const log2 = await startAgainLogged(dir, 2, true);
      t.match(log1, /CLUSTER_SEED: .* is this cluster's copy; nothing to seed/, 'n1: no seed');
      t.match(log2, /started from the snapshot at log position \d+/, 'n2: from a snapshot');
      await servesEverything(t, ['n1', 'n2'], added);
    },
  );
}

/**
 * The single-process server on `dir`: its first realm (first boot) and a second one (`manage
 * create-realm`), each with hamlet and othello, a channel of messages with reactions; an upload
 * in the first; the newest message deleted. Stopped at the end.
 */
async function singleProcessData(
  dir: string,
  externalImage: string,
): Promise<{
  realms: Realm[];
  file: Upload;
  deletedId: number;
  largestBefore: number;
}> {
  const server = await startChild(dir, SINGLE_ENV);
  try {
    const written = firstOwner(dir);
    const owner1 = { email: written.email, password: written.password, api_key: written.apiKey };
    const made = await manage(
      dir,
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
    if (made.status !== 0) throw new Error(`create-realm: ${made.stderr}`);
    const port = Number(new URL(server.url).port);
    const realms: Realm[] = [];
    for (const [name, sub, owner] of [
      ['first', '', owner1],
      [
        'second',
        'second',
        {
          email: 'boss@second.example.com',
          password: 'secret-boss',
          api_key: made.json.api_key as string,
        },
      ],
    ] as const) {
      const fx = await clusterRealmFixture(server.url, hostFor(sub, port), owner);
      const api = new ApiClient(server.url, fx, hostFor(sub, port));
      const created = await api.post('owner', 'users/me/subscriptions', {
        subscriptions: [{ name: 'old' }],
        principals: [owner.email, fx.users.hamlet!.email, fx.users.othello!.email],
      });
      if (created.status !== 200) throw new Error(`subscribe: ${created.text}`);
      for (let k = 0; k < 12; k++) {
        const who = k % 2 === 0 ? 'hamlet' : 'othello';
        const r = await api.post(who, 'messages', {
          type: 'stream',
          to: 'old',
          topic: 'before the move',
          content: `${name} ${k}`,
        });
        if (r.status !== 200) throw new Error(`send: ${r.text}`);
        if (k % 4 === 0) {
          const react = await api.post('owner', `messages/${r.body.id as number}/reactions`, {
            emoji_name: 'smile',
          });
          if (react.status !== 200) throw new Error(`react: ${react.text}`);
        }
      }
      realms.push({
        name,
        sub,
        fx,
        messages: [],
        emails: Object.values(fx.users).map((u) => u.email),
      });
    }
    const first = new ApiClient(server.url, realms[0]!.fx);
    const data = Buffer.from('%PDF-1.4 single-process file '.repeat(500));
    const up = await upload(first, 'hamlet', [{ filename: 'minutes.pdf', data }]);
    if (up.status !== 200) throw new Error(`upload: ${up.text}`);
    const uri = up.body.uri as string;
    // An image, whose thumbnail the single process makes in the background: waited for.
    const photo = await sharp({
      create: { width: 1200, height: 900, channels: 3, background: '#a73' },
    })
      .png()
      .toBuffer();
    const image = await upload(first, 'hamlet', [
      { filename: 'photo.png', data: photo, contentType: 'image/png' },
    ]);
    if (image.status !== 200) throw new Error(`upload: ${image.text}`);
    const thumbnail = `/user_uploads/thumbnail/${(image.body.uri as string).slice('/user_uploads/'.length)}/840x560.webp`;
    // Made in the background: waited for up to a minute (a bound on a broken test).
    for (
      const end = Date.now() + 60_000;
      (await request(first, 'GET', 'hamlet', thumbnail)).status !== 200;
    ) {
      if (Date.now() > end) throw new Error('no thumbnail');
      await new Promise((r) => setTimeout(r, 100));
    }
    const previewed = await first.post('hamlet', 'messages', {
      type: 'stream',
      to: 'old',
      topic: 'before the move',
      content: externalImage,
    });
    if (previewed.status !== 200) throw new Error(`send: ${previewed.text}`);
    const shown = await first.get('hamlet', `messages/${previewed.body.id as number}`);
    const external = /src="(\/external_content\/[^"]+)"/.exec(
      (shown.body.message as { content: string }).content,
    )![1]!;
    const linked = await first.post('hamlet', 'messages', {
      type: 'stream',
      to: 'old',
      topic: 'before the move',
      content: `[minutes](${uri})`,
    });
    if (linked.status !== 200) throw new Error(`send: ${linked.text}`);
    // The first realm's organization icon.
    const iconForm = multipartBody([
      { filename: 'icon.png', data: photo, contentType: 'image/png' },
    ]);
    const iconUp = await request(first, 'POST', 'owner', '/api/v1/realm/icon', iconForm.body, {
      'content-type': iconForm.contentType,
    });
    if (iconUp.status !== 200) throw new Error(`icon: ${iconUp.body.toString('utf8')}`);
    const icon = (JSON.parse(iconUp.body.toString('utf8')) as { icon_url: string }).icon_url;
    // The newest message of all, deleted: the cluster must not give its id again.
    const second = new ApiClient(server.url, realms[1]!.fx, hostFor('second', port));
    const doomed = await second.post('hamlet', 'messages', {
      type: 'stream',
      to: 'old',
      topic: 'before the move',
      content: 'deleted before the move',
    });
    if (doomed.status !== 200) throw new Error(`send: ${doomed.text}`);
    const deletedId = doomed.body.id as number;
    const gone = await second.delete('owner', `messages/${deletedId}`);
    if (gone.status !== 200) throw new Error(`delete: ${gone.text}`);
    for (const r of realms)
      r.messages = await channelContents(
        new ApiClient(server.url, r.fx, hostFor(r.sub, port)),
        'old',
      );
    const largestBefore = Math.max(...realms.flatMap((r) => r.messages.map(([id]) => id)));
    if (largestBefore >= deletedId) throw new Error('the deleted message is not the newest');
    return { realms, file: { uri, data, thumbnail, external, icon }, deletedId, largestBefore };
  } finally {
    await server.kill('SIGTERM');
  }
}

/** A cluster node (src/cluster/main.ts) that is expected to stop: its exit code and output. */
function clusterNode(
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const node = plainNode([path.join(DIST_SRC, 'cluster', 'main.js')], {
    ...localNatsEnv(),
    ...env,
  });
  const child = spawn(node.file, node.args, { env: node.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

function sha256(file: string): string {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}
