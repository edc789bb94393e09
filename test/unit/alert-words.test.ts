/**
 * The alert-word matcher (an Aho–Corasick automaton built once per render context) finds exactly
 * what checking every word at every position finds, the reference's rules: case-insensitive,
 * whole words by the reference's boundary characters, overlapping and nested words included.
 */
import t from 'tap';
import {
  alertWordMatcherFor,
  alertWordUsers,
  buildAlertWordMatcher,
} from '../../src/lib/markdown/alert-words.js';
import type { RenderAlertWord } from '../../src/lib/markdown/context.js';

const BEFORE = new Set([' ', '\n', '(', '"', '.', ',', "'", ';', '[', '*', '`', '>']);
const AFTER = new Set([' ', '\n', ')', '?', ':', '.', ',', "'", ';', ']', '!', '*', '`']);

/** Every word at every position: slow, obviously right. */
function bruteForce(content: string, words: readonly RenderAlertWord[]): number[] {
  const text = content.toLowerCase();
  const out = new Set<number>();
  for (const { user_id, word } of words) {
    const w = word.toLowerCase();
    if (!w) continue;
    for (let at = text.indexOf(w); at >= 0; at = text.indexOf(w, at + 1)) {
      const before = at - 1;
      const after = at + w.length;
      if (
        (before <= 0 || BEFORE.has(text[before]!)) &&
        (after >= text.length || AFTER.has(text[after]!))
      ) {
        out.add(user_id);
        break;
      }
    }
  }
  return [...out].sort((a, b) => a - b);
}

t.test('examples', (t) => {
  const words: RenderAlertWord[] = [
    { user_id: 1, word: 'ALERT' },
    { user_id: 2, word: 'alert' },
    { user_id: 3, word: 'to be' },
    { user_id: 4, word: 'be or' },
    { user_id: 5, word: 'or' },
    { user_id: 6, word: 'a' },
    { user_id: 7, word: 'ab' },
    { user_id: 8, word: 'b' },
  ];
  const m = alertWordMatcherFor(words);
  t.same(alertWordUsers('An alert!', m), [1, 2]);
  t.same(alertWordUsers('alerts', m), [], 'a longer word is not the word');
  t.same(alertWordUsers('(alert)', m), [1, 2]);
  t.same(alertWordUsers('To be or not', m), [3, 4, 5], 'overlapping phrases all count');
  t.same(alertWordUsers('ab b', m), [7, 8], 'nested words count where they stand alone');
  t.same(
    alertWordUsers('xalert', m),
    [1, 2],
    'the first character never blocks (the reference’s rule)',
  );
  t.same(alertWordUsers('nothing here', m), []);
  t.same(alertWordUsers('', m), []);
  t.equal(alertWordMatcherFor([]), null);
  t.same(alertWordUsers('alert', null), []);
  t.equal(alertWordMatcherFor(words), m, 'built once per list');
  t.end();
});

t.test('agrees with checking every word everywhere', (t) => {
  let seed = 42;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const alphabet = 'abAB .,!(x';
  const str = (len: number) =>
    Array.from({ length: len }, () => alphabet[rand(alphabet.length)]).join('');
  for (let round = 0; round < 300; round++) {
    const words: RenderAlertWord[] = Array.from({ length: 1 + rand(8) }, (_, i) => ({
      user_id: i + 1,
      word: str(1 + rand(4)).trim() || 'a',
    }));
    const m = alertWordMatcherFor(words);
    for (let k = 0; k < 10; k++) {
      const content = str(rand(40));
      const got = alertWordUsers(content, m);
      const want = bruteForce(content, words);
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        t.same(got, want, `${JSON.stringify(words)} in ${JSON.stringify(content)}`);
        t.end();
        return;
      }
    }
  }
  t.pass('3,000 random cases agree');
  t.end();
});

t.test('a realm with thousands of words', (t) => {
  const words = new Map<string, number[]>();
  for (let u = 1; u <= 1000; u++) for (let k = 0; k < 5; k++) words.set(`word${u}x${k}`, [u]);
  const m = buildAlertWordMatcher(words);
  t.same(alertWordUsers('see word17x3, and WORD999x0.', m), [17, 999]);
  t.same(alertWordUsers('word17x33 word1x', m), []);
  t.end();
});
