/**
 * Request bodies that end early, for the property tests of test/api/cut-bodies-*.test.ts: a body
 * in one of the encodings Confab reads (multipart with a file part or without, urlencoded, a JSON
 * object; fields holding JSON), sent with Content-Length or chunked, cut at a byte — either
 * declared at the cut (the body is complete as HTTP goes, short of its own encoding) or cut off
 * by the client (it half-closes or resets after the cut). What is checked after each: an answer
 * when one is due, within 5 s, never a 5xx, errors in the API's format; no received file left in
 * DATA_DIR/tmp; no request left in flight.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Endpoint } from '../../src/http/endpoint.js';
import { basicAuth } from './api.js';
import { ANSWER_WITHIN_MS } from './fuzz.js';
import { chunked, exchange, head, type Ending, type RawAnswer } from './raw-http.js';
import type { TestServer } from './server.js';
import type { BrowserSession } from './session.js';

export type BodyEncoding = 'multipart-file' | 'multipart' | 'form' | 'json';
export type Transfer = 'length' | 'chunked';

export type CutCase = {
  method: string;
  /** Under /api/v1/ (Basic credentials) or /json/ (the browser's session cookie and CSRF token). */
  target: string;
  who: string | null;
  encoding: BodyEncoding;
  transfer: Transfer;
  ending: Ending;
  /** Bytes of the encoded body (before chunked framing) the server gets, or the whole stream's. */
  cut: number;
  fields: readonly (readonly [string, string])[];
  file: Buffer;
  chunkSizes: readonly number[];
};

const BOUNDARY = 'cutbodyboundary';

export function encodeBody(
  encoding: BodyEncoding,
  fields: readonly (readonly [string, string])[],
  file: Buffer,
): { body: Buffer; contentType: string } {
  if (encoding === 'form') {
    const sp = new URLSearchParams();
    for (const [k, v] of fields) sp.append(k, v);
    return { body: Buffer.from(sp.toString()), contentType: 'application/x-www-form-urlencoded' };
  }
  if (encoding === 'json') {
    return {
      body: Buffer.from(JSON.stringify(Object.fromEntries(fields))),
      contentType: 'application/json',
    };
  }
  const parts: Buffer[] = [];
  for (const [k, v] of fields) {
    parts.push(
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n`),
      Buffer.from(v),
      Buffer.from('\r\n'),
    );
  }
  if (encoding === 'multipart-file') {
    parts.push(
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\n` +
          'Content-Type: text/plain\r\n\r\n',
      ),
      file,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return {
    body: Buffer.concat(parts),
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
  };
}

/** The bytes on the wire and the head announcing them, for `c`. */
export function wire(c: CutCase, auth: Record<string, string>): { head: string; payload: Buffer } {
  const { body, contentType } = encodeBody(c.encoding, c.fields, c.file);
  const headers: Record<string, string> = { 'Content-Type': contentType, ...auth };
  if (c.transfer === 'length') {
    // Declared at the cut (complete as HTTP goes), or at the whole body's length (cut off).
    const declared = c.ending === 'complete' ? Math.min(c.cut, body.length) : body.length;
    headers['Content-Length'] = String(declared);
    return { head: head(c.method, c.target, headers), payload: body.subarray(0, c.cut) };
  }
  headers['Transfer-Encoding'] = 'chunked';
  if (c.ending === 'complete') {
    return {
      head: head(c.method, c.target, headers),
      payload: chunked(body.subarray(0, c.cut), c.chunkSizes),
    };
  }
  // The chunked stream itself stops at the cut (inside a size line, a chunk or the last one).
  const stream = chunked(body, c.chunkSizes);
  return { head: head(c.method, c.target, headers), payload: stream.subarray(0, c.cut) };
}

/** Describes a case for a failure message (enough to rebuild it as a regression test). */
export function describeCut(c: CutCase): string {
  const { body } = encodeBody(c.encoding, c.fields, c.file);
  return (
    `${c.method} ${c.target} as ${c.who ?? 'anonymous'}, ${c.encoding} ${c.transfer}, ` +
    `${c.ending}, cut at ${c.cut} of ${body.length} bytes` +
    (c.transfer === 'chunked' ? ` (chunks ${JSON.stringify(c.chunkSizes)})` : '') +
    `\n  body: ${JSON.stringify(body.subarray(0, 600).toString('latin1'))}`
  );
}

/**
 * What is wrong with an answer to `target` (empty: nothing). API routes answer errors in the
 * API's format; pages (a browser's forms) answer theirs in HTML.
 */
export function answerProblems(a: RawAnswer, target: string): string[] {
  const out: string[] = [];
  if (a.status >= 500 || a.status < 200) out.push(`status ${a.status}`);
  if (a.ms > ANSWER_WITHIN_MS) out.push(`answered after ${Math.round(a.ms)} ms`);
  const api = /^\/(api\/v1|json)\//.test(target);
  if (a.status >= 400 && (api || a.json !== null)) {
    const b = a.json;
    if (b === null) out.push('an error that is not a JSON object');
    else {
      if (b.result !== 'error') out.push(`result ${JSON.stringify(b.result)}`);
      if (typeof b.msg !== 'string' || b.msg === '') out.push('an error without a msg');
      if (typeof b.code !== 'string' || !/^[A-Z_]+$/.test(b.code))
        out.push('an error without a code');
    }
  }
  return out;
}

function receivedParts(dataDir: string): string[] {
  try {
    return fs.readdirSync(path.join(dataDir, 'tmp')).filter((n) => /^[0-9a-f]{32}$/.test(n));
  } catch {
    return [];
  }
}

/**
 * Sends `c` and checks the server's side: an answer when one is due, and, once the request is
 * over, nothing of it left (in flight, on disk). Returns the problems found.
 */
export async function sendCut(
  ts: TestServer,
  c: CutCase,
  keys: Record<string, string>,
  sessions: Record<string, BrowserSession> = {},
): Promise<{ problems: string[]; answer: RawAnswer | null }> {
  const auth: Record<string, string> = {};
  const session = c.who === null ? undefined : sessions[c.who];
  if (c.target.startsWith('/json/') && session) {
    // As the web app sends it: the cookie, the CSRF token and the page's own origin.
    auth.Cookie = `confab_session=${session.token}`;
    auth['X-CSRF-Token'] = session.csrfToken;
    auth.Origin = 'http://testserver.local'; // the Host raw requests name (./raw-http.ts)
  } else if (c.who !== null && !c.target.startsWith('/json/')) {
    const u = ts.fx.users[c.who]!;
    auth.Authorization = basicAuth(u.email, keys[c.who] ?? u.api_key);
  }
  const { head: h, payload } = wire(c, auth);
  const { answer, timedOut } = await exchange(
    ts.url,
    h,
    payload,
    c.ending,
    ANSWER_WITHIN_MS + 5000,
  );
  const problems: string[] = [];
  if (c.ending === 'complete') {
    if (answer === null) {
      problems.push(timedOut ? 'no answer within 10 s' : 'the connection closed without an answer');
    } else problems.push(...answerProblems(answer, c.target));
  } else if (answer !== null && answer.status >= 500) {
    problems.push(`status ${answer.status} before the client went away`);
  }
  // What the request held: its place in flight and its received file parts, released once it is
  // over (removal is asynchronous: a short wait).
  const start = Date.now();
  while (ts.server.inflight > 0 || receivedParts(ts.dataDir).length > 0) {
    if (Date.now() - start > ANSWER_WITHIN_MS) {
      if (ts.server.inflight > 0) problems.push(`${ts.server.inflight} requests left in flight`);
      const left = receivedParts(ts.dataDir);
      if (left.length > 0) problems.push(`${left.length} received file parts left in DATA_DIR/tmp`);
      break;
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  return { problems, answer };
}

/** Endpoints that take a body (what a cut can reach). */
export function bodyEndpoints(all: readonly Endpoint[]): Endpoint[] {
  return all.filter((ep) => ep.method !== 'GET');
}
