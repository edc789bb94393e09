/**
 * The endpoint fuzzer (test/api/fuzz-*.test.ts): walks every endpoint of ENDPOINTS and sends it
 * generated bad and odd requests — parameters missing, empty, of the wrong type, huge, deeply
 * nested, unicode, null bytes, invalid JSON, numbers out of range, path parameters that are not
 * numbers, duplicated parameters, every body encoding and some that are none — as users of every
 * role, anonymously and with bad credentials. Every answer must be a well-formed API response: no
 * 5xx, no hang, 4xx in the error shape, and a parameter the schema refuses named in the error.
 *
 * Deterministic: one seed (CONFAB_FUZZ_SEED, printed) drives a PRNG per endpoint, so a failure
 * repeats with the same seed; CONFAB_FUZZ_ONLY="POST /api/v1/users" narrows the run to matching
 * endpoints. Each failure prints the seed, the request number and the request itself.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { Test } from 'tap';
import type { z } from 'zod';
import type { Endpoint } from '../../src/http/endpoint.js';
import { UNREAD_SETTLE_ROWS } from '../../src/storage/store.js';
import { basicAuth } from './api.js';
import type { ApiOperation } from './openapi.js';
import type { TestServer } from './server.js';

// ---- randomness -------------------------------------------------------------------------------

export type Rng = {
  next(): number;
  int(n: number): number;
  pick<T>(xs: readonly T[]): T;
  chance(p: number): boolean;
};

/** mulberry32: small, fast, good enough to pick test inputs. */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!,
    chance: (p) => next() < p,
  };
}

export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * How many times the fuzz suite's default number of cases to run (CONFAB_FUZZ_RUNS, default 1):
 * `CONFAB_FUZZ_RUNS=20 npm run fuzz` is a run twenty times as long (docs/robustness.md).
 */
export function fuzzScale(): number {
  const env = process.env.CONFAB_FUZZ_RUNS;
  return env !== undefined && /^[1-9]\d*$/.test(env) ? Number(env) : 1;
}

export function fuzzSeed(): number {
  const env = process.env.CONFAB_FUZZ_SEED;
  return env !== undefined && /^\d+$/.test(env) ? Number(env) : 20261121;
}

// ---- values -----------------------------------------------------------------------------------

/**
 * Stands for bytes that are not UTF-8 (a private-use character no test sends otherwise): `send`
 * writes C3 28 FF 80 (a broken sequence, a byte never in UTF-8, a lone continuation byte) in its
 * place, raw in bodies and percent-encoded in URLs and forms.
 */
export const INVALID_UTF8 = '\ue000';
const INVALID_UTF8_BYTES = Buffer.from([0xc3, 0x28, 0xff, 0x80]);
const INVALID_UTF8_MARK = Buffer.from(INVALID_UTF8, 'utf8');

/** `buf` with each INVALID_UTF8 (as UTF-8) replaced by the invalid bytes. */
function withInvalidUtf8(buf: Buffer): Buffer {
  if (!buf.includes(INVALID_UTF8_MARK)) return buf;
  const out: Buffer[] = [];
  let at = 0;
  for (let i = buf.indexOf(INVALID_UTF8_MARK); i >= 0; i = buf.indexOf(INVALID_UTF8_MARK, at)) {
    out.push(buf.subarray(at, i), INVALID_UTF8_BYTES);
    at = i + INVALID_UTF8_MARK.length;
  }
  out.push(buf.subarray(at));
  return Buffer.concat(out);
}

/** A path or form with each percent-encoded INVALID_UTF8 replaced by the invalid bytes'. */
function withInvalidUtf8Escapes(text: string): string {
  return text.replace(/%EE%80%80/gi, '%C3%28%FF%80');
}

const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
const deepObject = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

/** Odd raw values for any parameter (everything arrives as a string). */
export const ODD_VALUES: readonly string[] = [
  '',
  ' ',
  '\t\n',
  'abc',
  '0',
  '-0',
  '-1',
  '1',
  '2',
  '1.5',
  '-1.5',
  '1e3',
  '1e309',
  '-1e309',
  '9007199254740992',
  '9007199254740993',
  '-9007199254740993',
  '18446744073709551616',
  '1' + '0'.repeat(400),
  '0x10',
  '010',
  '+1',
  ' 1',
  'NaN',
  'Infinity',
  'null',
  'true',
  'false',
  'True',
  '[]',
  '{}',
  '[1,2]',
  '[-1]',
  '[0]',
  '[1.5]',
  '["a"]',
  '[null]',
  '[[]]',
  '[{}]',
  '[true]',
  '{"a":1}',
  '{"new":1}',
  '{"new":null,"old":null}',
  '{"direct_members":[],"direct_subgroups":[]}',
  '{"direct_members":[-1],"direct_subgroups":[99999]}',
  '[{"operator":"is","operand":"dm"}]',
  '[["stream","x"]]',
  '[{"id":1,"order":2}]',
  '"string"',
  '"\\u0000"',
  '"\\ud800"',
  '[1e309]',
  '[9007199254740993]',
  '[' + '1,'.repeat(20_000) + '1]',
  deep(20_000),
  deepObject(20_000),
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '__proto__',
  'constructor',
  'toString',
  'a\u0000b',
  '\u0000',
  '😀',
  'ü',
  'x'.repeat(100_000),
  '😀'.repeat(10_000),
  '\u202eevil',
  'e\u0301',
  '\ufeffBOM',
  '\ud800',
  INVALID_UTF8,
  `a${INVALID_UTF8}b`,
  `["${INVALID_UTF8}"]`,
  '%',
  '%zz',
  '%00',
  '\r\nX-Injected: 1',
  '<script>alert(1)</script>',
  "'; DROP TABLE users;--",
  '../../etc/passwd',
  '#000000',
  '#ZZZZZZ',
  'UTC',
  'Not/AZone',
  'en',
  'newest',
  'oldest',
  'first_unread',
  'stream',
  'private',
  'direct',
  'add',
  'remove',
  'start',
  'stop',
  'a@b.c',
  'desdemona@zulip.com',
  'hamlet@zulip.com',
  'not an email',
  'https://example.com/%(id)s',
  'https://example.com/{id}',
  '(?P<id>[0-9]+)',
  '(a+)+',
  '[',
];

/** Values to try when looking for one a parameter's schema accepts. */
const ACCEPTABLE_CANDIDATES: readonly string[] = [
  '1',
  '10',
  '0',
  'true',
  'false',
  'abc',
  'general',
  '[]',
  '[1]',
  '[10]',
  '["abc"]',
  '{}',
  '"abc"',
  '1',
  'UTC',
  'en',
  '#abcdef',
  'newest',
  'stream',
  'add',
  'start',
  'a@b.c',
  '[{"operator":"is","operand":"dm"}]',
  '{"new":1}',
  '{"new":1,"old":1}',
  '{"direct_members":[],"direct_subgroups":[]}',
  '{"add":[],"delete":[]}',
  '[{"id":1,"order":1}]',
  '[{"stream_id":1,"property":"color","value":"#abcdef"}]',
  '[{"name":"general"}]',
  'https://example.com/{id}',
  '#(?P<id>[0-9]+)',
];

type Shape = Record<string, z.ZodType>;

/** Ids and keys of things that exist in the fuzzed realm, by parameter name (raw values). */
export type RealValues = Record<string, readonly string[]>;

function shapeOf(ep: Endpoint): Shape {
  return ep.compiled.schema.shape;
}

/** Whether the schema of `key` accepts `value` (a throwing transform counts as refusing). */
function accepts(shape: Shape, key: string, value: string | undefined): boolean {
  const schema = shape[key];
  if (!schema) return true;
  try {
    return schema.safeParse(value).success;
  } catch {
    return false;
  }
}

/**
 * For each parameter, a value its schema accepts — an existing thing's id or key first, else one of
 * the candidates (null when none is).
 */
export function acceptedValues(ep: Endpoint, real: RealValues = {}): Record<string, string | null> {
  const shape = shapeOf(ep);
  const out: Record<string, string | null> = {};
  for (const key of Object.keys(shape)) {
    out[key] =
      [...(real[key] ?? []), ...ACCEPTABLE_CANDIDATES].find((v) => accepts(shape, key, v)) ?? null;
  }
  return out;
}

// ---- values shaped by the schema -------------------------------------------------------------

type Def = { type: string; [k: string]: unknown };

function defOf(schema: unknown): Def {
  return (schema as { _zod: { def: Def } })._zod.def;
}

const ODD_NUMBERS: readonly number[] = [
  0,
  1,
  -1,
  2,
  3,
  10,
  100,
  255,
  -0,
  1.5,
  2 ** 31,
  2 ** 31 - 1,
  2 ** 32,
  2 ** 53 - 1,
  2 ** 53,
  -(2 ** 53),
  1e308,
  Number.MIN_VALUE,
];

const ODD_STRINGS: readonly string[] = [
  '',
  ' ',
  'a',
  'general',
  'fuzz public',
  'fuzz private',
  'x'.repeat(61),
  'x'.repeat(2000),
  '😀',
  'a\u0000b',
  '\ud800',
  '*',
  '**bold** @**Hamlet**',
  '#**fuzz public**',
  '<b>',
  '../x',
  'newest',
  'is',
  'dm',
  'stream',
  'color',
  'name',
  '#ffffff',
  'UTC',
  'https://example.com',
  'hamlet@zulip.com',
];

/**
 * A value of the shape `schema` describes (its JSON form inside a parameter), with odd leaves:
 * numbers at the edges or naming things that exist, odd strings, short and long lists, objects
 * missing keys or with extra ones. It reaches the handlers where random text stops at the decoder.
 */
export function shapedValue(schema: unknown, r: Rng, ids: readonly number[], depth = 0): unknown {
  const d = defOf(schema);
  if (depth > 6) return r.pick([null, 0, '', []]);
  switch (d.type) {
    case 'optional':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'nonoptional':
    case 'catch':
      return shapedValue(d.innerType, r, ids, depth);
    case 'nullable':
      return r.chance(0.15) ? null : shapedValue(d.innerType, r, ids, depth);
    case 'pipe':
      return isJsonPipe(d) ? shapedValue(d.out, r, ids, depth) : shapedValue(d.in, r, ids, depth);
    case 'lazy':
      return shapedValue((d.getter as () => unknown)(), r, ids, depth + 1);
    case 'number':
    case 'int':
    case 'bigint':
      return ids.length > 0 && r.chance(0.4) ? r.pick(ids) : r.pick(ODD_NUMBERS);
    case 'boolean':
      return r.chance(0.5);
    case 'string':
      return r.pick(ODD_STRINGS);
    case 'null':
      return null;
    case 'literal':
      return r.pick(d.values as readonly unknown[]);
    case 'enum':
      return r.chance(0.9) ? r.pick(Object.values(d.entries as object) as unknown[]) : 'bogus';
    case 'array': {
      const n = r.pick([0, 1, 1, 2, 3, 300]);
      const element = d.element;
      const out: unknown[] = [];
      for (let i = 0; i < n; i++) out.push(shapedValue(element, r, ids, depth + 1));
      if (n > 1 && r.chance(0.2)) out.push(out[0]); // a duplicate
      return out;
    }
    case 'tuple':
      return (d.items as unknown[]).map((item) => shapedValue(item, r, ids, depth + 1));
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(d.shape as object)) {
        if (r.chance(0.9)) out[k] = shapedValue(v, r, ids, depth + 1);
      }
      if (r.chance(0.1)) out.unexpected = 1;
      return out;
    }
    case 'record':
      return r.chance(0.3)
        ? {}
        : { [r.pick(['a', '1', 'name'])]: shapedValue(d.valueType, r, ids, depth + 1) };
    case 'union':
      return shapedValue(r.pick(d.options as unknown[]), r, ids, depth);
    default:
      // unknown, any, transform, custom…: any JSON.
      return r.pick([null, 0, 1, 'x', [], {}, [1], { a: 1 }, true]);
  }
}

/** `json(schema)`: z.string().transform(parse).pipe(schema). */
function isJsonPipe(d: Def): boolean {
  const inner = defOf(d.in);
  return (
    inner.type === 'pipe' &&
    defOf(inner.in).type === 'string' &&
    defOf(inner.out).type === 'transform'
  );
}

/** A raw parameter value shaped by the parameter's schema (JSON-encoded where it is JSON). */
export function shapedParam(schema: unknown, r: Rng, ids: readonly number[]): string {
  let d = defOf(schema);
  while (['optional', 'default', 'prefault', 'nullable', 'readonly', 'catch'].includes(d.type)) {
    d = defOf(d.innerType);
  }
  // Transforms after the JSON (json(x).transform(f)) or after a string (pathInt).
  while (d.type === 'pipe' && !isJsonPipe(d)) {
    const inner = defOf(d.in);
    if (inner.type === 'string') {
      return r.chance(0.5)
        ? String(r.pick(ids.length > 0 ? ids : ODD_NUMBERS))
        : r.pick(ODD_STRINGS);
    }
    d = inner;
  }
  if (d.type === 'pipe') return JSON.stringify(shapedValue(d.out, r, ids)) ?? 'null';
  if (d.type === 'enum') return String(shapedValue(schema, r, ids));
  if (d.type === 'string') return r.pick(ODD_STRINGS);
  return oddValue(r);
}

// ---- requests ---------------------------------------------------------------------------------

export type Identity =
  | { kind: 'user'; name: string }
  | { kind: 'anonymous' }
  | { kind: 'bad'; header: string }
  /** As the browser app: under /json/, by its session cookie and CSRF token (setFuzzSession). */
  | { kind: 'session'; name: string };

/** The browser sessions of fixture users, for requests as the browser app (`session` identity). */
const fuzzSessions = new Map<string, { token: string; csrfToken: string }>();

export function setFuzzSession(
  name: string,
  session: { token: string; csrfToken: string } | null,
): void {
  if (session) fuzzSessions.set(name, session);
  else fuzzSessions.delete(name);
}

export type Encoding = 'query' | 'form' | 'multipart' | 'json' | 'raw';

export type FuzzRequest = {
  method: string;
  /** Path with query string. */
  path: string;
  who: Identity;
  headers: Record<string, string>;
  body?: Buffer;
  encoding: Encoding;
  /** The single parameter deliberately mutated (targeted requests), with its value. */
  target?: { key: string; value: string | undefined };
  /** The body's length before it was cut (declared at the cut: complete as HTTP goes). */
  cutFrom?: number;
};

const ROLES = ['desdemona', 'iago', 'shiva', 'hamlet', 'polonius'] as const;

const BAD_AUTH: readonly string[] = [
  'Basic',
  'Basic !!!',
  'Bearer abc',
  'Basic ' + Buffer.from('no-colon').toString('base64'),
  'Basic ' + Buffer.from(':').toString('base64'),
  'Basic ' + Buffer.from('hamlet@zulip.com:').toString('base64'),
  'Basic ' + Buffer.from('hamlet@zulip.com:wrongkey').toString('base64'),
  'Basic ' + Buffer.from('\u0000:\u0000').toString('base64'),
  'Basic ' + 'A'.repeat(4000),
  'basic ' + Buffer.from('nobody@zulip.com:x').toString('base64'),
];

const PATH_VALUES: readonly string[] = [
  '0',
  '-1',
  'abc',
  '1.5',
  '99999999999999999999',
  '9007199254740993',
  '1e3',
  '%00',
  '%F0%9F%98%80',
  '%20',
  '%2F',
  '%25',
  '..',
  '%2e%2e',
  'null',
  '__proto__',
  'x'.repeat(3000),
];

function encodePathValue(r: Rng, wildcard: boolean): string {
  if (r.chance(0.55)) return String(1 + r.int(40));
  if (wildcard && r.chance(0.3)) {
    return r.pick(['2/ab/cd/x.txt', '../../x', '%2e%2e/%2e%2e/etc/passwd', '1/00/a/b', '/']);
  }
  return r.pick(PATH_VALUES);
}

function buildPath(
  ep: Endpoint,
  r: Rng,
  fixed?: Record<string, string>,
  real: RealValues = {},
): string {
  const segments = ep.path.split('/');
  return segments
    .map((seg) => {
      if (seg.startsWith(':')) {
        const name = seg.slice(1);
        return fixed?.[name] !== undefined
          ? encodeComponent(fixed[name])
          : real[name]?.length && r.chance(0.4)
            ? encodeComponent(r.pick(real[name]))
            : encodePathValue(r, false);
      }
      if (seg.startsWith('*')) {
        const name = seg.slice(1);
        if (fixed?.[name] !== undefined) return fixed[name];
        return real[name]?.length && r.chance(0.4) ? r.pick(real[name]) : encodePathValue(r, true);
      }
      return seg;
    })
    .join('/');
}

/** encodeURIComponent, with lone surrogates (which it refuses) sent as their UTF-8 replacement. */
function encodeComponent(s: string): string {
  return encodeURIComponent(
    s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'),
  );
}

function encodeFields(
  fields: readonly (readonly [string, string])[],
  encoding: Exclude<Encoding, 'query' | 'raw'>,
): { body: Buffer; contentType: string } {
  if (encoding === 'form') {
    const sp = new URLSearchParams();
    for (const [k, v] of fields) sp.append(k, v);
    return { body: Buffer.from(sp.toString()), contentType: 'application/x-www-form-urlencoded' };
  }
  if (encoding === 'json') {
    const obj: Record<string, string> = {};
    for (const [k, v] of fields)
      Object.defineProperty(obj, k, {
        value: v,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return { body: Buffer.from(JSON.stringify(obj)), contentType: 'application/json' };
  }
  const boundary = 'fuzzboundary' + fields.length;
  const parts: Buffer[] = [];
  for (const [k, v] of fields) {
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n`),
      Buffer.from(v),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Bodies that are not a well-formed encoding of anything. */
function oddBody(r: Rng): { body: Buffer; contentType: string } {
  switch (r.int(14)) {
    case 0:
      return { body: Buffer.from('{not json'), contentType: 'application/json' };
    case 1:
      return { body: Buffer.from('[1,2,3]'), contentType: 'application/json' };
    case 2:
      return { body: Buffer.from('"just a string"'), contentType: 'application/json' };
    case 3:
      return { body: Buffer.from('null'), contentType: 'application/json; charset=utf-8' };
    case 4:
      return { body: Buffer.from(`{"a":${deep(50_000)}}`), contentType: 'application/json' };
    case 5:
      return { body: Buffer.from('<x/>'), contentType: 'application/xml' };
    case 6:
      return { body: Buffer.from('a=1'), contentType: 'multipart/form-data' };
    case 7:
      return {
        body: Buffer.from('--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nunterminated'),
        contentType: 'multipart/form-data; boundary=b',
      };
    case 8:
      return {
        body: Buffer.from('garbage without any boundary at all'),
        contentType: 'multipart/form-data; boundary=zzz',
      };
    case 9:
      return {
        body: Buffer.from(
          '--b\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--b--\r\n',
        ),
        contentType: 'multipart/form-data; boundary=b',
      };
    case 10:
      return {
        body: Buffer.from('a=%zz&b=%&=&&c'),
        contentType: 'application/x-www-form-urlencoded',
      };
    case 11:
      return { body: Buffer.from([0xff, 0xfe, 0x00, 0x41, 0xc3]), contentType: 'text/plain' };
    case 12:
      return { body: Buffer.from('{"a":1}'), contentType: 'APPLICATION/JSON ; charset="x"' };
    default:
      return {
        body: Buffer.from('--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--\r\n'),
        contentType: 'multipart/form-data; boundary="b"',
      };
  }
}

function pickIdentity(r: Rng): Identity {
  const x = r.next();
  if (x < 0.78) return { kind: 'user', name: r.pick(ROLES) };
  if (x < 0.89) return { kind: 'anonymous' };
  return { kind: 'bad', header: r.pick(BAD_AUTH) };
}

function oddValue(r: Rng): string {
  return r.pick(ODD_VALUES);
}

/** Every id among the existing things (numbers for shaped values). */
function realIds(real: RealValues): number[] {
  const out = new Set<number>();
  for (const values of Object.values(real)) {
    for (const v of values) if (/^\d{1,9}$/.test(v)) out.add(Number(v));
  }
  return [...out];
}

/** A request with every known parameter possibly present, possibly odd, in a random encoding. */
export function randomRequest(
  ep: Endpoint,
  r: Rng,
  accepted: Record<string, string | null>,
  real: RealValues = {},
): FuzzRequest {
  const pathNames = new Set(ep.pathParamNames);
  const keys = [...ep.compiled.known].filter((k) => !pathNames.has(k));
  const fields: [string, string][] = [];
  const shape = shapeOf(ep);
  const ids = realIds(real);
  for (const key of keys) {
    if (!r.chance(0.6)) continue;
    const ok = accepted[key];
    const existing = real[key];
    const x = r.next();
    fields.push([
      key,
      existing && existing.length > 0 && x < 0.25
        ? r.pick(existing)
        : x < 0.6 && shape[key]
          ? shapedParam(shape[key], r, ids)
          : ok !== null && ok !== undefined && x < 0.75
            ? ok
            : oddValue(r),
    ]);
  }
  if (r.chance(0.25))
    fields.push([
      r.pick(['__proto__', 'constructor', 'unknown_param', 'x'.repeat(300), '', 'a[b]']),
      oddValue(r),
    ]);
  if (fields.length > 0 && r.chance(0.15)) {
    const [k] = r.pick(fields);
    fields.push([k, oddValue(r)]); // the same parameter twice
  }
  const who = pickIdentity(r);
  let path = buildPath(ep, r, undefined, real);
  const headers: Record<string, string> = {};
  let body: Buffer | undefined;
  let encoding: Encoding;
  if (ep.method === 'GET') {
    encoding = 'query';
  } else {
    const x = r.next();
    encoding =
      x < 0.3 ? 'form' : x < 0.5 ? 'multipart' : x < 0.7 ? 'json' : x < 0.85 ? 'query' : 'raw';
  }
  if (encoding === 'query') {
    const sp = new URLSearchParams();
    for (const [k, v] of fields) sp.append(k, v);
    const qs = sp.toString();
    if (qs !== '') path += '?' + qs;
  } else if (encoding === 'raw') {
    const odd = oddBody(r);
    body = odd.body;
    headers['content-type'] = odd.contentType;
  } else {
    // Sometimes one parameter in the query string as well (body values win).
    if (fields.length > 0 && r.chance(0.2)) {
      const [k, v] = r.pick(fields);
      path += `?${encodeComponent(k)}=${encodeComponent(v)}`;
    }
    const enc = encodeFields(fields, encoding);
    body = enc.body;
    headers['content-type'] = enc.contentType;
  }
  // Sometimes the body ends early: cut at a random byte, declared at the cut.
  let cutFrom: number | undefined;
  if (body && body.length > 0 && r.chance(0.06)) {
    cutFrom = body.length;
    body = body.subarray(0, r.int(body.length));
  }
  return {
    method: ep.method,
    path,
    who,
    headers,
    encoding,
    ...(body ? { body } : {}),
    ...(cutFrom !== undefined ? { cutFrom } : {}),
  };
}

/**
 * Values violating a parameter's schema in the API description (JSON Schema, as
 * test/helpers/openapi.ts reads it): the wrong type, numbers out of any range, strings empty or
 * huge or not UTF-8, JSON cut short.
 */
export function specViolations(schema: unknown): string[] {
  const s = (schema ?? {}) as { type?: unknown; oneOf?: unknown; items?: unknown };
  const types = new Set(
    (Array.isArray(s.type) ? s.type : [s.type]).filter((x): x is string => typeof x === 'string'),
  );
  const out: string[] = [];
  if (types.has('integer') || types.has('number'))
    out.push('"1"', '1.5', '-1', '-99999999999999999999', '1e400', 'true', '[1]', '0x1F');
  if (types.has('boolean')) out.push('"true"', '2', 'null', 'yes', '[true]');
  if (types.has('array'))
    out.push('{}', '"x"', '[', '[null]', '[[[[]]]]', '[1,', `[${'1,'.repeat(5000)}1]`);
  if (types.has('object')) out.push('[]', '1', '"x"', '{', '{"a":', 'null');
  if (types.has('string') || types.size === 0)
    out.push('', ' ', 'x'.repeat(100_000), INVALID_UTF8, `"${INVALID_UTF8}"`, '\u0000');
  return out;
}

/**
 * A request with every required parameter at an accepted value and one parameter `key` set to
 * `value` (undefined: left out), as an authenticated user when the endpoint needs one.
 */
export function targetedRequest(
  ep: Endpoint,
  r: Rng,
  accepted: Record<string, string | null>,
  key: string,
  value: string | undefined,
): FuzzRequest | null {
  // `accepted` holds, for each parameter, a value its schema accepts (an existing id first).
  const pathNames = new Set(ep.pathParamNames);
  const fixedPath: Record<string, string> = {};
  for (const name of ep.pathParamNames) {
    const ok = name === key ? value : accepted[name];
    if (ok === null || ok === undefined) return null;
    fixedPath[name] = ok;
  }
  const fields: [string, string][] = [];
  for (const req of ep.compiled.required) {
    if (pathNames.has(req) || req === key) continue;
    const ok = accepted[req];
    if (ok === null || ok === undefined) return null; // no valid value known: cannot isolate `key`
    fields.push([req, ok]);
  }
  if (!pathNames.has(key) && value !== undefined) fields.push([key, value]);
  const who: Identity =
    ep.auth === 'none' ? { kind: 'anonymous' } : { kind: 'user', name: r.pick(ROLES) };
  let path = buildPath(ep, r, fixedPath);
  const headers: Record<string, string> = {};
  let body: Buffer | undefined;
  const encoding: Encoding =
    ep.method === 'GET' ? 'query' : r.pick(['form', 'multipart', 'json', 'query'] as const);
  if (encoding === 'query') {
    const sp = new URLSearchParams();
    for (const [k, v] of fields) sp.append(k, v);
    const qs = sp.toString();
    if (qs !== '') path += '?' + qs;
  } else {
    const enc = encodeFields(fields, encoding);
    body = enc.body;
    headers['content-type'] = enc.contentType;
  }
  return {
    method: ep.method,
    path,
    who,
    headers,
    encoding,
    target: { key, value },
    ...(body ? { body } : {}),
  };
}

// ---- sending ----------------------------------------------------------------------------------

export type FuzzResponse = {
  status: number;
  contentType: string;
  text: string;
  body: Record<string, unknown> | null;
};

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

/** Closes the kept-alive connections (the process would otherwise wait for uWS's idle timeout). */
export function closeConnections(): void {
  agent.destroy();
}

export function describe(req: FuzzRequest): string {
  const who =
    req.who.kind === 'user'
      ? req.who.name
      : req.who.kind === 'session'
        ? `${req.who.name}'s browser session (under /json/)`
        : req.who.kind === 'bad'
          ? `bad auth ${JSON.stringify(req.who.header.slice(0, 60))}`
          : 'anonymous';
  const body = req.body
    ? `\n  content-type: ${req.headers['content-type'] ?? ''}\n  body (${req.body.length} bytes${req.cutFrom !== undefined ? `, cut from ${req.cutFrom}` : ''}): ${JSON.stringify(req.body.toString('utf8').slice(0, 400))}` +
      (req.body.includes(INVALID_UTF8_MARK) ? ' (\\ue000: the bytes C3 28 FF 80)' : '')
    : '';
  const path =
    req.path.length > 400 ? req.path.slice(0, 400) + `… (${req.path.length} chars)` : req.path;
  return `${req.method} ${path} as ${who}${body}`;
}

export function send(
  ts: TestServer,
  keys: Record<string, string>,
  req: FuzzRequest,
  timeoutMs = 10_000,
): Promise<FuzzResponse> {
  const headers: Record<string, string> = { ...req.headers };
  if (req.who.kind === 'user') {
    const u = ts.fx.users[req.who.name]!;
    headers.authorization = basicAuth(u.email, keys[req.who.name] ?? u.api_key);
  } else if (req.who.kind === 'bad') {
    headers.authorization = req.who.header;
  }
  let path = req.path;
  if (req.who.kind === 'session') {
    // The browser app's twin of the endpoint, with what the page's fetch sends.
    path = path.replace(/^\/api\/v1\//, '/json/');
    const session = fuzzSessions.get(req.who.name);
    if (session) {
      headers.cookie = `confab_session=${session.token}`;
      headers['x-csrf-token'] = session.csrfToken;
    }
    headers.origin = new URL(ts.url).origin;
    headers['sec-fetch-site'] = 'same-origin';
  }
  const body = req.body ? withInvalidUtf8(withInvalidUtf8Form(req)) : undefined;
  if (body) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const r = http.request(
      new URL(withInvalidUtf8Escapes(path), ts.url),
      { method: req.method, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          const contentType = String(res.headers['content-type'] ?? '');
          let body: Record<string, unknown> | null = null;
          if (contentType.startsWith('application/json')) {
            try {
              const v = JSON.parse(text) as unknown;
              if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
                body = v as Record<string, unknown>;
              }
            } catch {
              body = null;
            }
          }
          resolve({ status: res.statusCode ?? 0, contentType, text, body });
        });
        res.on('error', reject);
      },
    );
    const timer = setTimeout(() => {
      r.destroy(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    r.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    if (body) r.write(body);
    r.end();
  });
}

/** A form body's percent-encoded INVALID_UTF8 as the invalid bytes' escapes. */
function withInvalidUtf8Form(req: FuzzRequest): Buffer {
  if (req.encoding !== 'form' || !req.body) return req.body ?? Buffer.alloc(0);
  return Buffer.from(withInvalidUtf8Escapes(req.body.toString('latin1')), 'latin1');
}

// ---- checking ---------------------------------------------------------------------------------

/**
 * What is wrong with `res` as an answer to `req` (empty: nothing). The general rules hold for every
 * answer; a targeted request whose parameter the schema refuses must get a 4xx naming it.
 */
export function problems(ep: Endpoint, req: FuzzRequest, res: FuzzResponse): string[] {
  const out: string[] = [];
  if (res.status >= 500 || res.status < 200) out.push(`status ${res.status}`);
  const api = req.path.startsWith('/api/');
  if (api || res.contentType.startsWith('application/json')) {
    const b = res.body;
    if (b === null) {
      out.push(`not a JSON object (content-type ${JSON.stringify(res.contentType)})`);
      return out;
    }
    if (b.result === 'success') {
      if (res.status !== 200) out.push(`success with status ${res.status}`);
      if (b.msg !== '') out.push('success with a non-empty msg');
    } else if (b.result === 'error') {
      if (res.status < 400 || res.status >= 500) out.push(`error with status ${res.status}`);
      if (typeof b.msg !== 'string' || b.msg === '') out.push('error without a msg');
      if (typeof b.code !== 'string' || !/^[A-Z_]+$/.test(b.code)) out.push('error without a code');
      if (b.code === 'REQUEST_VARIABLE_MISSING') {
        if (typeof b.var_name !== 'string') out.push('missing-variable error without var_name');
        else if (b.msg !== `Missing '${b.var_name}' argument`) out.push('missing-variable msg');
      }
      if (typeof b.msg === 'string' && LEAKS.test(b.msg)) {
        out.push(`error message leaks internals: ${JSON.stringify(b.msg.slice(0, 200))}`);
      }
    } else {
      out.push(`result is ${JSON.stringify(b.result)}`);
    }
  }
  if (req.target && out.length === 0) out.push(...targetProblems(ep, req.target, res));
  return out;
}

function targetProblems(
  ep: Endpoint,
  target: { key: string; value: string | undefined },
  res: FuzzResponse,
): string[] {
  const shape = shapeOf(ep);
  const { key, value } = target;
  const aliasOf = Object.entries(ep.compiled.aliases).find(([, c]) => c === key)?.[0];
  const names = [key, ...(aliasOf ? [aliasOf] : [])];
  const required = ep.compiled.required.includes(key);
  // Refused before the parameters were looked at (the fuzzing made the user inactive, ...).
  if (res.status === 401 || res.status === 429) return [];
  if (ep.pathParamNames.includes(key) && (value === '' || value === undefined)) {
    return []; // no such path: the route does not match (404)
  }
  if (value === undefined) {
    if (!required) return [];
    const b = res.body;
    if (res.status === 400 && b?.code === 'REQUEST_VARIABLE_MISSING' && b.var_name === key)
      return [];
    return [`a missing required '${key}' was not reported as missing`];
  }
  if (accepts(shape, key, value)) return [];
  // The schema refuses the value and every other parameter is acceptable: the decoder (which runs
  // before any handler) must answer a 4xx that names the parameter.
  const b = res.body;
  if (res.status < 400 || res.status >= 500 || b === null) {
    return [`'${key}' refused by its schema but answered ${res.status}`];
  }
  const msg = typeof b.msg === 'string' ? b.msg : '';
  if (names.some((n) => msg.includes(n) || b.var_name === n)) return [];
  return [`the error for '${key}' does not name it: ${JSON.stringify(msg.slice(0, 200))}`];
}

/** What a message made from a caught programming error would contain. */
const LEAKS =
  /TypeError|RangeError|ReferenceError|SyntaxError|\[object Object\]|Cannot read prop|is not a function|SQLITE|at [\w.]+ \(/;

/** The request-head size over which uWS may close the connection unanswered. */
const UWS_MAX_SPLIT_HEAD_BYTES = 4096;

function headBytes(req: FuzzRequest): number {
  let n = req.method.length + Buffer.byteLength(req.path) + 200; // request line, host, auth, …
  for (const [k, v] of Object.entries(req.headers)) n += k.length + Buffer.byteLength(v) + 4;
  if (req.who.kind === 'bad') n += req.who.header.length;
  return n;
}

/** The longest any answer may take (the issue's bound for every fuzzed request). */
export const ANSWER_WITHIN_MS = 5000;

/**
 * Runs `n` random and the targeted requests against one endpoint; reports each problem. `op` is
 * the endpoint's operation in the API description, when it has one: each of its parameters is
 * also sent values that violate its schema there, including the ones Confab does not take.
 */
export async function fuzzEndpoint(
  t: Test,
  ts: TestServer,
  ep: Endpoint,
  seed: number,
  n: number,
  real: RealValues = {},
  op: ApiOperation | null = null,
): Promise<{ sent: number; statuses: Map<number, number> }> {
  const r = rng(seed ^ hashString(`${ep.method} ${ep.path}`));
  const accepted = acceptedValues(ep, real);
  const keys = currentKeys(ts);
  const requests: FuzzRequest[] = [];
  for (let i = 0; i < n; i++) requests.push(randomRequest(ep, r, accepted, real));
  // As an owner, as a member and without credentials, whatever the random draw gave; and as the
  // browser app of an owner and of a member (under /json/).
  for (const who of ['desdemona', 'hamlet', null] as const) {
    for (let i = 0; i < 2; i++) {
      const req = randomRequest(ep, r, accepted, real);
      req.who = who === null ? { kind: 'anonymous' } : { kind: 'user', name: who };
      requests.push(req);
    }
  }
  for (const name of ['desdemona', 'hamlet']) {
    for (let i = 0; i < 2; i++) {
      const req = randomRequest(ep, r, accepted, real);
      req.who = { kind: 'session', name };
      requests.push(req);
    }
  }
  const described = new Map((op?.parameters ?? []).map((p) => [p.name, p.schema]));
  for (const key of ep.compiled.known) {
    if (!(key in accepted)) continue; // aliases are covered through their canonical name
    const values: (string | undefined)[] = [undefined];
    for (let i = 0; i < 4; i++) values.push(oddValue(r));
    const schema = shapeOf(ep)[key];
    for (let i = 0; schema && i < 4; i++) values.push(shapedParam(schema, r, realIds(real)));
    const violations = described.has(key) ? specViolations(described.get(key)) : [];
    for (let i = 0; i < 3 && violations.length > 0; i++) values.push(r.pick(violations));
    for (const v of values) {
      const req = targetedRequest(ep, r, accepted, key, v);
      if (req) requests.push(req);
    }
  }
  // Parameters the description has and Confab does not take: ignored, never a failure.
  for (const [name, schema] of described) {
    if (ep.compiled.known.has(name) || ep.pathParamNames.includes(name)) continue;
    const req = targetedRequest(ep, r, accepted, name, r.pick(specViolations(schema)));
    if (req) requests.push({ ...req, target: undefined });
  }
  const statuses = new Map<number, number>();
  let failures = 0;
  let changes = totalChanges(ts);
  let fingerprint = dbFingerprint(ts);
  let eventCount: number;
  for (let i = 0; i < requests.length; i++) {
    const req = requests[i]!;
    let res: FuzzResponse;
    // Work an earlier request started in the background (a realm export, thumbnails) ends first,
    // so that what it writes is not taken for this request's doing.
    await ts.server.context.exports.idle();
    await ts.server.context.thumbnailer.idle();
    // So does the unread index's settler (src/storage/store.ts), which moves its watermark over
    // rows an earlier request wrote, in the background, up to a second later.
    settleUnread(ts);
    if (totalChanges(ts) !== changes) {
      changes = totalChanges(ts);
      fingerprint = dbFingerprint(ts);
    }
    eventCount = ts.events.length;
    const started = performance.now();
    try {
      res = await send(ts, keys, req);
    } catch (err) {
      if (headBytes(req) > UWS_MAX_SPLIT_HEAD_BYTES) {
        // uWS closes the connection, without an answer, on a request head over 4 KiB that
        // arrives in more than one read (docs/robustness.md); nothing to answer, nothing broken.
        statuses.set(0, (statuses.get(0) ?? 0) + 1);
        continue;
      }
      t.fail(
        `${ep.method} ${ep.path}: request ${i} (seed ${seed}) got no answer: ${String(err)}\n  ${describe(req)}`,
      );
      failures++;
      continue;
    }
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    const found = problems(ep, req, res);
    const ms = performance.now() - started;
    if (ms > ANSWER_WITHIN_MS) found.push(`answered after ${Math.round(ms)} ms`);
    if (res.status >= 400) {
      // A refused request leaves nothing behind: no row changed, no event sent. (Rows written
      // and rolled back count as changes: then the digest of every row decides.)
      const now = totalChanges(ts) !== changes ? dbFingerprint(ts) : fingerprint;
      if (now !== fingerprint) {
        found.push(
          `refused, yet the database changed (${changedTables(fingerprint, now).join(', ')})`,
        );
      }
      if (ts.events.length !== eventCount) {
        const kinds = ts.events
          .slice(eventCount)
          .map(
            (e) => `${String(e.event.type)}/${typeof e.event.op === 'string' ? e.event.op : ''}`,
          );
        found.push(`refused, yet events were sent (${[...new Set(kinds)].join(', ')})`);
      }
    }
    if (totalChanges(ts) !== changes) {
      changes = totalChanges(ts);
      fingerprint = dbFingerprint(ts);
    }
    if (found.length > 0) {
      failures++;
      if (failures <= 5) {
        t.fail(
          `${ep.method} ${ep.path}: request ${i} (seed ${seed}): ${found.join('; ')}\n  ${describe(req)}\n  → ${res.status} ${res.text.slice(0, 300)}`,
        );
      }
    }
  }
  if (process.env.CONFAB_FUZZ_STATS) {
    t.comment(`${ep.method} ${ep.path}: ${[...statuses].map(([s, n]) => `${s}×${n}`).join(' ')}`);
  }
  if (failures === 0) t.pass(`${ep.method} ${ep.path}: ${requests.length} requests answered well`);
  else t.comment(`${ep.method} ${ep.path}: ${failures} bad answers in ${requests.length}`);
  return { sent: requests.length, statuses };
}

/** The fixture users' current API keys (a fuzzed request may have changed one). */
export function currentKeys(ts: TestServer): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, u] of Object.entries(ts.fx.users)) {
    out[name] = ts.server.store.users.byId(u.id)?.api_key ?? u.api_key;
  }
  return out;
}

const fingerprintStatements = new WeakMap<object, { name: string; all: () => unknown[][] }[]>();

/**
 * A digest of every row of every table (the full-text index's own tables included), to show that
 * a refused request changed nothing. The fuzzed realm is small: about a millisecond.
 */
export function dbFingerprint(ts: TestServer): string {
  return [...tableDigests(ts)].map(([name, digest]) => `${name}:${digest}`).join(',');
}

/** The tables whose rows differ between two fingerprints (to say what a request changed). */
function changedTables(before: string, after: string): string[] {
  const old = new Map(before.split(',').map((e) => e.split(':') as [string, string]));
  return after
    .split(',')
    .map((e) => e.split(':') as [string, string])
    .filter(([name, digest]) => old.get(name) !== digest)
    .map(([name]) => name);
}

/** A digest of each table's rows, by name (virtual tables left out: their shadow tables count). */
function tableDigests(ts: TestServer): Map<string, string> {
  const db = ts.server.store.db;
  let statements = fingerprintStatements.get(db);
  if (!statements) {
    const names = db
      .prepare(
        `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
           AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name`,
      )
      .pluck()
      .all() as string[];
    statements = names.map((name) => {
      const stmt = db.prepare(`SELECT * FROM "${name}"`).raw();
      return { name, all: () => stmt.all() as unknown[][] };
    });
    fingerprintStatements.set(db, statements);
  }
  const out = new Map<string, string>();
  for (const s of statements) {
    const h = crypto.createHash('sha1');
    for (const row of s.all()) h.update(JSON.stringify(row));
    out.set(s.name, h.digest('hex').slice(0, 12));
  }
  return out;
}

/** Moves the unread index's watermark over every row waiting above it, as its settler would. */
function settleUnread(ts: TestServer): void {
  const { store } = ts.server;
  const move = store.db.transaction(() => store.unread.moveWatermark(UNREAD_SETTLE_ROWS));
  for (let i = 0; i < 10_000 && store.unread.waiting(1); i++) move();
}

/** Rows the server's connection has written since it opened (rolled-back ones included). */
function totalChanges(ts: TestServer): number {
  return ts.server.store.db.prepare('SELECT total_changes()').pluck().get() as number;
}
