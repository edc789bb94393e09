/**
 * `/json/<path>` for every `/api/v1/<path>` endpoint (the reference serves its API under both
 * prefixes): the same handler, parameters and answers, authenticated by the browser's session
 * cookie only, never HTTP Basic, with the CSRF defences of src/http/sessions.ts. A path that has
 * an endpoint of its own under /json/ (POST /json/fetch_api_key, which takes the session and the
 * password) keeps it.
 */
import type { Endpoint } from './endpoint.js';

const API = '/api/v1/';
const JSON_PREFIX = '/json/';

export function withJsonMirror(endpoints: readonly Endpoint[]): Endpoint[] {
  const own = new Set(
    endpoints
      .filter((ep) => ep.path.startsWith(JSON_PREFIX))
      .map((ep) => `${ep.method} ${ep.path}`),
  );
  const mirrored: Endpoint[] = [];
  for (const ep of endpoints) {
    if (!ep.path.startsWith(API)) continue;
    const path = JSON_PREFIX + ep.path.slice(API.length);
    if (own.has(`${ep.method} ${path}`)) continue;
    mirrored.push({
      ...ep,
      path,
      uwsPath: JSON_PREFIX + ep.uwsPath.slice(API.length),
      // A trailing `*name` starts one segment earlier: /json/ is one segment, /api/v1/ two.
      wildcardDepth: ep.wildcardDepth === null ? null : ep.wildcardDepth - 1,
      sessionAuth: 'only',
    });
  }
  return [...endpoints, ...mirrored];
}
