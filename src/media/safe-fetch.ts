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

/** One request's outcome: the answer, or a redirect to follow. */
type Hop<T> = T | { redirect: string };

/**
 * Requests `url` through `one`, following at most `limits.maxRedirects` redirects, all within
 * `limits.timeoutMs`. Each target (the first and every redirect's) must be http or https, carry
 * no credentials, and not be a refused literal address; names are checked when they resolve
 * (checkedLookup). Refusals answer `refusedStatus`; `verb` says what is done with a target.
 */
async function followChecked<T extends object>(
  url: string,
  limits: FetchLimits,
  refusedStatus: number,
  verb: string,
  one: (u: URL, deadline: number) => Promise<Hop<T>>,
): Promise<T> {
  const deadline = Date.now() + limits.timeoutMs;
  let current = url;
  for (let hop = 0; ; hop++) {
    let u: URL;
    try {
      u = new URL(current);
    } catch {
      throw new ProxyFetchError('not a URL', refusedStatus);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new ProxyFetchError(`only http and https are ${verb}`, refusedStatus);
    if (u.username || u.password)
      throw new ProxyFetchError('credentials in the URL', refusedStatus);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host) && !permitted(host, limits.allowPrivate))
      throw new ProxyFetchError('refused address', refusedStatus);
    const r = await one(u, deadline);
    if ('redirect' in r) {
      if (hop >= limits.maxRedirects)
        throw new ProxyFetchError('too many redirects', refusedStatus);
      current = new URL(r.redirect, u).href;
      continue;
    }
    return r;
  }
}

/** How one request's answer is taken: the first `done` or `fail` settles it, later ones do nothing. */
type Settle<T> = {
  done: (value: Hop<T>) => void;
  fail: (e: ProxyFetchError) => void;
};

/**
 * One request to `u` (to a checked address, without a shared agent) that must be answered by
 * `deadline`: a connection refused by the address policy fails with `refusedStatus`, other
 * errors with 502; a redirect with a Location (`isRedirect`) settles as one; any other answer
 * goes to `onAnswer`. `body` is sent as the request's body.
 */
function checkedRequest<T>(
  u: URL,
  options: { method: string; headers: http.OutgoingHttpHeaders },
  deadline: number,
  refusedStatus: number,
  isRedirect: (status: number) => boolean,
  onAnswer: (res: http.IncomingMessage, settle: Settle<T>) => void,
  allowPrivate: boolean | readonly string[],
  body?: string,
): Promise<Hop<T>> {
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
    const done = (value: Hop<T>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    const timer = setTimeout(() => fail(new ProxyFetchError('timed out', 504)), remaining);
    const lib = u.protocol === 'https:' ? https : http;
    const req = lib.request(u, {
      ...options,
      lookup: checkedLookup(allowPrivate),
      agent: false,
    });
    req.on('error', (err: NodeJS.ErrnoException) =>
      fail(
        err.code === 'EREFUSEDADDRESS'
          ? new ProxyFetchError('refused address', refusedStatus)
          : new ProxyFetchError(`upstream: ${err.message}`, 502),
      ),
    );
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (isRedirect(status) && res.headers.location) {
        res.resume();
        done({ redirect: res.headers.location });
        req.destroy();
        return;
      }
      onAnswer(res, { done, fail });
    });
    req.end(body);
  });
}

/** Fetches `url` into the file `dest` (created or truncated). */
export function fetchToFile(url: string, dest: string, limits: FetchLimits): Promise<Fetched> {
  return followChecked(url, limits, 404, 'fetched', (u, deadline) =>
    checkedRequest<Fetched>(
      u,
      {
        method: 'GET',
        headers: {
          'User-Agent': 'Confab image proxy',
          Accept: 'image/*, video/mp4, video/webm',
          'Accept-Encoding': 'identity',
        },
      },
      deadline,
      404,
      (status) => status >= 300 && status < 400,
      (res, { done, fail }) => {
        const status = res.statusCode ?? 0;
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
          if (!res.complete) return fail(new ProxyFetchError('upstream closed early', 502));
          done({
            contentType: contentType.split(';')[0]!.trim().toLowerCase(),
            size,
            cacheControl: res.headers['cache-control'] ?? null,
            lastModified: res.headers['last-modified'] ?? null,
            etag: res.headers.etag ?? null,
          });
        });
      },
      limits.allowPrivate,
    ),
  );
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
export function postJson(
  url: string,
  body: string,
  limits: FetchLimits,
  userAgent: string,
): Promise<Posted> {
  return followChecked(url, limits, 400, 'used', (u, deadline) =>
    checkedRequest<Posted>(
      u,
      {
        method: 'POST',
        headers: {
          'User-Agent': userAgent,
          'Content-Type': 'application/json',
          'Content-Length': String(Buffer.byteLength(body)),
          Accept: 'application/json',
          'Accept-Encoding': 'identity',
        },
      },
      deadline,
      400,
      (status) => [301, 302, 303, 307, 308].includes(status),
      (res, { done, fail }) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > limits.maxBytes) return fail(new ProxyFetchError('too large', 502));
          chunks.push(chunk);
        });
        res.on('error', () => fail(new ProxyFetchError('upstream closed early', 502)));
        res.on('end', () =>
          done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
      limits.allowPrivate,
      body,
    ),
  );
}
