/** String lengths in code points, as the reference counts them (src/lib/strings.ts). */
import t from 'tap';
import { codePointLength, longerThan, shorterThan } from '../../src/lib/strings.js';

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
