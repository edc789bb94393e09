/**
 * THE ONLY importer of uWebSockets.js. It arrives through an npm alias
 * (@trufflesuite/uws-js-unofficial, a native v20.30 build); if its native binary fails to load, that
 * package silently falls back to a slow pure-JS server that exports only App and two helpers.
 * We refuse to run on the fallback: a 10x slower server that looks healthy is worse than none.
 */
import uWS from 'uWebSockets.js';

export type {
  HttpRequest,
  HttpResponse,
  TemplatedApp,
  us_listen_socket,
  us_socket_context_t,
  WebSocket,
  WebSocketBehavior,
} from 'uWebSockets.js';

export function assertNativeBinding(): void {
  if (!('SSLApp' in uWS) || typeof (uWS as { getParts?: unknown }).getParts !== 'function') {
    throw new Error(
      'uWebSockets.js native binding did not load (the pure-JS fallback is active). ' +
        'Confab needs Node 20 on x64/arm64 Linux with glibc >= 2.31; see docs/operations.md "Version pins".',
    );
  }
}

export function createApp(): uWS.TemplatedApp {
  assertNativeBinding();
  return uWS.App();
}

export function listen(
  app: uWS.TemplatedApp,
  host: string,
  port: number,
): Promise<{ socket: uWS.us_listen_socket; port: number }> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (!socket) {
        reject(new Error(`cannot listen on ${host}:${port}`));
        return;
      }
      resolve({ socket, port: uWS.us_socket_local_port(socket) });
    });
  });
}

/** Listens on a Unix socket (behind the HTTP guard). */
export function listenUnix(app: uWS.TemplatedApp, file: string): Promise<uWS.us_listen_socket> {
  return new Promise((resolve, reject) => {
    app.listen_unix((socket) => {
      if (socket) resolve(socket);
      else reject(new Error(`cannot listen on ${file}`));
    }, file);
  });
}

export function closeListenSocket(socket: uWS.us_listen_socket): void {
  uWS.us_listen_socket_close(socket);
}

export const DISABLED_COMPRESSION = uWS.DISABLED;
