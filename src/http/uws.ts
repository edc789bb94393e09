/**
 * THE ONLY importer of uWebSockets.js. The official package is not on the npm registry; two
 * republished native builds are, and which one loads depends on the runtime:
 *
 *   modern  uws-modern (npm:@btc-vision/uwebsockets.js, v20.57, an optional dependency):
 *           binaries for Node 20/22/24/25 (ABI 115/127/137/141) that need glibc >= 2.38 (Debian
 *           13, Ubuntu 24.04 and later). Its parser (uWebSockets >= 20.61) takes every token
 *           header name and routes any method.
 *   legacy  uWebSockets.js (npm:@trufflesuite/uws-js-unofficial, v20.30): binaries for Node
 *           16/18/20 (ABI 93/108/115), glibc >= 2.27: Node 20 on Debian 12. It leaves odd but
 *           legal HTTP unanswered (LIMITS below).
 *
 * The modern build is used wherever it loads, the legacy one otherwise; CONFAB_UWS=modern|legacy
 * forces one (and fails if it does not load). No newer republish (>= 20.60) is on the registry
 * (looked for 2026-12-03: `uwebsockets` 3.0.6 is an older core under another name). The legacy
 * package silently falls back to a slow pure-JS server when its binary is missing, which is why
 * it is not even loaded then; and we refuse to run on any fallback: a 10x slower server that looks
 * healthy is worse than none.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type uWSTypes from 'uWebSockets.js';
import { SettingsError } from '../lib/settings-error.js';
import type { ShutdownGate } from './drain.js';
import { guardApp } from './unexpected.js';

type UWS = typeof uWSTypes;

const require = createRequire(import.meta.url);

export type UwsBuildName = 'modern' | 'legacy';

/** What each build does not answer itself (the nginx recipe does: docs/robustness.md). */
export const LIMITS: Record<UwsBuildName, string> = {
  modern: 'absolute-form targets, OPTIONS * and HTTP/1.0 are answered 505 by uWS',
  legacy:
    'header names with characters other than letters, digits and "-", absolute-form targets, ' +
    'OPTIONS * and HTTP/1.0 are closed unanswered after its 10 s idle timeout; unknown methods ' +
    'are closed at once',
};

/** What `chooseBuild` knows about this runtime. */
export type BuildProbe = {
  /** CONFAB_UWS ('' or undefined: choose). */
  override: string | undefined;
  /** Whether the legacy package has a binary for this Node (else it would fall back to JS). */
  legacyHasBinary: boolean;
  /** Loads the modern build: null if it loaded, else why not. */
  loadModern: () => Error | null;
};

/** Which build to load, or why none can be: pure, for tests (test/unit/uws-build.test.ts). */
export function chooseBuild(
  p: BuildProbe,
): { build: UwsBuildName; modernError: Error | null } | { error: string } {
  const override = p.override ?? '';
  if (override !== '' && override !== 'modern' && override !== 'legacy')
    return { error: `CONFAB_UWS must be modern or legacy, not ${JSON.stringify(override)}` };
  if (override === 'legacy') {
    return p.legacyHasBinary
      ? { build: 'legacy', modernError: null }
      : { error: 'CONFAB_UWS=legacy, but the legacy build has no binary for this Node' };
  }
  const modernError = p.loadModern();
  if (modernError === null) return { build: 'modern', modernError: null };
  if (override === 'modern')
    return { error: `CONFAB_UWS=modern, but it does not load: ${modernError.message}` };
  if (p.legacyHasBinary) return { build: 'legacy', modernError };
  return { error: `neither build loads: ${modernError.message}` };
}

/** The build loaded, and for the log, its package and binary (docs/operations.md "Runtimes"). */
export let uwsBuildName: UwsBuildName = 'legacy';
export let uwsBuild = '';
/** Why the modern build did not load, when the legacy one runs (first line; for the log). */
export let modernUnavailable = '';

function loadUws(): UWS {
  const abi = process.versions.modules;
  const binary = `uws_${process.platform}_${process.arch}_${abi}.node`;
  const legacyDir = path.dirname(require.resolve('uWebSockets.js/package.json'));
  let modern: UWS | null = null;
  const choice = chooseBuild({
    override: process.env.CONFAB_UWS,
    legacyHasBinary: fs.existsSync(path.join(legacyDir, 'binaries', binary)),
    loadModern: () => {
      try {
        modern = require('uws-modern') as UWS;
        return null;
      } catch (err) {
        return err as Error;
      }
    },
  });
  if ('error' in choice) {
    throw new SettingsError(
      `no uWebSockets.js build for Node ${process.version} (${binary}): ${choice.error}. ` +
        'Confab runs on Node 20 with glibc >= 2.27, or Node 20/22/24 with glibc >= 2.38; see docs/operations.md "Runtimes".',
    );
  }
  uwsBuildName = choice.build;
  if (choice.build === 'modern' && modern !== null) {
    uwsBuild = `@btc-vision/uwebsockets.js 20.57 (${binary})`;
    return modern;
  }
  const lines = (choice.modernError?.message ?? '').split('\n').filter((l) => l.trim() !== '');
  modernUnavailable = lines.find((l) => l.includes('GLIBC')) ?? lines[0] ?? '';
  uwsBuild = `@trufflesuite/uws-js-unofficial 20.30 (${binary})`;
  return require('uWebSockets.js') as UWS;
}

const uWS = loadUws();

/** The start's one line about the build (src/server.ts logs it once per process). */
export function buildReport(): { msg: string; fields: Record<string, string> } {
  const fields: Record<string, string> = { build: uwsBuild, notAnswered: LIMITS[uwsBuildName] };
  if (modernUnavailable !== '') fields.modernUnavailable = modernUnavailable;
  return {
    msg: `uWebSockets.js ${uwsBuildName} build ${uwsBuild}; not answered by it (the nginx recipe answers them: docs/robustness.md): ${LIMITS[uwsBuildName]}`,
    fields,
  };
}

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
 * ends the process, so each mounted callback is guarded (./unexpected.ts); with a `gate`, the
 * shutdown's gate stands in front of each (./drain.ts).
 */
export function createApp(gate?: ShutdownGate): uWSTypes.TemplatedApp {
  assertNativeBinding();
  return guardApp(uWS.App(), gate);
}

/** An app without the guards, for the benches' bare-uWS baselines only. */
export function createBareApp(): uWSTypes.TemplatedApp {
  assertNativeBinding();
  return uWS.App();
}

/**
 * uSockets' listen option that leaves SO_REUSEPORT off (both builds take it as listen's third
 * argument; their type definitions lack that form).
 */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

type ListenWithOptions = (
  host: string,
  port: number,
  options: number,
  cb: (socket: uWSTypes.us_listen_socket | false) => void,
) => unknown;

/**
 * Listens on `host`:`port` (0: a free port) alone. uSockets sets SO_REUSEPORT by default, so a
 * second server started on a port in use (a forgotten one, another test's) would listen too and
 * the kernel would split the connections between them, unrelated servers answering each other's
 * clients (the likeliest cause of a cluster test's request answered 429 in CI by a server whose
 * test had rate limits on). Exclusive, the second one fails to start, as any other server does.
 */
export function listen(
  app: uWSTypes.TemplatedApp,
  host: string,
  port: number,
): Promise<{ socket: uWSTypes.us_listen_socket; port: number }> {
  return new Promise((resolve, reject) => {
    (app.listen as unknown as ListenWithOptions).call(
      app,
      host,
      port,
      LIBUS_LISTEN_EXCLUSIVE_PORT,
      (socket) => {
        if (!socket) {
          reject(
            new SettingsError(
              `cannot listen on ${host}:${port}: the port is taken by another program, or HOST is not an address of this machine (PORT, HOST)`,
            ),
          );
          return;
        }
        resolve({ socket, port: uWS.us_socket_local_port(socket) });
      },
    );
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
