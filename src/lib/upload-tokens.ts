/**
 * Tokens of temporary upload URLs (`/user_uploads/temporary/<token>/<file name>`): they carry a
 * path id and an expiry, signed with HMAC-SHA256 so that nobody can make one or stretch its life
 * without the server's key. Reference: lib/upload/local.py (generate_unauthed_file_access_url,
 * get_local_file_path_id_from_token: a signed, timestamped path id).
 *
 * Token: `<expiry ms, base 36>.<path id, base64url>.<HMAC of the first two parts, base64url>`.
 */
import crypto from 'node:crypto';

function mac(key: Buffer, payload: string): Buffer {
  return crypto.createHmac('sha256', key).update(payload).digest();
}

export function signUploadToken(key: Buffer, pathId: string, expiresAtMs: number): string {
  const payload = `${Math.floor(expiresAtMs).toString(36)}.${Buffer.from(pathId).toString('base64url')}`;
  return `${payload}.${mac(key, payload).toString('base64url')}`;
}

/** The path id a token grants until its expiry; null for a forged, malformed or expired token. */
export function verifyUploadToken(key: Buffer, token: string, nowMs: number): string | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  const [expiry, encodedPath, signature] = parts as [string, string, string];
  if (!/^[0-9a-z]{1,12}$/.test(expiry) || !/^[A-Za-z0-9_-]+$/.test(encodedPath)) return null;
  const expected = mac(key, `${expiry}.${encodedPath}`);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return null;
  if (parseInt(expiry, 36) <= nowMs) return null;
  return Buffer.from(encodedPath, 'base64url').toString('utf8');
}
