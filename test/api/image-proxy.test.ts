/**
 * The image proxy end to end (GET /external_content/<digest>/<hex url>), with a local HTTP server
 * as the third-party host: a message's image preview points at the proxy with a URL signed by
 * the server's key (kept in DATA_DIR, mode 0600, across restarts); the proxy serves the image
 * with the headers such a proxy sends, and caches it; it refuses bad signatures, answers that
 * are not images or are too large, private and loopback addresses (by literal and by name),
 * and redirects into refused addresses or to other schemes, or too many of them.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { DEFAULT_IMAGE_PROXY, ImageProxy } from '../../src/media/image-proxy.js';
import { createServer } from '../../src/server.js';
import { assertSuccess } from '../helpers/api.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';
import { startThirdParty, type ThirdParty } from '../helpers/third-party.js';
import { download } from '../helpers/uploads.js';

const PNG = await sharp({
  create: { width: 40, height: 30, channels: 3, background: { r: 200, g: 10, b: 10 } },
})
  .png()
  .toBuffer();

function thirdParty(t: Parameters<typeof startThirdParty>[0]): Promise<ThirdParty> {
  let self: ThirdParty | null = null;
  const p = startThirdParty(t, {
    '/cat.png': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'public, max-age=600' });
      res.end(PNG);
    },
    '/page.png': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<script>alert(1)</script>');
    },
    '/vector.svg': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/svg+xml' });
      res.end('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    },
    '/big.png': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': '50000' });
      res.end(Buffer.alloc(50000));
    },
    '/big-chunked.png': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      for (let i = 0; i < 10; i++) res.write(Buffer.alloc(5000));
      res.end();
    },
    '/to-loopback.png': (_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.2:${self!.port}/cat.png` });
      res.end();
    },
    '/to-metadata.png': (_req, res) => {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' });
      res.end();
    },
    '/to-file.png': (_req, res) => {
      res.writeHead(302, { location: 'file:///etc/passwd' });
      res.end();
    },
    '/loop.png': (_req, res) => {
      res.writeHead(302, { location: '/loop.png' });
      res.end();
    },
    '/to-cat.png': (_req, res) => {
      res.writeHead(301, { location: '/cat.png' });
      res.end();
    },
  });
  return p.then((tp) => (self = tp));
}

function signed(key: string, url: string): string {
  const digest = crypto.createHmac('sha1', key).update(url).digest('hex');
  return `/external_content/${digest}/${Buffer.from(url).toString('hex')}`;
}

t.test('previews go through the proxy, which serves and caches the image', async (t) => {
  const tp = await thirdParty(t);
  const { api, dataDir, server } = await startServer(t, {
    imageProxyAllowPrivate: ['127.0.0.1'],
    imageProxyLimits: { maxBytes: 20000 },
  });
  const keyFile = path.join(dataDir, 'image_proxy_key');
  t.equal(fs.statSync(keyFile).mode & 0o777, 0o600, 'the key file is private');
  const key = fs.readFileSync(keyFile, 'utf8').trim();

  await api.post('iago', 'users/me/subscriptions', { subscriptions: [{ name: 'pics' }] });
  const id = await sendChannelMessage(api, 'iago', 'pics', 'cats', tp.url('/cat.png'));
  const m = assertSuccess(t, await api.get('iago', 'messages', { message_ids: [id] })).messages as {
    content: string;
  }[];
  const proxied = signed(key, tp.url('/cat.png'));
  t.equal(
    m[0]!.content,
    `<div class="message_inline_image"><a href="${tp.url('/cat.png')}"><img src="${proxied}"></a></div>`,
    "the reference's markup, the image through the proxy",
  );

  const r = await download(api, null, proxied);
  t.equal(r.status, 200, 'the proxy needs no credentials: the signature is the permission');
  t.equal(r.headers['content-type'], 'image/png');
  t.ok(r.body.equals(PNG), 'the image itself');
  t.equal(r.headers['x-content-type-options'], 'nosniff');
  t.match(r.headers['content-security-policy'], /default-src 'none'/);
  t.equal(r.headers['cache-control'], 'public, max-age=600', "the host's cache policy");
  const again = await download(api, null, proxied);
  t.ok(again.body.equals(PNG));
  t.equal(tp.hits.get('/cat.png'), 1, 'the second request is served from the cache');
  t.equal(server.context.imageProxy.size.entries, 1);

  const followed = await download(api, null, signed(key, tp.url('/to-cat.png')));
  t.equal(followed.status, 200, 'a redirect to an allowed address is followed');

  const bad = await download(api, null, signed('not the key', tp.url('/cat.png')));
  t.equal(bad.status, 403, 'a URL the server did not sign is refused');
  const tampered = proxied.slice(0, -2) + '41';
  t.equal((await download(api, null, tampered)).status, 403, 'a changed URL is refused');
  t.equal((await download(api, null, '/external_content/xyz/zz')).status, 403);

  for (const [p, what] of [
    ['/page.png', 'an answer that is not an image'],
    ['/vector.svg', 'SVG (it can carry script)'],
    ['/big.png', 'an image larger than the limit'],
    ['/big-chunked.png', 'a larger image without a declared length'],
    ['/missing.png', "the host's 404"],
  ] as const) {
    const res = await download(api, null, signed(key, tp.url(p)));
    t.equal(res.status, 404, `${what} is refused`);
    t.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
  }

  for (const [p, what] of [
    ['/to-loopback.png', 'another loopback address'],
    ['/to-metadata.png', 'the link-local metadata address'],
    ['/to-file.png', 'a file: URL'],
    ['/loop.png', 'an endless chain'],
  ] as const) {
    const res = await download(api, null, signed(key, tp.url(p)));
    t.equal(res.status, 404, `a redirect to ${what} is not followed`);
  }
  t.equal(tp.hits.get('/loop.png'), 5, 'at most four redirects are followed');
  t.equal(tp.hits.get('/cat.png'), 2, 'no refused redirect reached the image');
});

t.test('without the setting, private and loopback addresses are refused', async (t) => {
  const tp = await thirdParty(t);
  const { api, dataDir } = await startServer(t);
  const key = fs.readFileSync(path.join(dataDir, 'image_proxy_key'), 'utf8').trim();
  for (const url of [
    tp.url('/cat.png'),
    `http://localhost:${tp.port}/cat.png`,
    `http://[::1]:${tp.port}/cat.png`,
    `http://0.0.0.0:${tp.port}/cat.png`,
    `http://[::ffff:127.0.0.1]:${tp.port}/cat.png`,
    'http://10.0.0.1/cat.png',
    'http://169.254.169.254/cat.png',
    'ftp://example.com/cat.png',
  ]) {
    const res = await download(api, null, signed(key, url));
    t.equal(res.status, 404, `${url} is refused`);
  }
  t.equal(tp.hits.get('/cat.png'), undefined, 'the local host was never contacted');
});

t.test('the key survives a restart, so old previews keep working', async (t) => {
  const dataDir = t.testdir();
  const first = await startServer(t, { dataDir, imageProxyAllowPrivate: true });
  const key = fs.readFileSync(path.join(dataDir, 'image_proxy_key'), 'utf8');
  await first.server.close();
  const second = await createServer({ host: '127.0.0.1', port: 0, dataDir, rateLimits: null });
  t.teardown(() => second.close());
  t.equal(fs.readFileSync(path.join(dataDir, 'image_proxy_key'), 'utf8'), key);
  t.equal(second.context.config.imageProxyKey, key.trim(), 'the same key');
});

t.test('the cache is bounded in bytes and in entries, least recently used first', async (t) => {
  const tp = await startThirdParty(
    t,
    Object.fromEntries(
      ['/a.png', '/b.png', '/c.png', '/d.png'].map((p) => [
        p,
        (_req: unknown, res: ServerResponse) => {
          res.writeHead(200, { 'content-type': 'image/png' });
          res.end(PNG);
        },
      ]),
    ),
  );
  const dataDir = t.testdir();
  const cacheDir = path.join(dataDir, 'cache', 'external_content');
  const byBytes = new ImageProxy(dataDir, {
    ...DEFAULT_IMAGE_PROXY,
    allowPrivate: ['127.0.0.1'],
    cacheBytes: PNG.length * 2 + PNG.length / 2,
  });
  await byBytes.get(tp.url('/a.png'));
  await byBytes.get(tp.url('/b.png'));
  await byBytes.get(tp.url('/a.png')); // a is now the most recently used
  await byBytes.get(tp.url('/c.png'));
  t.same(byBytes.size, { bytes: PNG.length * 2, entries: 2 }, 'two images fit the byte bound');
  t.equal(tp.hits.get('/a.png'), 1, 'a was served from the cache');
  await byBytes.get(tp.url('/b.png'));
  t.equal(tp.hits.get('/b.png'), 2, 'b, the least recently used, had been evicted');
  await byBytes.get(tp.url('/c.png'));
  t.equal(tp.hits.get('/c.png'), 1, 'c stayed');
  // Evicted files are removed in the background: wait for it (bounded), never for a fixed time.
  for (let i = 0; i < 200 && fs.readdirSync(cacheDir).length > 2; i++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(fs.readdirSync(cacheDir).length, 2, 'evicted files leave the disk');

  const byEntries = new ImageProxy(t.testdir(), {
    ...DEFAULT_IMAGE_PROXY,
    allowPrivate: ['127.0.0.1'],
    cacheEntries: 3,
  });
  for (const p of ['/a.png', '/b.png', '/c.png', '/d.png']) await byEntries.get(tp.url(p));
  t.equal(byEntries.size.entries, 3, 'at most the configured number of answers is kept');
  await byEntries.get(tp.url('/a.png'));
  t.equal(tp.hits.get('/a.png'), 3, 'the oldest went first');
});
