/**
 * THE ONLY importer of uWebSockets.js. The official package is not on the npm registry; two
 * republished native builds are, and which one loads depends on the runtime:
 *
 *   uWebSockets.js  (npm:@trufflesuite/uws-js-unofficial, v20.30) binaries for Node 16/18/20
 *                   (ABI 93/108/115), glibc >= 2.27: Node 20 on Debian 12 and newer.
 *   uws-modern      (npm:@btc-vision/uwebsockets.js, v20.57, an optional dependency) binaries
 *                   for Node 20/22/24/25 (ABI 115/127/137/141), glibc >= 2.38: Node 22 and 24 on
 *                   Debian 13 or newer (docs/operations.md "Runtimes").
 *
 * The first is used whenever it has a binary for this Node; otherwise the second. The first
 * package silently falls back to a slow pure-JS server when its binary is missing, which is why
 * it is not even loaded then; and we refuse to run on any fallback: a 10x slower server that looks
 * healthy is worse than none.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type uWSTypes from 'uWebSockets.js';
import { guardApp } from './unexpected.js';

type UWS = typeof uWSTypes;

const require = createRequire(import.meta.url);

/** Which build is loaded (for the log and docs/operations.md "Runtimes"). */
export let uwsBuild = '';

function loadUws(): UWS {
  const abi = process.versions.modules;
  const binary = `uws_${process.platform}_${process.arch}_${abi}.node`;
  const legacyDir = path.dirname(require.resolve('uWebSockets.js/package.json'));
  if (fs.existsSync(path.join(legacyDir, 'binaries', binary))) {
    uwsBuild = `@trufflesuite/uws-js-unofficial (${binary})`;
    return require('uWebSockets.js') as UWS;
  }
  try {
    const modern = require('uws-modern') as UWS;
    uwsBuild = `@btc-vision/uwebsockets.js (${binary})`;
    return modern;
  } catch (err) {
    throw new Error(
      `no uWebSockets.js build loads on Node ${process.version} (${binary}): ${(err as Error).message}. ` +
        'Confab runs on Node 20 with glibc >= 2.27, or Node 22/24 with glibc >= 2.38; see docs/operations.md "Runtimes".',
      { cause: err },
    );
  }
}

const uWS = loadUws();

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
        'Confab needs Node 20, 22 or 24 on x64/arm64 Linux; see docs/operations.md "Runtimes".',
    );
  }
}

/**
 * The app every route and WebSocket is mounted on: an exception thrown through a uWS callback
 * ends the process, so each mounted callback is guarded (./unexpected.ts).
 */
export function createApp(): uWSTypes.TemplatedApp {
  assertNativeBinding();
  return guardApp(uWS.App());
}

/** An app without the guards, for the benches' bare-uWS baselines only. */
export function createBareApp(): uWSTypes.TemplatedApp {
  assertNativeBinding();
  return uWS.App();
}

export function listen(
  app: uWSTypes.TemplatedApp,
  host: string,
  port: number,
): Promise<{ socket: uWSTypes.us_listen_socket; port: number }> {
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

export function closeListenSocket(socket: uWSTypes.us_listen_socket): void {
  uWS.us_listen_socket_close(socket);
}

/** Ends every connection the app still holds (both builds have it; the older one's types lack it). */
export function closeAllConnections(app: uWSTypes.TemplatedApp): void {
  (app as { close?: () => void }).close?.();
}

export const DISABLED_COMPRESSION = uWS.DISABLED;
