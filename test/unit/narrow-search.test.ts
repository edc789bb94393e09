/** Narrow parsing (both forms, the reference's operand rules), search queries and highlighting, image sniffing, ranges. */
import t from 'tap';
import { JsonableError } from '../../src/lib/errors.js';
import { imageKind } from '../../src/lib/image-type.js';
import { MAX_SEARCH_TERMS } from '../../src/lib/limits.js';
import { parseNarrowParam } from '../../src/lib/narrow.js';
import { foldWord, highlightHtml, htmlToText, parseSearch } from '../../src/lib/search.js';
import { checkEmojiName, normalizeEmojiName } from '../../src/lib/realm-emoji.js';
import { fetchRange } from '../../src/queries/message-fetch.js';
import { tinyGif, tinyPng } from '../helpers/images.js';

const msgOf = (fn: () => unknown) => {
  try {
    fn();
    return null;
  } catch (e) {
    return e instanceof JsonableError ? e.message : String(e);
  }
};

t.test('narrow terms', (t) => {
  t.same(
    parseNarrowParam([['stream', 'Verona'], { operator: 'is', operand: 'dm', negated: true }]),
    [
      { operator: 'stream', operand: 'Verona', negated: false },
      { operator: 'is', operand: 'dm', negated: true },
    ],
  );
  t.same(parseNarrowParam([{ operator: 'dm', operand: [1, 2] }])[0]!.operand, [1, 2]);
  t.same(parseNarrowParam([{ operator: 'channel', operand: 7, negated: null }])[0], {
    operator: 'channel',
    operand: 7,
    negated: false,
  });
  t.equal(
    msgOf(() => parseNarrowParam({})),
    'narrow is not a list',
  );
  t.equal(
    msgOf(() => parseNarrowParam([['a']])),
    'Invalid narrow[0]: element is not a string pair',
  );
  t.equal(
    msgOf(() => parseNarrowParam([['a', 1]])),
    'Invalid narrow[0]: element is not a string pair',
  );
  t.equal(
    msgOf(() => parseNarrowParam([5])),
    'Invalid narrow[0]: dict or list required',
  );
  t.equal(
    msgOf(() => parseNarrowParam([{ operand: 'x' }])),
    'Invalid narrow[0]: operator is missing',
  );
  t.equal(
    msgOf(() => parseNarrowParam([{ operator: 'sender', operand: [1] }])),
    'narrow[0]["operand"] is not a string or an integer',
  );
  t.equal(
    msgOf(() => parseNarrowParam([{ operator: 'is', operand: 5 }])),
    'narrow[0]["operand"] is not a string',
  );
  t.equal(
    msgOf(() => parseNarrowParam([{ operator: 5, operand: 'x' }])),
    'narrow[0]["operator"] is not a string',
  );
  t.end();
});

t.test('search', (t) => {
  t.same(parseSearch('Lunch café'), { fts: '"lunch"* "cafe"*', prefixes: ['lunch', 'cafe'] });
  t.same(parseSearch('"castle is cold" tower'), {
    fts: '"castle is cold" "tower"*',
    prefixes: ['castle', 'is', 'cold', 'tower'],
  });
  t.same(parseSearch('x-ray'), { fts: '"x"* "ray"*', prefixes: ['x', 'ray'] });
  t.equal(parseSearch('!!! ""'), null);
  t.same(
    parseSearch('"unbalanced'),
    { fts: '"unbalanced"*', prefixes: ['unbalanced'] },
    'an unclosed quote is a word',
  );
  t.same(
    parseSearch('tower Tower "a b" "a  b" tow'),
    { fts: '"tower"* "a b" "tow"*', prefixes: ['tower', 'a', 'b', 'tow'] },
    'a word or phrase given twice is asked for once',
  );
  const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
  t.equal(parseSearch(words(MAX_SEARCH_TERMS))?.fts.split(' ').length, MAX_SEARCH_TERMS);
  t.equal(
    msgOf(() => parseSearch(words(MAX_SEARCH_TERMS + 1))),
    `Too many words in search: ${MAX_SEARCH_TERMS + 1} (at most ${MAX_SEARCH_TERMS} are allowed)`,
  );
  t.same(
    parseSearch('lunch '.repeat(50_000)),
    { fts: '"lunch"*', prefixes: ['lunch'] },
    'a word repeated any number of times is one term',
  );
  t.equal(foldWord('Crème'), 'creme');
  t.equal(
    highlightHtml(
      '<p>Lunch at <a href="https://lunch.example">the lunchroom</a> &amp; lunch&#x27;s</p>',
      ['lunch'],
    ),
    '<p><span class="highlight">Lunch</span> at <a href="https://lunch.example">the <span class="highlight">lunchroom</span></a> &amp; <span class="highlight">lunch</span>&#x27;s</p>',
    'words in text only, never in tags or entities',
  );
  t.equal(highlightHtml('<p>nothing</p>', []), '<p>nothing</p>');
  t.equal(htmlToText('<p>a &amp; b&#x27;s <b>c</b>&nbsp;d &#8364;</p>'), " a & b's  c  d € ");
  t.end();
});

t.test('custom emoji names and images', (t) => {
  t.equal(normalizeEmojiName(' green tick '), 'green_tick');
  t.equal(
    msgOf(() => checkEmojiName('ok-1_2')),
    null,
  );
  t.equal(
    msgOf(() => checkEmojiName('')),
    'Emoji name is missing',
  );
  t.equal(
    msgOf(() => checkEmojiName('bad-')),
    'Emoji names must end with either a letter or digit.',
  );
  t.equal(
    msgOf(() => checkEmojiName('Bad')),
    'Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.',
  );
  t.match(imageKind(tinyPng()), { ext: 'png', animated: false });
  t.match(imageKind(tinyGif(1)), { ext: 'gif', animated: false });
  t.match(imageKind(tinyGif(2)), { ext: 'gif', animated: true });
  t.match(imageKind(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0])), { ext: 'jpg' });
  const webp = Buffer.concat([
    Buffer.from('RIFF\0\0\0\0WEBPVP8X'),
    Buffer.from([10, 0, 0, 0, 0x02, 0, 0, 0]),
  ]);
  t.match(imageKind(webp), { ext: 'webp', animated: true });
  t.equal(imageKind(Buffer.from('<svg/>')), null, 'not a raster image');
  t.end();
});

t.test('ranges around an anchor', (t) => {
  const ids = [10, 20, 30, 40, 50];
  const fetch = (
    r: { dir: 'before' | 'after'; anchor: number; limit: number } | { dir: 'ids'; ids: number[] },
  ) => {
    if (r.dir === 'ids') return ids.filter((id) => r.ids.includes(id)).map((id) => ({ id }));
    if (r.dir === 'before')
      return ids
        .filter((id) => id <= r.anchor)
        .reverse()
        .slice(0, r.limit)
        .map((id) => ({ id }));
    return ids
      .filter((id) => id >= r.anchor)
      .slice(0, r.limit)
      .map((id) => ({ id }));
  };
  const idsOf = (r: { rows: { id: number }[] }) => r.rows.map((x) => x.id);
  let r = fetchRange(fetch, 30, 1, 1, true);
  t.same(idsOf(r), [20, 30, 40]);
  t.match(r, { found_anchor: true, found_oldest: false, found_newest: false });
  r = fetchRange(fetch, 35, 5, 5, true);
  t.same(idsOf(r), ids);
  t.match(r, { found_anchor: false, found_oldest: true, found_newest: true });
  r = fetchRange(fetch, 1e16, 2, 10, true);
  t.same(idsOf(r), [40, 50]);
  t.match(r, { found_newest: true, found_oldest: false });
  r = fetchRange(fetch, 0, 10, 2, true);
  t.same(idsOf(r), [10, 20]);
  t.match(r, { found_oldest: true, found_newest: false });
  r = fetchRange(fetch, 30, 2, 0, false);
  t.same(idsOf(r), [10, 20]);
  t.equal(r.found_anchor, false);
  r = fetchRange(fetch, 30, 0, 0, true);
  t.same(idsOf(r), [30]);
  t.end();
});
