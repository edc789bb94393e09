/**
 * Going back to one process (docs/cluster.md "Going back to one process"; src/cluster/detach.ts),
 * for real. A two-node cluster (two NATS servers, nginx): through node n1 only, a channel of
 * messages, an upload, an image and its thumbnail, an external image shown through the image
 * proxy — so n2's copy has their rows but not their files, which are in the uploads bucket. The
 * nodes stopped (NATS still up), `npm run cluster -- detach` on n2's data directory; then, NATS
 * gone too, the single-process server (`npm start`'s main.js) on it serves the messages, the
 * upload's bytes, the thumbnail and the external image, takes a new message, and `manage` writes
 * offline. Refused, each directory left byte for byte as it was: n2's while n2 runs, a copy behind
 * the log, a copy with commits the log never acknowledged, a single-process directory, n2's with a
 * wrong CLUSTER_NAMESPACE. Skipped when nats-server or nginx is not installed.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { down, killNode, up, type ClusterRecord } from '../../src/cluster/local.js';
import Database from '../../src/storage/sqlite.js';
import { ApiClient, assertSuccess } from '../helpers/api.js';
import { startChild } from '../helpers/child-server.js';
import { clusterRealmFixture } from '../helpers/cluster-fixture.js';
import { reapOnExit, runWithEngines } from '../helpers/cluster-run.js';
import { channelContents } from '../helpers/messages.js';
import { manage } from '../helpers/manage.js';
import { DIST_SRC, plainNode } from '../helpers/plain-node.js';
import { thirdPartyImage } from '../helpers/third-party.js';
import { tinyPng } from '../helpers/images.js';
import { addEmoji, multipartBody, request, upload } from '../helpers/uploads.js';

await runWithEngines(run);

async function run(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-detach-'));
  const dir = path.join(root, 'cluster');
  t.teardown(async () => {
    await down(dir);
    fs.rmSync(root, { recursive: true, force: true });
  });
  const { thirdParty, cat } = await thirdPartyImage(t, '#2a6');

  let rec: ClusterRecord;
  try {
    rec = await up({
      dir,
      nodes: 2,
      env: { RATE_LIMITING: 'off', IMAGE_PROXY_ALLOW_PRIVATE: '1' },
    });
  } catch (err) {
    await down(dir);
    throw err;
  }
  reapOnExit(dir);
  const nodeUrl = (name: string) =>
    `http://127.0.0.1:${rec.nodes.find((n) => n.name === name)!.port}`;
  const n2Dir = rec.nodes[1]!.dataDir;
  const natsEnv: Record<string, string> = { CLUSTER_NATS: rec.natsUrls.join(',') };

  // Everything through n1: n2 applies the rows from the log, never the files.
  const fx = await clusterRealmFixture(nodeUrl('n1'), {}, rec.owner, 1);
  const n1 = new ApiClient(nodeUrl('n1'), fx);
  let data = Buffer.alloc(0);
  let uri = '';
  let photoPath = '';
  let thumbnail = '';
  let external = '';
  let iconUrl = '';
  let messages: [number, string][] = [];
  const emojiImage = tinyPng();
  t.test('messages, an upload, an image and an external image, through n1', async (t) => {
    assertSuccess(
      t,
      await n1.post('owner', 'users/me/subscriptions', {
        subscriptions: [{ name: 'kept' }],
        principals: [rec.owner.email, fx.users.hamlet!.email, fx.users.othello!.email],
      }),
      'subscribe',
    );
    for (let k = 0; k < 6; k++) {
      assertSuccess(
        t,
        await n1.post(k % 2 === 0 ? 'hamlet' : 'othello', 'messages', {
          type: 'stream',
          to: 'kept',
          topic: 'before the detach',
          content: `message ${k}`,
        }),
        `send ${k}`,
      );
    }
    data = Buffer.from('%PDF-1.4 a file only n1 and the bucket have '.repeat(300));
    const file = await upload(n1, 'hamlet', [{ filename: 'notes.pdf', data }]);
    t.equal(file.status, 200, 'upload a file through n1');
    uri = file.body.uri as string;
    const photo = await sharp({
      create: { width: 1200, height: 900, channels: 3, background: '#37a' },
    })
      .png()
      .toBuffer();
    const image = await upload(n1, 'hamlet', [
      { filename: 'photo.png', data: photo, contentType: 'image/png' },
    ]);
    t.equal(image.status, 200, 'upload an image through n1');
    photoPath = (image.body.uri as string).slice('/user_uploads/'.length);
    thumbnail = `/user_uploads/thumbnail/${photoPath}/840x560.webp`;
    // Made in the background: waited for up to a minute (a bound on a broken test).
    for (
      const end = Date.now() + 60_000;
      (await request(n1, 'GET', 'hamlet', thumbnail)).status !== 200;
    ) {
      if (Date.now() > end) throw new Error('no thumbnail');
      await new Promise((r) => setTimeout(r, 100));
    }
    const previewed = assertSuccess(
      t,
      await n1.post('hamlet', 'messages', {
        type: 'stream',
        to: 'kept',
        topic: 'before the detach',
        content: thirdParty.url('/cat.png'),
      }),
      'send an external image',
    );
    const shown = await n1.get('hamlet', `messages/${previewed.id as number}`);
    external = /src="(\/external_content\/[^"]+)"/.exec(
      (shown.body.message as { content: string }).content,
    )![1]!;
    assertSuccess(
      t,
      await addEmoji(n1, 'owner', 'kept_tick', {
        filename: 'tick.png',
        data: emojiImage,
        contentType: 'image/png',
      }),
      'add a custom emoji through n1',
    );
    const icon = multipartBody([
      { filename: 'icon.png', data: tinyPng(), contentType: 'image/png' },
    ]);
    const iconUp = await request(n1, 'POST', 'owner', '/api/v1/realm/icon', icon.body, {
      'content-type': icon.contentType,
    });
    t.equal(iconUp.status, 200, 'upload an organization icon through n1');
    iconUrl = (JSON.parse(iconUp.body.toString('utf8')) as { icon_url: string }).icon_url;
    messages = await channelContents(n1, 'kept');
  });

  t.test('refused while the node runs on the directory', async (t) => {
    const before = treeHash(n2Dir, (f) => !/^confab\.(sqlite3|lock|pid)/.test(f));
    const r = await runDetach(n2Dir, natsEnv);
    t.equal(r.code, 1, 'exit status 1');
    t.match(r.stderr, /a process holds .*'s lock .*stop the node first/, 'says why');
    t.equal(
      treeHash(n2Dir, (f) => !/^confab\.(sqlite3|lock|pid)/.test(f)),
      before,
      'its files are as they were (the database and lock are the running node’s)',
    );
    t.ok(hasClusterState(n2Dir), 'still a cluster copy');
  });

  t.test('both nodes stopped, n2 with everything but the files', async (t) => {
    // Stopped cleanly: n1 first, then n2 once a read through it (its read barrier) has applied
    // everything the log holds.
    await killNode(dir, 1, 'SIGTERM');
    t.same(
      await channelContents(new ApiClient(nodeUrl('n2'), fx), 'kept'),
      messages,
      'n2 caught up',
    );
    await killNode(dir, 2, 'SIGTERM');
    const n2Has = (p: string) => fs.existsSync(path.join(n2Dir, 'uploads', p));
    t.notOk(
      n2Has(uri.slice('/user_uploads/'.length)) ||
        n2Has(photoPath) ||
        n2Has(`thumbnail/${photoPath}`),
      'n2 never had the files (only n1 and the bucket did)',
    );
    // As a node whose own key lost the race for the cluster's at the first start has.
    fs.writeFileSync(
      path.join(n2Dir, 'image_proxy_key'),
      crypto.randomBytes(32).toString('hex') + '\n',
    );
  });

  t.test('refusals leave each directory byte for byte as it was', async (t) => {
    const refused = async (what: string, dataDir: string, re: RegExp, env = natsEnv) => {
      const before = treeHash(dataDir);
      const r = await runDetach(dataDir, env);
      t.equal(r.code, 1, `${what}: exit status 1`);
      t.match(r.stderr, re, `${what}: says why`);
      t.equal(r.stdout, '', `${what}: no summary`);
      t.equal(treeHash(dataDir), before, `${what}: the directory is as it was`);
    };
    const copyOf = (name: string, sql: string) => {
      const to = path.join(root, name);
      fs.cpSync(n2Dir, to, { recursive: true });
      const db = new Database(path.join(to, 'confab.sqlite3'));
      db.exec(sql);
      db.close();
      return to;
    };
    await refused(
      'a copy behind the log',
      copyOf('behind', 'UPDATE cluster_state SET applied = applied - 2'),
      /at log position \d+, and the log CONFAB_LOG holds entries up to \d+: it lacks 2 of the cluster's writes\. Start its node again.*stop it, and run the detach again/s,
    );
    await refused(
      'a copy with unacknowledged commits',
      copyOf('unacked', 'UPDATE cluster_state SET unacked = 1'),
      /commits of its own that the log never acknowledged.*Start its node again/s,
    );
    const single = path.join(root, 'single');
    const server = await startChild(single);
    await server.kill('SIGTERM');
    await refused('a single-process directory', single, /is not a cluster node's data directory/);
    await refused('a wrong namespace', n2Dir, /no stream CONFAB_LOG_elsewhere on NATS/, {
      ...natsEnv,
      CLUSTER_NAMESPACE: 'elsewhere',
    });
  });

  t.test('detached, one process serves everything, and manage writes offline', async (t) => {
    const r = await runDetach(n2Dir, natsEnv);
    t.equal(r.code, 0, `detach succeeds ${r.stderr}`);
    const summary = JSON.parse(r.stdout) as Record<string, unknown>;
    t.match(
      summary,
      {
        data_dir: n2Dir,
        applied: Number,
        uploads_fetched: 2,
        thumbnails_fetched: 1,
        emoji_fetched: 1,
        bytes_fetched: Number,
        keys_written: ['image_proxy_key'],
      },
      'the summary: both files, the thumbnail and the emoji fetched, the key written',
    );
    t.notOk(hasClusterState(n2Dir), 'no cluster_state left');
    await down(dir); // NATS too: the single process needs none of it

    const server = await startChild(n2Dir, {
      EXTERNAL_HOST: '127.0.0.1',
      IMAGE_PROXY_ALLOW_PRIVATE: '1',
    });
    try {
      const api = new ApiClient(server.url, fx);
      t.same(await channelContents(api, 'kept'), messages, 'the messages');
      const got = await request(api, 'GET', 'hamlet', uri);
      t.equal(got.status, 200, 'the upload');
      t.ok(got.body.equals(data), 'its bytes');
      const thumb = await request(api, 'GET', 'hamlet', thumbnail);
      t.equal(thumb.status, 200, 'the thumbnail');
      const meta = await sharp(thumb.body).metadata();
      t.same([meta.format, meta.width, meta.height], ['webp', 747, 560], 'a webp thumbnail');
      const listed = await api.get('hamlet', 'realm/emoji');
      const tick = Object.values(
        listed.body.emoji as Record<string, { name: string; source_url: string }>,
      ).find((e) => e.name === 'kept_tick');
      const emoji = await request(api, 'GET', null, tick?.source_url ?? '/');
      t.equal(emoji.status, 200, 'the custom emoji');
      t.ok(emoji.body.equals(emojiImage), 'its image');
      const reg = await api.post('hamlet', 'register', {});
      t.equal(reg.body.realm_icon_url, iconUrl, 'the organization icon, as before');
      const iconGot = await request(api, 'GET', null, iconUrl);
      t.equal(iconGot.status, 200, 'its image, fetched by the detach');
      const proxied = await request(api, 'GET', null, external);
      t.equal(proxied.status, 200, 'an external image of a message, through the image proxy');
      t.ok(proxied.body.equals(cat), 'the image itself');
      assertSuccess(
        t,
        await api.post('othello', 'messages', {
          type: 'stream',
          to: 'kept',
          topic: 'after the detach',
          content: 'one process again',
        }),
        'a new message',
      );
    } finally {
      await server.kill('SIGTERM');
    }
    const made = await manage(n2Dir, [
      'create-user',
      '--realm',
      '',
      '--email',
      'ophelia@example.com',
      '--full-name',
      'Ophelia',
      '--without-password',
    ]);
    t.equal(made.status, 0, `manage create-user offline ${made.stderr}`);
    const users = await manage(n2Dir, ['list-users', '--realm', '']);
    t.match(users.stdout, /ophelia@example\.com/, 'the new user is there');
  });
}

/** `npm run cluster -- detach --data-dir DIR` as a process: its exit code and output. */
function runDetach(
  dataDir: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const node = plainNode(
    [path.join(DIST_SRC, 'cluster', 'cli.js'), 'detach', '--data-dir', dataDir],
    env,
  );
  const child = spawn(node.file, node.args, { env: node.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** Every file under `dir` (but sockets) with its bytes' hash, as one hash; `keep` filters names. */
function treeHash(dir: string, keep: (name: string) => boolean = () => true): string {
  const h = crypto.createHash('sha256');
  const walk = (d: string) => {
    for (const e of fs
      .readdirSync(d, { withFileTypes: true })
      .sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(d, e.name);
      if (!keep(e.name)) continue;
      if (e.isDirectory()) {
        h.update(`d ${path.relative(dir, full)}\n`);
        walk(full);
      } else if (e.isFile()) {
        h.update(`f ${path.relative(dir, full)} `);
        h.update(fs.readFileSync(full));
        h.update('\n');
      }
    }
  };
  walk(dir);
  return h.digest('hex');
}

/** Whether the directory's database has the cluster's marker (read only). */
function hasClusterState(dataDir: string): boolean {
  const db = new Database(path.join(dataDir, 'confab.sqlite3'), { readonly: true });
  try {
    return (
      db
        .prepare<[], number>("SELECT count(*) FROM sqlite_schema WHERE name = 'cluster_state'")
        .pluck()
        .get() === 1
    );
  } finally {
    db.close();
  }
}
