/**
 * Routes that exist only to test the server itself, mounted when `testRoutes` is on (never in
 * production): a handler that throws a plain Error, to check that a 500 is answered as JSON and
 * that the server keeps serving.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';

export const failingRoute = endpoint({
  method: 'GET',
  path: '/api/v1/__test/fail',
  auth: 'none',
  params: z.object({}),
  handle: () => {
    throw new Error('deliberate failure for a test');
  },
});

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

export const TEST_ENDPOINTS = [failingRoute, failingAsyncRoute];
