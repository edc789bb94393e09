/**
 * The camo scheme of proxied image URLs, as the reference signs them: `<prefix><hmac>/<hex url>`,
 * the HMAC-SHA1 of the URL under the server's key, in hex, then the URL's UTF-8 bytes in hex.
 * The image proxy (src/endpoints/external-content.ts) checks the same signature.
 */
import crypto from 'node:crypto';

export type CamoConfig = {
  /** Where the proxy is served: `/external_content/` for Confab's own. */
  prefix: string;
  key: string;
};

export function camoDigest(key: string, url: string): string {
  return crypto.createHmac('sha1', key).update(url, 'utf8').digest('hex');
}

export function camoUrl(camo: CamoConfig, url: string): string {
  return `${camo.prefix}${camoDigest(camo.key, url)}/${Buffer.from(url, 'utf8').toString('hex')}`;
}

/** The URL a signed `<digest>/<hex>` pair stands for, or null when the signature does not match. */
export function verifyCamo(key: string, digest: string, hex: string): string | null {
  if (!/^[0-9a-f]{40}$/.test(digest) || !/^(?:[0-9a-f]{2})+$/.test(hex)) return null;
  const url = Buffer.from(hex, 'hex').toString('utf8');
  if (Buffer.from(url, 'utf8').toString('hex') !== hex) return null; // not valid UTF-8
  const expected = Buffer.from(camoDigest(key, url), 'hex');
  if (!crypto.timingSafeEqual(expected, Buffer.from(digest, 'hex'))) return null;
  return url;
}
