/**
 * content_html_diff (src/lib/html-diff.ts): inserted and deleted text marked, tags kept from the
 * new version, unchanged HTML returned as it is. Reference: zerver/tests/test_html_diff.py.
 */
import t from 'tap';
import { highlightHtmlDifferences } from '../../src/lib/html-diff.js';

t.test('unchanged HTML comes back unchanged', (t) => {
  const html = '<p>Hello <strong>world</strong></p>';
  t.equal(highlightHtmlDifferences(html, html), html);
  t.end();
});

t.test('an added word is marked inserted', (t) => {
  t.equal(
    highlightHtmlDifferences('<p>Hello world</p>', '<p>Hello big world</p>'),
    '<p>Hello <span class="highlight_text_inserted">big </span>world</p>',
  );
  t.end();
});

t.test('a removed word is marked deleted; a replaced one both', (t) => {
  t.equal(
    highlightHtmlDifferences('<p>one two three</p>', '<p>one three</p>'),
    '<p>one <span class="highlight_text_deleted">two </span>three</p>',
  );
  t.equal(
    highlightHtmlDifferences('<p>red car</p>', '<p>blue car</p>'),
    '<p><span class="highlight_text_deleted">red</span><span class="highlight_text_inserted">blue</span> car</p>',
  );
  t.end();
});

t.test('tags come from the new version only; markers never straddle a tag', (t) => {
  const out = highlightHtmlDifferences('<p>plain text</p>', '<p>plain <em>fancy</em> text</p>');
  t.equal(
    out,
    '<p>plain <em><span class="highlight_text_inserted">fancy</span></em><span class="highlight_text_inserted"> </span>text</p>',
  );
  const removed = highlightHtmlDifferences('<p>a <em>b</em> c</p>', '<p>a c</p>');
  t.notMatch(removed, /<em>/, 'a removed tag is dropped');
  t.match(removed, /highlight_text_deleted">b</);
  t.end();
});

t.test('very long changed middles fall back to delete-then-insert', (t) => {
  const a = `<p>${Array.from({ length: 3000 }, (_, i) => `a${i}`).join(' ')}</p>`;
  const b = `<p>${Array.from({ length: 3000 }, (_, i) => `b${i}`).join(' ')}</p>`;
  const out = highlightHtmlDifferences(a, b);
  t.match(out, /^<p><span class="highlight_text_deleted">a0 /);
  t.match(out, /<span class="highlight_text_inserted">b0 /);
  t.end();
});
