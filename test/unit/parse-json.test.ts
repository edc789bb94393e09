/**
 * src/lib/json.ts parseJson: depth bound, and lone surrogates written as escapes read as U+FFFD.
 */
import t from 'tap';
import { parseJson, wellFormed } from '../../src/lib/json.js';

t.test('a lone surrogate escape is read as U+FFFD, in strings and keys, at any depth', (t) => {
  t.equal(parseJson('"a\\ud800b"'), 'a\uFFFDb', 'a high half alone');
  t.equal(parseJson('"\\udc00"'), '\uFFFD', 'a low half alone');
  t.equal(parseJson('"\\udc00\\ud800"'), '\uFFFD\uFFFD', 'two halves in the wrong order');
  t.same(parseJson('{"k\\ud800":["x",{"y":"\\uDBFF!"}],"n":1}'), {
    'k\uFFFD': ['x', { y: '\uFFFD!' }],
    n: 1,
  });
  const proto = parseJson('{"__proto__":"\\ud800"}') as Record<string, unknown>;
  t.equal(Object.getPrototypeOf(proto), Object.prototype, 'a "__proto__" key sets no prototype');
  t.same(Object.keys(proto), ['__proto__'], '… it stays a key');
  t.equal(proto['__proto__'], '\uFFFD');
  t.end();
});

t.test('pairs, escaped (as Python writes every emoji) or not, are kept', (t) => {
  t.equal(parseJson('"\\ud83d\\ude00 ok"'), '\u{1F600} ok');
  t.equal(parseJson('"\u{1F600}"'), '\u{1F600}');
  t.same(parseJson('["\\ud83d\\ude00","\\ud800"]'), ['\u{1F600}', '\uFFFD']);
  t.equal(wellFormed('x\u{1F600}y'), 'x\u{1F600}y');
  t.equal(wellFormed('\ud83d'), '\uFFFD');
  t.end();
});

t.test('text nested past the bound is refused', (t) => {
  t.throws(() => parseJson('['.repeat(102) + ']'.repeat(102)), SyntaxError);
  t.same(parseJson('[[1]]'), [[1]]);
  t.end();
});
