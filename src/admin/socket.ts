/**
 * The admin socket: a Unix socket in the data directory (`admin.sock`, mode 0600) through which
 * `npm run manage` asks the running server to run a command, so every change goes through the
 * server's realm actors and shows at once (docs/operations.md "Admin tool"). Whoever can open it
 * can administer every realm: it is as private as the data directory itself (0700).
 *
 * Protocol: the client writes one JSON line `{"command": ..., "args": {...}}`; the server answers
 * one JSON line `{"ok": true, "result": ...}` or `{"ok": false, "error": "...", "code": "..."}` and
 * closes the connection. The tool's side, askServer, is socket-client.ts.
 *
 * Unix socket paths are limited to 107 bytes. A longer data directory is reached through the
 * directory's file descriptor (`/proc/self/fd/N/admin.sock`), which Linux resolves to the same
 * socket file.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { log } from '../observability/log.js';
import { ADMIN_SOCKET, reachable, type AdminRequest, type AdminResponse } from './socket-client.js';

/** The longest request line accepted (a command and its arguments are small). */
const MAX_REQUEST_BYTES = 1024 * 1024;

export type AdminHandler = (req: AdminRequest) => Promise<AdminResponse>;

export class AdminSocketServer {
  private constructor(
    private readonly server: net.Server,
    private readonly file: string,
    private readonly release: () => void,
  ) {}

  /**
   * Listens on DATA_DIR/admin.sock. The caller holds the data directory's lock, so a socket file
   * already there is a leftover of a process that died: it is replaced.
   */
  static async listen(dataDir: string, handle: AdminHandler): Promise<AdminSocketServer> {
    const file = path.join(dataDir, ADMIN_SOCKET);
    fs.rmSync(file, { force: true });
    const where = reachable(dataDir);
    const server = net.createServer((conn) => serve(conn, handle));
    // The socket file is created 0600 (the umask applies to bind), then made sure of.
    const umask = process.umask(0o177);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(where.path, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } finally {
      process.umask(umask);
    }
    fs.chmodSync(file, 0o600);
    server.on('error', (err) => log.error({ err }, 'admin socket failed'));
    return new AdminSocketServer(server, file, where.release);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.release();
    fs.rmSync(this.file, { force: true });
  }
}

function serve(conn: net.Socket, handle: AdminHandler): void {
  let buffered = '';
  let answered = false;
  const answer = (r: AdminResponse) => {
    if (answered) return;
    answered = true;
    conn.end(JSON.stringify(r) + '\n');
  };
  conn.setEncoding('utf8');
  conn.on('error', () => conn.destroy());
  conn.on('data', (chunk: string) => {
    if (answered) return;
    buffered += chunk;
    if (buffered.length > MAX_REQUEST_BYTES) {
      answer({ ok: false, error: 'request too large', code: 'BAD_REQUEST' });
      return;
    }
    const nl = buffered.indexOf('\n');
    if (nl === -1) return;
    let req: AdminRequest;
    try {
      const parsed = JSON.parse(buffered.slice(0, nl)) as Partial<AdminRequest>;
      if (typeof parsed.command !== 'string' || typeof parsed.args !== 'object' || !parsed.args)
        throw new Error('bad request');
      req = { command: parsed.command, args: parsed.args };
      if (
        typeof parsed.origin === 'object' &&
        parsed.origin !== null &&
        parsed.origin.via === 'admin_tool' &&
        typeof parsed.origin.os_user === 'string'
      )
        req.origin = { via: 'admin_tool', os_user: parsed.origin.os_user.slice(0, 200) };
    } catch {
      answer({ ok: false, error: 'malformed admin request', code: 'BAD_REQUEST' });
      return;
    }
    handle(req).then(answer, (err: unknown) => {
      log.error({ err, command: req.command }, 'admin command failed');
      answer({ ok: false, error: 'internal error (see the server log)', code: 'INTERNAL' });
    });
  });
}
