/**
 * The browser app's files (docs/web.md "Serving the app"), outside the JSON API: no realm, no
 * authentication, no rate limit.
 *
 *   GET /            the app's index.html: `Cache-Control: no-cache` with an ETag (304 when the
 *                    browser's copy is current), the page's Content-Security-Policy (./csp.ts)
 *   GET /static/*    the build's content-hashed assets: `public, max-age=31536000, immutable`
 *
 * Both come from the web build's directory (ServerOptions.webDir, default dist/web: `npm run
 * build` writes it), each file with the `.br` and `.gz` siblings the build made, chosen by the
 * request's Accept-Encoding. The files are read into memory: the whole build is about 3 MB (2 MB
 * of it the emoji font's subsets, which have no siblings), and an answer is then one write.
 * index.html is read again when it changes on disk (a rebuild under a running server), and the
 * assets with it. Without a build, `/` answers a
 * page saying how to make one (404, in HTML), never the API's JSON 404.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { JsonableError } from '../lib/errors.js';
import { log } from '../observability/log.js';
import type { ServerConfig } from '../config.js';
import { appPagePolicy } from './csp.js';
import { chooseEncoding } from './gzip.js';
import { RequestContext } from './request.js';
import { requestFinished } from './request-log.js';
import { send, sendError, statusLine } from './respond.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js';

/** One file as served: its bytes, and those of the compressed siblings the build made. */
export type WebFile = {
  type: string;
  etag: string;
  identity: Buffer;
  gzip: Buffer | null;
  br: Buffer | null;
};

export type WebBuild = {
  index: WebFile | null;
  /** `/static/<name>` → the file. */
  assets: Map<string, WebFile>;
};

/** A build larger than this is not read into memory (its files answer 404, and a warning says why). */
const MAX_BUILD_BYTES = 64 * 1024 * 1024;
const MAX_BUILD_FILES = 4096;

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/vnd.microsoft.icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.wasm': 'application/wasm',
  '.mp3': 'audio/mpeg',
  '.ogg': 'audio/ogg',
  '.wav': 'audio/wav',
};

export function contentTypeOf(name: string): string {
  return TYPES[path.extname(name).toLowerCase()] ?? 'application/octet-stream';
}

function readOptional(file: string): Buffer | null {
  try {
    return fs.readFileSync(file);
  } catch {
    return null;
  }
}

/** A strong ETag for `bytes`: 22 characters of their SHA-256, quoted. */
export function etagOf(bytes: Buffer): string {
  return `"${crypto.createHash('sha256').update(bytes).digest('base64url').slice(0, 22)}"`;
}

function webFile(file: string, identity: Buffer): WebFile {
  return {
    type: contentTypeOf(file),
    etag: etagOf(identity),
    identity,
    gzip: readOptional(`${file}.gz`),
    br: readOptional(`${file}.br`),
  };
}

/** Reads a build directory (nothing there: an empty build, whose `/` says how to make one). */
export function loadWebBuild(dir: string): WebBuild {
  const indexBytes = readOptional(path.join(dir, 'index.html'));
  const build: WebBuild = {
    index: indexBytes ? webFile(path.join(dir, 'index.html'), indexBytes) : null,
    assets: new Map(),
  };
  const root = path.join(dir, 'static');
  let total = 0;
  const walk = (sub: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(root, sub), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const rel = sub === '' ? e.name : `${sub}/${e.name}`;
      if (e.isDirectory()) {
        walk(rel);
        continue;
      }
      // The compressed siblings are read with their file.
      if (!e.isFile() || e.name.endsWith('.gz') || e.name.endsWith('.br')) continue;
      const file = path.join(root, rel);
      const size = fs.statSync(file).size;
      if (build.assets.size >= MAX_BUILD_FILES || total + size > MAX_BUILD_BYTES) {
        log.warn({ dir, file: rel }, 'web build too large to serve from memory: file left out');
        continue;
      }
      const f = webFile(file, fs.readFileSync(file));
      total += size + (f.gzip?.length ?? 0) + (f.br?.length ?? 0);
      build.assets.set(`/static/${rel}`, f);
    }
  };
  walk('');
  return build;
}

/** Whether an If-None-Match header names `etag` (or is `*`); weak tags compare equal (§13.1.2). */
export function etagMatches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch === '') return false;
  for (const raw of ifNoneMatch.split(',')) {
    const tag = raw.trim();
    if (tag === '*' || tag === etag || tag === `W/${etag}`) return true;
  }
  return false;
}

/**
 * The page shown at `/` when there is no build: what to run, and that the API works meanwhile.
 * No script, no outside resource.
 */
const NOT_BUILT = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Confab</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body>
<h1>Confab</h1>
<p>The server is running, but its web app has not been built.</p>
<p>Run <code>npm run build</code> in the server's directory (<code>npm ci</code> builds it too), then
reload this page.</p>
<p>The API is served at <code>/api/v1/</code> meanwhile.</p>
</body>
</html>
`;

/** A file the build does not have: the API's 404, not to be taken for another type. */
const ASSET_NOT_FOUND = new JsonableError('Not Found', {
  code: 'NOT_FOUND',
  status: 404,
  headers: { 'X-Content-Type-Options': 'nosniff' },
});

type Served = {
  file: WebFile | null;
  headers: Record<string, string>;
};

/**
 * Serves a web build from `dir`; mounted before the API's routes (uWS picks the most specific).
 * `externalAvatars(host)`: whether the realm at that host opted into external avatars (its page
 * may then load them: ./csp.ts).
 */
export function mountWebApp(
  app: TemplatedApp,
  config: ServerConfig,
  dir: string,
  externalAvatars: (host: string) => boolean,
): void {
  let build = loadWebBuild(dir);
  const indexPath = path.join(dir, 'index.html');
  let indexStamp = stamp(indexPath);
  if (build.index === null) log.warn({ dir }, 'no web build: `/` explains how to make one');

  /** index.html changed on disk since it was read: the build was made again. */
  const current = (): WebBuild => {
    const now = stamp(indexPath);
    if (now !== indexStamp) {
      indexStamp = now;
      build = loadWebBuild(dir);
    }
    return build;
  };

  const page = (req: HttpRequest): Served => {
    const host = req.getHeader('host');
    const headers = {
      'Cache-Control': 'no-cache',
      'Content-Security-Policy': appPagePolicy(config, host, externalAvatars(host)),
      'Referrer-Policy': 'same-origin',
      'X-Frame-Options': 'DENY',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'X-Content-Type-Options': 'nosniff',
    };
    return { file: current().index, headers };
  };
  const asset = (req: HttpRequest): Served => ({
    file: current().assets.get(req.getUrl()) ?? null,
    headers: {
      'Cache-Control': 'public, max-age=31536000, immutable',
      'X-Content-Type-Options': 'nosniff',
    },
  });

  const serve = (route: string, lookup: (req: HttpRequest) => Served) => {
    const handler = (res: HttpResponse, req: HttpRequest) => {
      const ctx = new RequestContext(req, 0, 'GET');
      const head = req.getMethod() === 'head';
      res.onAborted(() => ctx.markAborted());
      const ifNoneMatch = req.getHeader('if-none-match');
      const { file, headers } = lookup(req);
      if (file === null) {
        if (route === '/')
          send(res, ctx, 404, NOT_BUILT, 'text/html; charset=utf-8', {
            ...headers,
            'Cache-Control': 'no-store',
          });
        else sendError(res, ctx, ASSET_NOT_FOUND);
        requestFinished(ctx, route, config);
        return;
      }
      const encoding = chooseEncoding(ctx.acceptEncoding, {
        br: file.br !== null,
        gzip: file.gzip !== null,
      });
      const variant = { ...headers, ETag: file.etag, Vary: 'Accept-Encoding' };
      if (etagMatches(ifNoneMatch, file.etag)) {
        writeWithoutBody(res, ctx, 304, variant, null);
      } else {
        const body =
          encoding === 'br' ? file.br! : encoding === 'gzip' ? file.gzip! : file.identity;
        const withCoding = encoding ? { ...variant, 'Content-Encoding': encoding } : variant;
        if (head)
          writeWithoutBody(
            res,
            ctx,
            200,
            { 'Content-Type': file.type, ...withCoding },
            body.length,
          );
        else send(res, ctx, 200, body, file.type, withCoding);
      }
      requestFinished(ctx, route, config);
    };
    app.get(route, handler);
    app.head(route, handler);
  };
  serve('/', page);
  serve('/static/*', asset);
}

/** A file's modification time and size, to see it change ('' when it does not exist). */
function stamp(file: string): string {
  try {
    const st = fs.statSync(file);
    return `${st.mtimeMs} ${st.size}`;
  } catch {
    return '';
  }
}

/** A 304, or a HEAD's answer: the headers (and the length a GET would have), no body. */
export function writeWithoutBody(
  res: HttpResponse,
  ctx: RequestContext,
  status: 200 | 304,
  headers: Readonly<Record<string, string>>,
  length: number | null,
): void {
  if (ctx.aborted || ctx.done) return;
  ctx.answering(status);
  res.cork(() => {
    res.writeStatus(statusLine(status));
    for (const k in headers) res.writeHeader(k, headers[k]!);
    if (length === null) res.endWithoutBody();
    else res.endWithoutBody(length);
  });
}
