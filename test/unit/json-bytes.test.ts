/**
 * JSON written straight into bytes (src/lib/json-bytes.ts): for every value it takes, exactly the
 * UTF-8 of JSON.stringify's text; every value it does not take is left to JSON.stringify (null).
 */
import t from 'tap';
import { jsonBytes, JsonWriter } from '../../src/lib/json-bytes.js';

const utf8 = (v: unknown) => Buffer.from(JSON.stringify(v));

t.test('plain values: the bytes of JSON.stringify', (t) => {
  const all = Array.from({ length: 0x80 }, (_, i) => String.fromCharCode(i)).join('');
  const cases: [string, unknown][] = [
    ['null', null],
    ['true', true],
    ['false', false],
    ['a string', 'abc'],
    ['the empty string', ''],
    ['every ASCII character', all],
    ['every ASCII character, long', all.repeat(5)],
    ['each control character alone', Array.from(all.slice(0, 0x20))],
    ['quotes and backslashes', ['"', '\\', '\\"', 'a"b\\c', '"'.repeat(100)]],
    ['U+2028, U+2029, DEL', '\u2028\u2029\u007f'],
    ['multi-byte', ['é', '日本語', 'é'.repeat(60), '<p>naïve café</p>'.repeat(10)]],
    ['a surrogate pair', ['😀', 'a😀b', '😀'.repeat(40)]],
    ['lone surrogates', ['\ud800', '\udfff', 'a\ud83db', '\ude00x', 'x'.repeat(60) + '\ud800']],
    ['integers', [0, -0, 1, 9, 10, 99, 100, 1234567890, Number.MAX_SAFE_INTEGER, 2 ** 53]],
    ['negative and large integers', [-1, -10, -Number.MAX_SAFE_INTEGER, 1e21, 1e300, -1e21]],
    ['fractions', [0.5, -0.5, 1.5, 0.1 + 0.2, 1e-7, 5e-324, 123.456, Number.MIN_VALUE]],
    ['non-finite numbers', [NaN, Infinity, -Infinity]],
    ['empty containers', [[], {}, [[]], [{}], { a: {} }, { a: [] }]],
    ['undefined, functions and symbols in arrays', [undefined, () => 1, Symbol('s'), 1]],
    // eslint-disable-next-line no-sparse-arrays
    ['holes', [1, , 3]],
    [
      'undefined, functions and symbols in objects',
      { a: undefined, b: () => 1, c: Symbol(), d: 1 },
    ],
    ['only skipped members', { a: undefined }],
    ['skipped first and last', { a: undefined, b: 1, c: 2, d: undefined }],
    ['key order', { b: 1, a: 2, 10: 'ten', 2: 'two', '-1': 'minus', '01': 'lead', z: 3 }],
    ['keys that need escaping', { 'a"b': 1, é: 2, '\n': 3, '😀': 4, '\ud800': 5 }],
    ['a symbol key', { [Symbol('s')]: 1, k: 'v' }],
    ['a null-prototype object', Object.assign(Object.create(null) as object, { x: 1, y: [2] })],
    ['frozen', Object.freeze({ a: Object.freeze([1, 'b']) })],
    [
      'a message answer',
      {
        messages: Array.from({ length: 100 }, (_, i) => ({
          id: 1000 + i,
          sender_id: 7,
          content: `<p>message ${i} with “quotes” and "quotes" \\ 😀</p>`,
          recipient_id: 12,
          timestamp: 1796400384,
          client: 'website',
          subject: i % 3 === 0 ? '' : `topic ${i}`,
          topic_links: [],
          is_me_message: false,
          reactions: i % 5 === 0 ? [{ emoji_name: 'ok', user_id: 3 }] : [],
          submessages: [],
          display_recipient: i % 2 ? 'general' : [{ id: 1, email: 'a@b', is_mirror_dummy: false }],
          avatar_url: null,
          stream_id: i % 2 ? 4 : undefined,
          flags: ['read', 'historical'],
        })),
        anchor: 10_000_000_000_000_000,
        found_anchor: false,
        history_limited: false,
      },
    ],
  ];
  for (const [name, value] of cases) {
    t.same(jsonBytes(value), utf8(value), name);
    t.same(jsonBytes({ value }), utf8({ value }), `${name}, in an object`);
  }
  t.end();
});

t.test('random strings of awkward characters', (t) => {
  // A deterministic generator: control characters, quotes, ASCII, Latin-1, BMP, surrogates.
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const pools = [
    [0, 0x20],
    [0x20, 0x80],
    [0x80, 0x800],
    [0x800, 0xd800],
    [0xd800, 0xe000],
    [0xe000, 0x10000],
  ] as const;
  for (let i = 0; i < 2000; i++) {
    const length = next() % 120;
    let s = '';
    for (let j = 0; j < length; j++) {
      const [lo, hi] = pools[next() % pools.length]!;
      s += String.fromCharCode(lo + (next() % (hi - lo)));
    }
    const value = { [s]: s, list: [s, i] };
    const got = jsonBytes(value);
    if (!got || !got.equals(utf8(value))) {
      t.fail(`string ${JSON.stringify(s)}`);
      break;
    }
  }
  t.pass('2000 strings');
  t.end();
});

t.test('values with a meaning of their own are left to JSON.stringify', (t) => {
  class Point {
    x = 1;
  }
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  let deep: unknown = 1;
  for (let i = 0; i < 200; i++) deep = [deep];
  const cases: [string, unknown][] = [
    ['undefined', undefined],
    ['a function', () => 1],
    ['a symbol', Symbol('s')],
    ['a Date', new Date(0)],
    ['a Date inside', { when: new Date(0) }],
    ['a toJSON', { toJSON: () => 'x' }],
    ['a Buffer', Buffer.from('ab')],
    ['a class instance', { p: new Point() }],
    ['a Map', new Map([[1, 2]])],
    ['a boxed string', [Object('s')]],
    ['a bigint', { n: 1n }],
    ['a typed array', new Uint8Array(2)],
    ['an array subclass', [new (class extends Array {})()]],
    ['a cycle', cyclic],
    ['deep nesting', deep],
  ];
  for (const [name, value] of cases) t.equal(jsonBytes(value), null, name);
  t.end();
});

t.test('a writer writes after its caller’s prefix and grows as it must', (t) => {
  const w = new JsonWriter();
  const big = { s: 'x'.repeat(200_000), list: Array.from({ length: 20_000 }, (_, i) => i) };
  t.ok(w.write(big, 5));
  w.buf.write('abcde', 0, 'latin1');
  t.same(w.take(0), Buffer.concat([Buffer.from('abcde'), utf8(big)]), 'prefix, then the JSON');
  t.ok(w.buf.length <= 1024 * 1024, 'a huge scratch buffer is not kept');
  t.ok(w.write([1, 'é'], 0));
  t.same(w.take(0), utf8([1, 'é']), 'the next value, from the start again');
  t.end();
});
