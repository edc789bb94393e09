/** Parameter decoding: JSON-in-form values, missing vs invalid, nested names, aliases, ignored keys. */
import t, { type Test } from 'tap';
import { z } from 'zod';
import { JsonableError } from '../../src/lib/errors.js';
import {
  bool,
  compileParams,
  decodeParams,
  int,
  intList,
  json,
  jsonOrString,
  nonNegativeInt,
  oneOf,
  ownNulRule,
  str,
  stringList,
} from '../../src/lib/params.js';
import { parseUrlEncoded } from '../../src/http/body.js';

const schema = compileParams(
  z.object({
    name: str({ min: 1, max: 5 }),
    count: int().optional(),
    flag: bool().default(false),
    ids: intList().optional(),
    names: stringList().optional(),
    size: nonNegativeInt().optional(),
    kind: oneOf(['a', 'b']).optional(),
    anchor: jsonOrString(z.union([z.number().int(), z.enum(['newest', 'oldest'])])).optional(),
    narrow: json(z.array(z.object({ operator: z.string(), operand: z.string() }))).optional(),
    topic: str().optional(),
  }),
  { subject: 'topic' },
);

function fails(t: Test, raw: Record<string, string>, msg: string, code = 'BAD_REQUEST') {
  try {
    decodeParams(schema, raw);
    t.fail(`expected "${msg}"`);
  } catch (err) {
    t.ok(err instanceof JsonableError, 'a JsonableError');
    t.equal((err as JsonableError).message, msg);
    t.equal((err as JsonableError).code, code);
  }
}

t.test('decodes each kind', (t) => {
  const { params, ignored } = decodeParams(schema, {
    name: 'abc',
    count: '-3',
    flag: 'true',
    ids: '[1,2,3]',
    names: '["x","y"]',
    size: '0',
    kind: 'b',
    anchor: 'newest',
    narrow: '[{"operator":"is","operand":"dm"}]',
    subject: 'hello',
    extra: '1',
  });
  t.same(params, {
    name: 'abc',
    count: -3,
    flag: true,
    ids: [1, 2, 3],
    names: ['x', 'y'],
    size: 0,
    kind: 'b',
    anchor: 'newest',
    narrow: [{ operator: 'is', operand: 'dm' }],
    topic: 'hello',
  });
  t.same(ignored, ['extra']);
  t.equal(
    decodeParams(schema, { name: 'x', anchor: '42' }).params.anchor,
    42,
    'jsonOrString takes JSON when it parses',
  );
  t.equal(decodeParams(schema, { name: 'x' }).params.flag, false, 'default applies');
  t.end();
});

t.test('missing and invalid', (t) => {
  fails(t, {}, "Missing 'name' argument", 'REQUEST_VARIABLE_MISSING');
  fails(t, { name: '' }, 'name cannot be blank');
  fails(t, { name: 'abcdef' }, 'name is too long (limit: 5 characters)');
  fails(t, { name: 'a', count: 'x' }, 'count is not valid JSON', 'INVALID_JSON');
  fails(t, { name: 'a', count: '1.5' }, 'count is not an integer');
  fails(t, { name: 'a', count: '"1"' }, 'count is not an integer');
  fails(t, { name: 'a', flag: '1' }, 'flag is not a boolean');
  fails(t, { name: 'a', flag: 'True' }, 'flag is not valid JSON', 'INVALID_JSON');
  fails(t, { name: 'a', ids: '[1,"x"]' }, 'ids[1] is not an integer');
  fails(t, { name: 'a', ids: '{}' }, 'ids is not a list');
  fails(t, { name: 'a', names: '[1]' }, 'names[0] is not a string');
  fails(t, { name: 'a', size: '-1' }, 'size is too small');
  fails(t, { name: 'a', kind: 'c' }, 'Invalid kind');
  fails(t, { name: 'a', anchor: 'sideways' }, 'Invalid anchor');
  fails(t, { name: 'a', narrow: '[{"operator":"is"}]' }, 'narrow[0]["operand"] is not a string');
  t.end();
});

t.test('string bounds count code points, as the reference does', (t) => {
  const emoji = '\u{1F600}'; // two UTF-16 units, one code point
  const bounded = compileParams(
    z.object({
      name: str({ max: 5 }),
      word: str({ min: 3 }).optional(),
      t: str({ trim: true, max: 2 }).optional(),
    }),
  );
  const decode = (raw: Record<string, string>) => decodeParams(bounded, raw).params;
  t.equal(decode({ name: emoji.repeat(5) }).name, emoji.repeat(5), 'the limit in emoji (10 units)');
  t.equal(decode({ name: `ab${emoji.repeat(3)}` }).name, `ab${emoji.repeat(3)}`, 'mixed');
  t.equal(decode({ name: 'x', t: ` ${emoji}${emoji} ` }).t, `${emoji}${emoji}`, 'after trimming');
  t.throws(() => decode({ name: emoji.repeat(6) }), {
    message: 'name is too long (limit: 5 characters)',
  });
  t.throws(() => decode({ name: 'x', t: emoji.repeat(3) }), {
    message: 't is too long (limit: 2 characters)',
  });
  t.equal(decode({ name: 'x', word: emoji.repeat(3) }).word, emoji.repeat(3), 'min in emoji');
  t.throws(
    () => decode({ name: 'x', word: emoji.repeat(2) }),
    {
      message: 'word is too short.',
    },
    'two emoji are four units but two characters',
  );
  t.throws(() => decode({ name: 'x', word: '\u00e9\u00e9' }), { message: 'word is too short.' });
  // A lone surrogate counts as one, as Python counts it.
  t.equal(decode({ name: '\ud800'.repeat(5) }).name.length, 5);
  t.throws(() => decode({ name: '\udc00'.repeat(6) }), {
    message: 'name is too long (limit: 5 characters)',
  });
  t.end();
});

t.test(
  'aliases: the canonical name wins when both are sent, and the alias is not "ignored"',
  (t) => {
    const { params, ignored } = decodeParams(schema, {
      name: 'x',
      topic: 'canon',
      subject: 'alias',
    });
    t.equal(params.topic, 'canon');
    t.same(ignored, []);
    t.end();
  },
);

t.test('urlencoded bodies', (t) => {
  t.same(
    { ...parseUrlEncoded('a=1&b=x+y&c=%5B1%2C2%5D&a=2') },
    { a: '2', b: 'x y', c: '[1,2]' },
    'last value wins',
  );
  t.same({ ...parseUrlEncoded('') }, {});
  t.same({ ...parseUrlEncoded('__proto__=1') }, { ['__proto__']: '1' }, 'no prototype pollution');
  t.equal(({} as Record<string, unknown>).polluted, undefined);
  t.end();
});

t.test('NUL characters: refused in any decoded text, but where a field has its own rule', (t) => {
  const nul = (raw: Record<string, string>, msg: string) => fails(t, raw, msg);
  nul({ name: 'a\u0000' }, 'name must not contain null bytes');
  nul({ name: 'x', subject: 'a\u0000b' }, 'subject must not contain null bytes');
  nul({ name: 'x', names: '["ok","a\\u0000"]' }, 'names[1] must not contain null bytes');
  nul(
    { name: 'x', narrow: '[{"operator":"is","operand":"\\u0000"}]' },
    'narrow[0]["operand"] must not contain null bytes',
  );
  fails(t, { name: '\u0000', count: 'x' }, 'count is not valid JSON', 'INVALID_JSON'); // first
  t.equal(
    decodeParams(schema, { name: 'x', names: '["\\\\u0000"]' }).params.names?.[0],
    '\\u0000',
    'an escaped backslash before u0000 is six characters, taken',
  );

  const marked = compileParams(
    z.object({
      own: ownNulRule(str()).optional(),
      ownOptional: ownNulRule(str().optional()),
      list: json(z.array(z.object({ own: ownNulRule(z.string()), other: z.string() }))).optional(),
      dict: json(z.record(z.string(), z.string())).optional(),
      piped: ownNulRule(z.string())
        .transform((v) => v.length)
        .optional(),
      either: json(z.union([z.string(), z.array(z.string())])).optional(),
    }),
  );
  const decoded = (raw: Record<string, string>) => decodeParams(marked, raw).params;
  t.equal(decoded({ own: 'a\u0000' }).own, 'a\u0000', 'a marked field is left to its rule');
  t.equal(decoded({ ownOptional: '\u0000' }).ownOptional, '\u0000', 'marked around optional');
  t.equal(decoded({ piped: '\u0000' }).piped, 1, 'marked before a transform');
  t.same(
    decoded({ list: '[{"own":"\\u0000","other":"x"}]' }).list,
    [{ own: '\u0000', other: 'x' }],
    'a marked nested value',
  );
  const refused = (raw: Record<string, string>, msg: string) =>
    t.throws(() => decodeParams(marked, raw), { message: msg });
  refused(
    { list: '[{"own":"x","other":"\\u0000"}]' },
    'list[0]["other"] must not contain null bytes',
  );
  refused({ dict: '{"k":"\\u0000"}' }, 'dict["k"] must not contain null bytes');
  refused({ dict: '{"\\u0000":"v"}' }, 'dict must not contain null bytes');
  refused({ either: '["a","b\\u0000"]' }, 'either[1] must not contain null bytes');

  const form = compileParams(ownNulRule(z.object({ a: z.string() })));
  t.equal(decodeParams(form, { a: '\u0000' }).params.a, '\u0000', 'a whole form marked');

  // A path parameter names a resource: left to the endpoint (a file's 404), not refused here.
  const withPath = compileParams(z.object({ path_id: z.string(), note: str() }), {}, ['path_id']);
  t.equal(
    decodeParams(withPath, { path_id: 'a.txt\u0000.png', note: 'x' }).params.path_id,
    'a.txt\u0000.png',
    'a path parameter with a NUL is left to its endpoint',
  );
  t.throws(() => decodeParams(withPath, { path_id: 'a', note: '\u0000' }), {
    message: 'note must not contain null bytes',
  });
  t.end();
});
