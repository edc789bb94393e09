/**
 * Where the HTTP server listens: uWS on the public address itself, or (HTTP_GUARD, the default)
 * uWS on a private Unix socket behind the guard's relay (guard.ts), which answers the odd but legal
 * requests uWS would hold or drop through a route only it knows.
 */
import fs from 'node:fs';
import { JsonableError } from '../lib/errors.js';
import { guardRoutes, HttpGuard, privateSocketPath } from './guard.js';
import { RequestContext } from './request.js';
import { sendError } from './respond.js';
import { closeListenSocket, listen, listenUnix, type TemplatedApp } from './uws.js';

/** The guard's answers end the connection (nothing after the refused request is read). */
const CLOSE = { Connection: 'close' };

export type HttpListener = {
  readonly port: number;
  /** Stops accepting connections; open ones go on (resolves once what arrived reached uWS). */
  stopAccepting(): Promise<void>;
  /** Ends the connections left (once shutdown has answered what it will). */
  closeConnections(): void;
};

export async function openListener(
  app: TemplatedApp,
  host: string,
  port: number,
  guarded: boolean,
): Promise<HttpListener> {
  if (!guarded) {
    const { socket, port: bound } = await listen(app, host, port);
    return {
      port: bound,
      stopAccepting: () => Promise.resolve(closeListenSocket(socket)),
      closeConnections() {},
    };
  }
  const routes = guardRoutes();
  app.get(`${routes.prefix}/:status/:what`, (res, req) => {
    const ctx = new RequestContext(req, 2, 'GET');
    res.onAborted(() => ctx.markAborted());
    const what = ctx.pathParams[1] ?? '';
    const status = ctx.pathParams[0];
    const err =
      status === '501'
        ? new JsonableError(`Method not implemented: ${what.slice(0, 32)}`, {
            code: 'BAD_REQUEST',
            status: 501,
            headers: CLOSE,
          })
        : status === '431'
          ? new JsonableError('Request header fields too large', {
              code: 'BAD_REQUEST',
              status: 431,
              headers: CLOSE,
            })
          : new JsonableError('Malformed request header', {
              code: 'BAD_REQUEST',
              status: 400,
              headers: CLOSE,
            });
    sendError(res, ctx, err, true);
  });
  const { dir, file } = privateSocketPath();
  let socket;
  try {
    socket = await listenUnix(app, file);
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const guard = new HttpGuard(file, routes);
  let bound: number;
  try {
    bound = await guard.listen(host, port);
  } catch (err) {
    closeListenSocket(socket);
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    port: bound,
    // uWS's own socket stays open until the end: only the guard's open relays reach it, and a
    // relay still connecting must not be refused.
    stopAccepting: () => guard.close(),
    closeConnections() {
      closeListenSocket(socket);
      guard.endAll();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
