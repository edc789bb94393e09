/**
 * GET /external_content/<digest>/<hex url>: the image proxy (the camo scheme the reference's
 * messages use, served by go-camo there). Rendered messages show third-party images and videos
 * through it, so a reader's browser never contacts the third-party host. No credentials: the
 * signature (HMAC-SHA1 under the server's key, DATA_DIR/image_proxy_key) is the permission, so
 * only URLs this server put into messages are fetched. What it fetches, from where, and how much
 * is bounded in src/media/safe-fetch.ts and src/media/image-proxy.ts; answers carry the headers
 * such a proxy sends (a content type that was checked, nosniff, a policy that runs nothing).
 */
import fs from 'node:fs/promises';
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { FileBody, RawBody } from '../http/respond.js';
import { verifyCamo } from '../lib/markdown/camo.js';
import { ProxyFetchError } from '../media/safe-fetch.js';

const PROXY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'; img-src data:; style-src 'unsafe-inline'",
  'X-Frame-Options': 'deny',
  'X-XSS-Protection': '1; mode=block',
};

function failure(status: number, text: string): RawBody {
  return new RawBody(text + '\n', 'text/plain; charset=utf-8', PROXY_HEADERS, status);
}

export const externalContent = endpoint({
  method: 'GET',
  path: '/external_content/:digest/:hex',
  auth: 'none',
  params: z.object({ digest: z.string(), hex: z.string() }),
  handle: async ({ server }, p) => {
    const key = server.config.imageProxyKey;
    const url = key ? verifyCamo(key, p.digest.toLowerCase(), p.hex.toLowerCase()) : null;
    if (url === null) return failure(403, 'Bad signature');
    let entry;
    try {
      entry = await server.imageProxy.get(url);
    } catch (err) {
      if (err instanceof ProxyFetchError) return failure(err.status, 'Not Found');
      throw err;
    }
    let file;
    try {
      file = await fs.open(entry.file, 'r');
    } catch {
      return failure(404, 'Not Found'); // evicted meanwhile
    }
    const st = await file.stat();
    const headers: Record<string, string> = {
      ...PROXY_HEADERS,
      'Cache-Control': entry.meta.cacheControl ?? 'public, max-age=86400',
    };
    if (entry.meta.etag) headers.ETag = entry.meta.etag;
    if (entry.meta.lastModified) headers['Last-Modified'] = entry.meta.lastModified;
    return new FileBody(file, st.size, entry.meta.contentType, headers);
  },
});
