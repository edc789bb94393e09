/** String lengths in code points, as the reference counts them (src/lib/strings.ts). */
import t from 'tap';
import {
  codePointLength,
  longerThan,
  shorterThan,
  sliceCodePoints,
} from '../../src/lib/strings.js';

t.test('codePointLength, longerThan, shorterThan', (t) => {
  const e = '\u{1F600}';
  t.equal(codePointLength(''), 0);
  t.equal(codePointLength('abc'), 3);
  t.equal(codePointLength(e.repeat(4)), 4);
  t.equal(codePointLength(`a${e}b${e}`), 4);
  t.equal(codePointLength('\ud800a\udc00'), 3, 'lone surrogates count one each');
  t.equal(codePointLength(`\ud800${e}`), 2, 'a lone high surrogate before a pair');
  t.equal(codePointLength(`${e}\ud800`), 2, 'a lone high surrogate at the end');
  t.equal(codePointLength('\udc00\ud800'), 2, 'a low then a high surrogate is no pair');
  for (const s of ['', 'ab', e, e.repeat(3), `a${e}`, '\ud800\ud800', 'x'.repeat(7)]) {
    const n = [...s].length;
    t.equal(codePointLength(s), n, `as the iterator counts ${JSON.stringify(s)}`);
    for (let k = 0; k <= 8; k++) {
      t.equal(longerThan(s, k), n > k, `longerThan(${JSON.stringify(s)}, ${k})`);
      t.equal(shorterThan(s, k), n < k, `shorterThan(${JSON.stringify(s)}, ${k})`);
    }
  }
  t.end();
});

t.test('sliceCodePoints cuts code points, never half a pair', (t) => {
  const e = '\u{1F98A}';
  t.equal(sliceCodePoints('abc', 5), 'abc');
  t.equal(sliceCodePoints('abcdef', 3), 'abc');
  t.equal(sliceCodePoints('abc', 0), '');
  t.equal(sliceCodePoints(e.repeat(5), 3), e.repeat(3), 'three emoji are six units');
  t.equal(sliceCodePoints(`ab${e}c`, 3), `ab${e}`, 'the pair at the cut is kept whole');
  t.equal(sliceCodePoints(`ab${e}c`, 2), 'ab', 'or left out whole');
  t.equal(sliceCodePoints('\ud800ab', 2), '\ud800a', 'a lone high surrogate counts one');
  t.equal(sliceCodePoints('a\udc00b', 2), 'a\udc00', 'a lone low surrogate counts one');
  t.equal(sliceCodePoints(`a${e}\ud800`, 5), `a${e}\ud800`, 'a lone surrogate at the end');
  for (const s of ['', 'ab', e, e.repeat(3), `a${e}b`, '\ud800\ud800', `\udc00${e}\ud800`]) {
    const points = [...s];
    for (let k = 0; k <= 5; k++) {
      const cut = sliceCodePoints(s, k);
      t.equal(
        cut,
        points.slice(0, k).join(''),
        `as the iterator cuts ${JSON.stringify(s)} at ${k}`,
      );
      t.equal(codePointLength(cut), Math.min(k, points.length));
    }
  }
  t.end();
});
