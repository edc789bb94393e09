/**
 * Routes that exist only to test the server itself, mounted when `testRoutes` is on (never in
 * production). Each fails on purpose at one step of a request, to show that the step answers an
 * unexpected exception with a 500 in the API's error format (or, once bytes of the answer are
 * out, closes the connection), releases what the request held, and that the process lives on
 * (docs/robustness.md "Unexpected exceptions"; test/api/unexpected-errors.test.ts).
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { FileBody, HeldResponse } from '../http/respond.js';
import type { TemplatedApp } from '../http/uws.js';
import { oneOf } from '../lib/params.js';

/** A value whose serialization throws (JSON.stringify calls toJSON). */
function unserializable(): object {
  return {
    value: {
      toJSON() {
        throw new RangeError('deliberate failure while serializing, for a test');
      },
    },
  };
}

/** A synchronous handler that throws. */
export const failingRoute = endpoint({
  method: 'GET',
  path: '/api/v1/__test/fail',
  auth: 'none',
  params: z.object({}),
  handle: () => {
    throw new Error('deliberate failure for a test');
  },
});

/** An asynchronous handler that rejects. */
export const failingAsyncRoute = endpoint({
  method: 'POST',
  path: '/api/v1/__test/fail',
  auth: 'none',
  params: z.object({}),
  handle: async () => {
    await Promise.resolve();
    throw new TypeError('deliberate asynchronous failure for a test');
  },
});

/** The router throws as the request arrives, before anything of it is set up. */
const failOnArrival = endpoint({
  method: 'POST',
  path: '/api/v1/__test/fail/arrival',
  auth: 'none',
  params: z.object({}),
  testFault: 'arrival',
  handle: () => ({}),
});

/** The router throws on a chunk of the body after the first (a file part may be half on disk). */
const failOnBodyChunk = endpoint({
  method: 'POST',
  path: '/api/v1/__test/fail/body-chunk',
  auth: 'none',
  params: z.object({}),
  acceptsFiles: { maxFiles: 1 },
  testFault: 'body-chunk',
  handle: () => ({}),
});

/** The router throws when the parsed body (and its received files) is handed on. */
const failOnBodyEnd = endpoint({
  method: 'POST',
  path: '/api/v1/__test/fail/body-end',
  auth: 'none',
  params: z.object({}),
  acceptsFiles: { maxFiles: 1 },
  testFault: 'body-end',
  handle: () => ({}),
});

/** A value that cannot be written, at once (`sync`) or from a promise (`async`). */
const failWhileResponding = endpoint({
  method: 'GET',
  path: '/api/v1/__test/fail/respond',
  auth: 'none',
  params: z.object({ mode: oneOf(['sync', 'async'] as const).default('sync') }),
  handle: (_ctx, p) => (p.mode === 'sync' ? unserializable() : Promise.resolve(unserializable())),
});

/** A held answer (as a long-poll's) answered later with a value that cannot be written. */
const failHeld = endpoint({
  method: 'GET',
  path: '/api/v1/__test/fail/held',
  auth: 'none',
  params: z.object({}),
  handle: () => {
    const held = new HeldResponse();
    setTimeout(() => held.answer(unserializable()), 5);
    return held;
  },
});

/**
 * A file whose reading fails once its headers are out: the first read rejects (`reject`) or
 * throws (`throw`) after the first chunk went out. The handle counts its closes (`closed`).
 */
const failStreaming = endpoint({
  method: 'GET',
  path: '/api/v1/__test/fail/stream',
  auth: 'none',
  params: z.object({ mode: oneOf(['reject', 'throw'] as const).default('reject') }),
  handle: (_ctx, p) => {
    let reads = 0;
    const handle = {
      read(buf: Buffer, offset: number, length: number) {
        reads++;
        if (reads === 1) {
          buf.fill(0x61, offset, offset + length);
          return Promise.resolve({ bytesRead: length, buffer: buf });
        }
        if (p.mode === 'throw') throw new Error('deliberate failure reading a file, for a test');
        return Promise.reject(new Error('deliberate failure reading a file, for a test'));
      },
      close() {
        streamCloses.count++;
        return Promise.resolve();
      },
    };
    return new FileBody(
      handle as unknown as ConstructorParameters<typeof FileBody>[0],
      256 * 1024,
      'application/octet-stream',
    );
  },
});

/** How many file handles of the failing stream route were closed (tests read it). */
export const streamCloses = { count: 0 };

/**
 * Answers, then fails outside any request: a timer that throws and a promise rejected with no
 * one to catch it (`error`), or a timer throwing SQLite's report of a corrupt database (`fatal`).
 * Only the process-level last resort sees these (src/process-guard.ts).
 */
const failLater = endpoint({
  method: 'GET',
  path: '/api/v1/__test/fail/later',
  auth: 'none',
  params: z.object({ mode: oneOf(['error', 'fatal'] as const).default('error') }),
  handle: (_ctx, p) => {
    setTimeout(() => {
      if (p.mode === 'fatal') {
        // As better-sqlite3 reports a database SQLite finds corrupt.
        throw Object.assign(
          new Error('database disk image is malformed (deliberate, for a test)'),
          {
            code: 'SQLITE_CORRUPT',
          },
        );
      }
      throw new Error('deliberate failure in a timer, for a test');
    }, 5);
    if (p.mode === 'error') {
      void Promise.reject(new Error('deliberate unhandled rejection, for a test'));
    }
    return {};
  },
});

export const TEST_ENDPOINTS = [
  failingRoute,
  failingAsyncRoute,
  failOnArrival,
  failOnBodyChunk,
  failOnBodyEnd,
  failWhileResponding,
  failHeld,
  failStreaming,
  failLater,
];

/** A WebSocket whose callbacks throw: on open (`?at=open`), on each message, and on close. */
export const TEST_SOCKET_PATH = '/api/v1/__test/socket';

export function mountTestSockets(app: TemplatedApp): void {
  app.ws<{ at: string }>(TEST_SOCKET_PATH, {
    upgrade: (res, req, context) => {
      const at = new URLSearchParams(req.getQuery() ?? '').get('at') ?? '';
      if (at === 'upgrade') throw new Error('deliberate failure in an upgrade, for a test');
      res.upgrade(
        { at },
        req.getHeader('sec-websocket-key'),
        req.getHeader('sec-websocket-protocol'),
        req.getHeader('sec-websocket-extensions'),
        context,
      );
    },
    open: (ws) => {
      if (ws.getUserData().at === 'open') throw new Error('deliberate failure on open, for a test');
    },
    message: () => {
      throw new Error('deliberate failure handling a frame, for a test');
    },
    close: () => {
      throw new Error('deliberate failure on close, for a test');
    },
  });
}
