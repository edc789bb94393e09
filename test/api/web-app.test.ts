/**
 * Serving the browser app (src/http/static-files.ts; docs/web.md "Serving the app"): `/` answers
 * the build's index.html (no-cache, ETag, 304, the page's security headers), `/static/*` its
 * content-hashed assets (immutable), each as the br or gzip sibling the build made when the
 * client accepts it; no build: a page saying how to make one. Outside the API's rate limits.
 * Against a build directory each test makes (the contract's layout: index.html, static/, with
 * .br and .gz siblings).
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import t, { type Test } from 'tap';
import { DEFAULT_RATE_LIMITS } from '../../src/config.js';
import { chooseEncoding } from '../../src/http/gzip.js';
import { etagMatches } from '../../src/http/static-files.js';
import { rawRequest, type ApiClient } from '../helpers/api.js';
import { request } from '../helpers/uploads.js';
import { startServer } from '../helpers/server.js';

/** A GET (or HEAD) without credentials, read as bytes. */
const fetchRaw = (
  api: ApiClient,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
) => request(api, method, null, path, undefined, headers);

const INDEX =
  '<!doctype html><html><head><link rel="stylesheet" href="/static/app-3f2a.css">' +
  '<script type="module" src="/static/app-9c1d.js"></script></head><body></body></html>\n';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(5000))});\n`;
const FONT = Buffer.from([0x77, 0x4f, 0x46, 0x32, 1, 2, 3, 4]);

/** Writes `file` with the compressed siblings the build makes. */
function writeWithSiblings(file: string, content: string | Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  fs.writeFileSync(`${file}.gz`, zlib.gzipSync(content));
  fs.writeFileSync(`${file}.br`, zlib.brotliCompressSync(content));
}

/**
 * A test's own directories: the build's and the server's data (both under t.testdir(), which a
 * second call would empty).
 */
function dirs(t: Test): { webDir: string; dataDir: string } {
  const root = t.testdir();
  const webDir = path.join(root, 'web');
  fs.mkdirSync(webDir);
  return { webDir, dataDir: path.join(root, 'data') };
}

function makeBuild(dir: string): string {
  writeWithSiblings(path.join(dir, 'index.html'), INDEX);
  writeWithSiblings(path.join(dir, 'static', 'app-9c1d.js'), SCRIPT);
  fs.writeFileSync(path.join(dir, 'static', 'app-3f2a.css'), 'body{margin:0}\n'); // no siblings
  fs.mkdirSync(path.join(dir, 'static', 'fonts'));
  fs.writeFileSync(path.join(dir, 'static', 'fonts', 'KaTeX_Main-Regular-0f1e.woff2'), FONT);
  fs.writeFileSync(
    path.join(dir, 'manifest.json'),
    JSON.stringify({ files: { '/static/app-9c1d.js': { type: 'text/javascript', size: 1 } } }),
  );
  return dir;
}

t.test('GET /: the app page, its caching and its security headers', async (t) => {
  const { webDir, dataDir } = dirs(t);
  const { url, api } = await startServer(t, { webDir: makeBuild(webDir), dataDir });
  const page = await fetchRaw(api, '/');
  t.equal(page.status, 200);
  t.equal(page.body.toString(), INDEX, 'index.html as built');
  t.equal(page.headers['content-type'], 'text/html; charset=utf-8');
  t.equal(page.headers['cache-control'], 'no-cache', 'revalidated on every load');
  t.match(page.headers.etag, /^"[A-Za-z0-9_-]{10,}"$/, 'an ETag');
  t.equal(page.headers['x-content-type-options'], 'nosniff');
  t.equal(page.headers['referrer-policy'], 'same-origin');
  t.equal(page.headers['x-frame-options'], 'DENY');
  t.equal(page.headers.vary, 'Accept-Encoding');
  t.notOk(page.headers['content-encoding'], 'no Accept-Encoding: as built');
  t.notOk(page.headers['set-cookie'], 'no cookie for a page');
  const csp = new Map(
    String(page.headers['content-security-policy'])
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...values]) => [name!, values.join(' ')]),
  );
  t.equal(csp.get('default-src'), "'none'");
  t.equal(csp.get('script-src'), "'self'", 'scripts from this origin only: no inline, no eval');
  t.equal(csp.get('style-src'), "'self'", 'stylesheets from this origin only');
  t.equal(csp.get('style-src-attr'), "'unsafe-inline'", "KaTeX's style attributes");
  t.equal(csp.get('img-src'), "'self' data: blob:");
  const port = new URL(url).port;
  t.equal(csp.get('connect-src'), `'self' ws://127.0.0.1:${port}`, 'the API and its WebSocket');
  t.equal(csp.get('frame-ancestors'), "'none'");
  t.equal(csp.get('base-uri'), "'none'");
  t.equal(csp.get('object-src'), "'none'");

  // Revalidation: the same ETag answers 304 without a body, weak or strong, among others.
  const etag = String(page.headers.etag);
  for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
    const again = await fetchRaw(api, '/', { 'if-none-match': inm });
    t.equal(again.status, 304, `If-None-Match: ${inm}`);
    t.equal(again.body.length, 0, 'no body');
    t.equal(again.headers.etag, etag);
    t.equal(again.headers['cache-control'], 'no-cache');
  }
  t.equal((await fetchRaw(api, '/', { 'if-none-match': '"stale"' })).status, 200, 'a stale tag');

  // Deep links are fragments: the browser asks for `/` (a query string changes nothing).
  t.equal((await fetchRaw(api, '/?stream=1')).body.toString(), INDEX);

  const head = await fetchRaw(api, '/', {}, 'HEAD');
  t.equal(head.status, 200, 'HEAD');
  t.equal(head.body.length, 0);
  t.equal(head.headers['content-length'], String(Buffer.byteLength(INDEX)), 'the length GET has');

  // A POST to `/` is not the page.
  const post = await rawRequest(url, { method: 'POST', path: '/' });
  t.equal(post.status, 404);
});

t.test('precompressed variants chosen by Accept-Encoding', async (t) => {
  const { webDir, dataDir } = dirs(t);
  const { api } = await startServer(t, { webDir: makeBuild(webDir), dataDir });
  const cases: [string, string | null][] = [
    ['gzip, deflate, br', 'br'],
    ['br', 'br'],
    ['gzip', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['*', 'br'],
    ['identity', null],
    ['gzip;q=0', null],
  ];
  for (const [accept, coding] of cases) {
    for (const pathname of ['/', '/static/app-9c1d.js']) {
      const res = await fetchRaw(api, pathname, { 'accept-encoding': accept });
      t.equal(res.headers['content-encoding'], coding ?? undefined, `${pathname} ${accept}`);
      const body =
        coding === 'br'
          ? zlib.brotliDecompressSync(res.body)
          : coding === 'gzip'
            ? zlib.gunzipSync(res.body)
            : res.body;
      t.equal(body.toString(), pathname === '/' ? INDEX : SCRIPT, 'decodes to the file');
    }
  }
  // A file the build made no siblings for goes as it is.
  const css = await fetchRaw(api, '/static/app-3f2a.css', { 'accept-encoding': 'gzip, br' });
  t.equal(css.headers['content-encoding'], undefined);
  t.equal(css.body.toString(), 'body{margin:0}\n');

  t.equal(chooseEncoding('', { br: true, gzip: true }), null);
  t.equal(chooseEncoding('gzip;q=bad, br', { br: false, gzip: true }), null, 'malformed q: 0');
  t.equal(chooseEncoding('x-gzip', { br: true, gzip: true }), 'gzip');
  t.ok(etagMatches('W/"a", "b"', '"b"'));
  t.notOk(etagMatches('"ab"', '"a"'));
});

t.test('GET /static/*: immutable assets, types, unknown paths', async (t) => {
  const { webDir, dataDir } = dirs(t);
  const { url, api } = await startServer(t, { webDir: makeBuild(webDir), dataDir });
  const js = await fetchRaw(api, '/static/app-9c1d.js');
  t.equal(js.status, 200);
  t.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
  t.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable');
  t.equal(js.headers['x-content-type-options'], 'nosniff');
  t.ok(js.headers.etag);
  t.equal(js.body.toString(), SCRIPT);
  t.equal(
    (await fetchRaw(api, '/static/app-3f2a.css')).headers['content-type'],
    'text/css; charset=utf-8',
  );
  const font = await fetchRaw(api, '/static/fonts/KaTeX_Main-Regular-0f1e.woff2');
  t.equal(font.headers['content-type'], 'font/woff2', 'nested directories');
  t.same(font.body, FONT);
  const asset304 = await fetchRaw(api, '/static/app-9c1d.js', {
    'if-none-match': String(js.headers.etag),
  });
  t.equal(asset304.status, 304);

  for (const p of [
    '/static/app-0000.js',
    '/static/../index.html',
    '/static/%2e%2e/index.html',
    '/static/app-9c1d.js.gz',
    '/static/fonts',
    '/static/',
  ]) {
    const res = await rawRequest(url, { method: 'GET', path: p });
    t.equal(res.status, 404, `${p}: 404`);
    t.same(res.body, { result: 'error', msg: 'Not Found', code: 'NOT_FOUND' });
    t.equal(res.headers['content-type'], 'application/json');
  }
  const missing = await rawRequest(url, { method: 'GET', path: '/static/app-0000.js' });
  t.equal(missing.headers['x-content-type-options'], 'nosniff', "an asset's 404: nosniff");
  // The API's own files under /static/ are still the API's.
  const state = (await api.post('hamlet', 'register', { fetch_event_types: ['realm'] })).body;
  const emoji = await fetchRaw(api, new URL(state.server_emoji_data_url as string).pathname);
  t.equal(emoji.status, 200, 'the emoji data file');
  t.equal(emoji.headers['content-type'], 'application/json');
});

t.test('no build: `/` says how to make one; a rebuild is served without a restart', async (t) => {
  const { webDir, dataDir } = dirs(t);
  const { api } = await startServer(t, { webDir, dataDir });
  const page = await fetchRaw(api, '/');
  t.equal(page.status, 404);
  t.equal(page.headers['content-type'], 'text/html; charset=utf-8', 'a page, not JSON');
  t.match(page.body.toString(), /npm run build/);
  t.equal(page.headers['cache-control'], 'no-store');
  t.ok(page.headers['content-security-policy'], 'under the same policy');
  t.equal((await api.get('hamlet', 'users/me')).status, 200, 'the API works meanwhile');
  t.equal((await fetchRaw(api, '/static/app-9c1d.js')).status, 404);

  makeBuild(webDir);
  const built = await fetchRaw(api, '/');
  t.equal(built.status, 200, 'the build, once made');
  t.equal(built.body.toString(), INDEX);
  t.equal((await fetchRaw(api, '/static/app-9c1d.js')).status, 200, 'its assets with it');

  const next = INDEX.replace('app-9c1d.js', 'app-77aa.js');
  writeWithSiblings(path.join(webDir, 'index.html'), next);
  writeWithSiblings(path.join(webDir, 'static', 'app-77aa.js'), SCRIPT);
  const rebuilt = await fetchRaw(api, '/', { 'if-none-match': String(built.headers.etag) });
  t.equal(rebuilt.status, 200, 'a new page, not 304');
  t.equal(rebuilt.body.toString(), next);
  t.not(rebuilt.headers.etag, built.headers.etag, 'a new ETag');
  t.equal((await fetchRaw(api, '/static/app-77aa.js')).status, 200);
});

t.test('the app is outside the per-address API rate limit', async (t) => {
  const { webDir, dataDir } = dirs(t);
  const { url, api } = await startServer(t, {
    webDir: makeBuild(webDir),
    dataDir,
    rateLimits: { ...DEFAULT_RATE_LIMITS, api_by_ip: [[60, 3]] },
  });
  for (let i = 0; i < 10; i++) {
    for (const p of ['/', '/static/app-9c1d.js']) {
      const res = await fetchRaw(api, p);
      t.equal(res.status, 200, `${p} #${i + 1}`);
      t.notOk(res.headers['x-ratelimit-remaining'], 'not counted');
    }
  }
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++)
    statuses.push(
      (await rawRequest(url, { method: 'GET', path: '/api/v1/server_settings' })).status,
    );
  t.same(statuses, [200, 200, 200, 429], 'the API is still limited');
  t.equal((await fetchRaw(api, '/')).status, 200, 'the page still loads');
});
