/**
 * The admin tool's side of the admin socket (socket.ts, where the protocol is described): one
 * request to the server running on a data directory. Apart from the server's side so that the
 * tool, sending a command there, loads no logger (src/manage.ts).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { ToolOrigin } from '../lib/audit.js';

export const ADMIN_SOCKET = 'admin.sock';
const MAX_SUN_PATH = 100;

export type AdminRequest = {
  command: string;
  args: Record<string, unknown>;
  /** Who asks (the tool says; only the data directory's owner can reach the socket). */
  origin?: ToolOrigin;
};
export type AdminResponse =
  { ok: true; result: unknown } | { ok: false; error: string; code: string };

/** A path to the socket that fits in sun_path, and what to release once it is used. */
export function reachable(dataDir: string): { path: string; release: () => void } {
  const full = path.join(dataDir, ADMIN_SOCKET);
  if (Buffer.byteLength(full) <= MAX_SUN_PATH) return { path: full, release: () => {} };
  const fd = fs.openSync(dataDir, 'r');
  return { path: `/proc/self/fd/${fd}/${ADMIN_SOCKET}`, release: () => fs.closeSync(fd) };
}

/**
 * Sends one request to the server on `dataDir`. Resolves null when no server listens there (no
 * socket file, or a leftover one nobody accepts on).
 */
export async function askServer(dataDir: string, req: AdminRequest): Promise<AdminResponse | null> {
  if (!fs.existsSync(path.join(dataDir, ADMIN_SOCKET))) return null;
  const where = reachable(dataDir);
  try {
    return await new Promise<AdminResponse | null>((resolve, reject) => {
      const conn = net.connect(where.path);
      let text = '';
      let connected = false;
      conn.setEncoding('utf8');
      conn.on('connect', () => {
        connected = true;
        conn.write(JSON.stringify(req) + '\n');
      });
      conn.on('data', (c: string) => (text += c));
      conn.on('error', (err: NodeJS.ErrnoException) => {
        if (!connected && (err.code === 'ECONNREFUSED' || err.code === 'ENOENT')) resolve(null);
        else reject(err);
      });
      conn.on('end', () => {
        try {
          resolve(JSON.parse(text) as AdminResponse);
        } catch {
          reject(new Error('the server closed the admin connection without an answer'));
        }
      });
    });
  } finally {
    where.release();
  }
}
