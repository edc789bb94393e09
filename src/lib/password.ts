/**
 * Password hashing with scrypt (memory-hard). `crypto.scrypt` runs on libuv's thread pool, so a
 * hash never blocks the event loop. The stored form carries its parameters
 * (`scrypt$N$r$p$salt$hash`, base64), so the cost can be raised later without invalidating
 * existing hashes; tests run with a lower N.
 */
import crypto from 'node:crypto';

const KEY_LEN = 32;

/** Password length rules (register reports them as password_min_length/password_max_length). */
export const MIN_PASSWORD_LENGTH = 6;
export const MAX_PASSWORD_LENGTH = 100;
export const DEFAULT_SCRYPT_N = 1 << 15;

function scrypt(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    crypto.scrypt(
      password,
      salt,
      KEY_LEN,
      { N: n, r, p, maxmem: 256 * n * r + 1024 * 1024 },
      (err, key) => (err ? reject(err) : resolve(key)),
    );
  });
}

export async function hashPassword(password: string, n = DEFAULT_SCRYPT_N): Promise<string> {
  const salt = crypto.randomBytes(16);
  const r = 8;
  const p = 1;
  const key = await scrypt(password, salt, n, r, p);
  return ['scrypt', n, r, p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (!stored) return false;
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, nS, rS, pS, saltB64, keyB64] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(keyB64, 'base64');
  const key = await scrypt(
    password,
    Buffer.from(saltB64, 'base64'),
    Number(nS),
    Number(rS),
    Number(pS),
  );
  return key.length === expected.length && crypto.timingSafeEqual(key, expected);
}

/** API keys: 32 characters from [A-Za-z0-9], like the reference's. */
export function generateApiKey(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = crypto.randomBytes(32);
  let out = '';
  for (const b of bytes) out += alphabet[b % alphabet.length];
  return out;
}

export function generatePassword(): string {
  return crypto.randomBytes(12).toString('base64url');
}

/** Constant-time string comparison for secrets. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && crypto.timingSafeEqual(ab, bb);
}
