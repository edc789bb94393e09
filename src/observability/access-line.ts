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
  return n !== null && Number.isFinite(n) ? String(n) : 'null';
}

/** The request's line, newline included. */
export function accessLine(f: AccessFields, nowMs: number = Date.now()): string {
  return (
    `{"level":"info","time":"${isoTime(nowMs)}","reqId":${JSON.stringify(f.reqId)}` +
    `,"method":${JSON.stringify(f.method)},"url":${JSON.stringify(f.url)}` +
    `,"status":${num(f.status)},"ms":${num(f.ms)},"userId":${num(f.userId)}` +
    `,"realmId":${num(f.realmId)},"address":${JSON.stringify(f.address)}` +
    `,"userAgent":${JSON.stringify(f.userAgent)},"msg":"request"}\n`
  );
}
