/**
 * The access log's line (one per request, `msg` "request"), built directly from its few fields
 * instead of through a logger object per request: the same JSON a pino line of the process
 * logger would be (`level`, `time`, the fields in this order, `msg`; docs/operations.md "Logs"),
 * at a fraction of the cost. Only these fields exist: the line takes the route pattern, never the
 * path or query string, and nothing of the headers but the User-Agent, so no credential, password
 * or content can reach it. Client-supplied strings (the User-Agent; the method on a build that
 * routes unknown methods) are escaped by JSON.stringify: quotes, backslashes, control characters
 * (a newline cannot start a forged line) and lone surrogates.
 */

export type AccessFields = {
  reqId: string;
  method: string;
  /** The route pattern ('(unmatched)' when no endpoint matched). */
  url: string;
  status: number;
  /** Milliseconds, rounded to a tenth. */
  ms: number;
  userId: number | null;
  realmId: number | null;
  /** The client's address ('' when it was not read). */
  address: string;
  userAgent: string;
};

let lastMs = -1;
let lastIso = '';

/** `new Date(ms).toISOString()`, computed once per millisecond. */
export function isoTime(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/** A JSON number, or null for what JSON has no number for. */
function num(n: number | null): string {
  if (n === null) return 'null';
  // An integer's text is V8's cached string; any other number takes the shortest-form algorithm.
  if (Number.isSafeInteger(n)) return '' + n;
  return Number.isFinite(n) ? String(n) : 'null';
}

/**
 * `num(ms)` for the usual `ms`, a whole number of tenths, from two integers (the shortest form of
 * a double, which a fraction needs, costs several times as much); anything else as `num`.
 */
function tenths(ms: number): string {
  const t = Math.round(ms * 10);
  if (t >= 0 && t <= 0x1fffffffffffff && t / 10 === ms) {
    const frac = t % 10;
    const whole = (t - frac) / 10;
    return frac === 0 ? '' + whole : '' + whole + '.' + frac;
  }
  return num(ms);
}

/** Strings with nothing JSON escapes: printable ASCII but `"` and `\`. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** A string of ours (the request id, the client's canonical address) as JSON. */
function plain(s: string): string {
  return PLAIN.test(s) ? '"' + s + '"' : JSON.stringify(s);
}

/**
 * Strings that repeat from request to request (the method, the route pattern, a client's
 * User-Agent) as JSON, each escaped once: the last JSON_CACHE_SIZE distinct ones are kept (the
 * cache starts afresh when full, so a client sending a new User-Agent each time costs only
 * itself the escaping); longer than JSON_CACHE_CHARS, escaped each time (the cache stays small).
 */
const JSON_CACHE_SIZE = 512;
const JSON_CACHE_CHARS = 256;
const jsonCache = new Map<string, string>();

function cachedJson(s: string): string {
  if (s.length > JSON_CACHE_CHARS) return JSON.stringify(s);
  let json = jsonCache.get(s);
  if (json === undefined) {
    json = JSON.stringify(s);
    if (jsonCache.size >= JSON_CACHE_SIZE) jsonCache.clear();
    jsonCache.set(s, json);
  }
  return json;
}

/** The request's line, newline included. */
export function accessLine(f: AccessFields, nowMs: number = Date.now()): string {
  return (
    `{"level":"info","time":"${isoTime(nowMs)}","reqId":${plain(f.reqId)}` +
    `,"method":${cachedJson(f.method)},"url":${cachedJson(f.url)}` +
    `,"status":${num(f.status)},"ms":${tenths(f.ms)},"userId":${num(f.userId)}` +
    `,"realmId":${num(f.realmId)},"address":${plain(f.address)}` +
    `,"userAgent":${cachedJson(f.userAgent)},"msg":"request"}\n`
  );
}
