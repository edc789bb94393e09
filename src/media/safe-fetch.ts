/**
 * Fetching a third party's image or video for the image proxy, safely: http and https only; the
 * host's name is resolved here and the connection goes to an address checked against the
 * address policy (so a name that resolves differently a second later — DNS rebinding — cannot
 * lead it elsewhere); every redirect is checked the same way, and there are at most a few;
 * the answer must be an image or a playable video, no bigger than the limit, within the time
 * limit. The body goes to a file, a chunk at a time.
 */
import dns from 'node:dns';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { isRefusedAddress } from './address-policy.js';

export type FetchLimits = {
  maxBytes: number;
  /** For the whole fetch, redirects included. */
  timeoutMs: number;
  maxRedirects: number;
  /**
   * Let the proxy reach private and loopback addresses: all of them (true), or only the listed
   * ones (tests reach a local server this way and still see the others refused).
   */
  allowPrivate: boolean | readonly string[];
};

export type Fetched = {
  contentType: string;
  size: number;
  cacheControl: string | null;
  lastModified: string | null;
  etag: string | null;
};

/** Why a fetch failed, with the status the proxy answers. */
export class ProxyFetchError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

const ALLOWED_VIDEO = new Set(['video/mp4', 'video/webm']);

/** Images (not SVG, which can carry script) and the videos browsers play. */
export function isProxiedType(contentType: string): boolean {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'image/svg+xml') return false;
  return /^image\/[a-z0-9.+-]+$/.test(type) || ALLOWED_VIDEO.has(type);
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

function permitted(address: string, allowPrivate: boolean | readonly string[]): boolean {
  if (allowPrivate === true) return true;
  if (Array.isArray(allowPrivate) && allowPrivate.includes(address)) return true;
  return !isRefusedAddress(address);
}

function checkedLookup(allowPrivate: boolean | readonly string[]) {
  return (hostname: string, options: dns.LookupOptions, cb: LookupCallback): void => {
    dns.lookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses) => {
      if (err) return cb(err, []);
      const usable = addresses.filter((a) => permitted(a.address, allowPrivate));
      if (usable.length === 0) {
        const e: NodeJS.ErrnoException = new Error(`${hostname} has no address the proxy may use`);
        e.code = 'EREFUSEDADDRESS';
        return cb(e, []);
      }
      if (options.all) cb(null, usable);
      else cb(null, usable[0]!.address, usable[0]!.family);
    });
  };
}

/** Fetches `url` into the file `dest` (created or truncated). */
export async function fetchToFile(
  url: string,
  dest: string,
  limits: FetchLimits,
): Promise<Fetched> {
  const deadline = Date.now() + limits.timeoutMs;
  let current = url;
  for (let hop = 0; ; hop++) {
    let u: URL;
    try {
      u = new URL(current);
    } catch {
      throw new ProxyFetchError('not a URL', 404);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new ProxyFetchError('only http and https are fetched', 404);
    if (u.username || u.password) throw new ProxyFetchError('credentials in the URL', 404);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host) && !permitted(host, limits.allowPrivate))
      throw new ProxyFetchError('refused address', 404);
    const r = await oneRequest(u, dest, limits, deadline);
    if ('redirect' in r) {
      if (hop >= limits.maxRedirects) throw new ProxyFetchError('too many redirects', 404);
      current = new URL(r.redirect, u).href;
      continue;
    }
    return r;
  }
}

function oneRequest(
  u: URL,
  dest: string,
  limits: FetchLimits,
  deadline: number,
): Promise<Fetched | { redirect: string }> {
  return new Promise((resolve, reject) => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return reject(new ProxyFetchError('timed out', 504));
    let settled = false;
    const fail = (e: ProxyFetchError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(e);
    };
    const timer = setTimeout(() => fail(new ProxyFetchError('timed out', 504)), remaining);
    const lib = u.protocol === 'https:' ? https : http;
    const req = lib.request(u, {
      method: 'GET',
      lookup: checkedLookup(limits.allowPrivate),
      headers: {
        'User-Agent': 'Confab image proxy',
        Accept: 'image/*, video/mp4, video/webm',
        'Accept-Encoding': 'identity',
      },
      agent: false,
    });
    req.on('error', (err: NodeJS.ErrnoException) =>
      fail(
        err.code === 'EREFUSEDADDRESS'
          ? new ProxyFetchError('refused address', 404)
          : new ProxyFetchError(`upstream: ${err.message}`, 502),
      ),
    );
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume();
        settled = true;
        clearTimeout(timer);
        req.destroy();
        return resolve({ redirect: res.headers.location });
      }
      if (status !== 200) {
        res.resume();
        return fail(new ProxyFetchError(`upstream answered ${status}`, 404));
      }
      const contentType = String(res.headers['content-type'] ?? '');
      if (!isProxiedType(contentType)) {
        res.resume();
        return fail(new ProxyFetchError('not an image', 404));
      }
      const declared = Number(res.headers['content-length'] ?? NaN);
      if (Number.isFinite(declared) && declared > limits.maxBytes) {
        res.resume();
        return fail(new ProxyFetchError('too large', 404));
      }
      const out = fs.createWriteStream(dest, { mode: 0o600 });
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limits.maxBytes) {
          out.destroy();
          fail(new ProxyFetchError('too large', 404));
        }
      });
      res.on('error', () => fail(new ProxyFetchError('upstream closed early', 502)));
      out.on('error', () => fail(new ProxyFetchError('could not store the answer', 502)));
      res.pipe(out);
      out.on('finish', () => {
        if (settled) return;
        if (!res.complete) return fail(new ProxyFetchError('upstream closed early', 502));
        settled = true;
        clearTimeout(timer);
        resolve({
          contentType: contentType.split(';')[0]!.trim().toLowerCase(),
          size,
          cacheControl: res.headers['cache-control'] ?? null,
          lastModified: res.headers['last-modified'] ?? null,
          etag: res.headers.etag ?? null,
        });
      });
    });
    req.end();
  });
}

/** What a JSON POST got back (any status: the caller decides). */
export type Posted = { status: number; body: string };

/**
 * POSTs `body` (JSON) to `url` under the same protections as the image proxy's fetches: http and
 * https only, no credentials in the URL, every address (redirects' too) checked against the
 * address policy at connection time, at most `maxRedirects` redirects (the POST is repeated),
 * the answer read up to `maxBytes`, the whole exchange within `timeoutMs`. Used by outgoing
 * webhooks (src/bots/outgoing-webhooks.ts). Throws ProxyFetchError (`refused address`, `timed
 * out`, `too large`, `upstream: …`).
 */
export async function postJson(
  url: string,
  body: string,
  limits: FetchLimits,
  userAgent: string,
): Promise<Posted> {
  const deadline = Date.now() + limits.timeoutMs;
  let current = url;
  for (let hop = 0; ; hop++) {
    let u: URL;
    try {
      u = new URL(current);
    } catch {
      throw new ProxyFetchError('not a URL', 400);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new ProxyFetchError('only http and https are used', 400);
    if (u.username || u.password) throw new ProxyFetchError('credentials in the URL', 400);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host) && !permitted(host, limits.allowPrivate))
      throw new ProxyFetchError('refused address', 400);
    const r = await onePost(u, body, limits, deadline, userAgent);
    if ('redirect' in r) {
      if (hop >= limits.maxRedirects) throw new ProxyFetchError('too many redirects', 400);
      current = new URL(r.redirect, u).href;
      continue;
    }
    return r;
  }
}

function onePost(
  u: URL,
  body: string,
  limits: FetchLimits,
  deadline: number,
  userAgent: string,
): Promise<Posted | { redirect: string }> {
  return new Promise((resolve, reject) => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return reject(new ProxyFetchError('timed out', 504));
    let settled = false;
    const fail = (e: ProxyFetchError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(e);
    };
    const timer = setTimeout(() => fail(new ProxyFetchError('timed out', 504)), remaining);
    const lib = u.protocol === 'https:' ? https : http;
    const req = lib.request(u, {
      method: 'POST',
      lookup: checkedLookup(limits.allowPrivate),
      headers: {
        'User-Agent': userAgent,
        'Content-Type': 'application/json',
        'Content-Length': String(Buffer.byteLength(body)),
        Accept: 'application/json',
        'Accept-Encoding': 'identity',
      },
      agent: false,
    });
    req.on('error', (err: NodeJS.ErrnoException) =>
      fail(
        err.code === 'EREFUSEDADDRESS'
          ? new ProxyFetchError('refused address', 400)
          : new ProxyFetchError(`upstream: ${err.message}`, 502),
      ),
    );
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if ([301, 302, 303, 307, 308].includes(status) && res.headers.location) {
        res.resume();
        settled = true;
        clearTimeout(timer);
        req.destroy();
        return resolve({ redirect: res.headers.location });
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limits.maxBytes) return fail(new ProxyFetchError('too large', 502));
        chunks.push(chunk);
      });
      res.on('error', () => fail(new ProxyFetchError('upstream closed early', 502)));
      res.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ status, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.end(body);
  });
}
