/**
 * The table-driven renderer suite (test/unit/markdown-cases.ts), the safety properties of the
 * output for every case and every hostile input, and what a render reports besides the HTML.
 */
import t, { type Test } from 'tap';
import { possibleChannelNames, renderMarkdown } from '../../src/lib/markdown/index.js';
import { re2Error } from '../../src/lib/markdown/linear-regex.js';
import { compileLinkifier, validateLinkifier } from '../../src/lib/markdown/linkifiers.js';
import { CASES, CTX, HOSTILE } from './markdown-cases.js';

const ALLOWED_TAGS = new Set([
  'p',
  'br',
  'strong',
  'em',
  'del',
  'code',
  'pre',
  'span',
  'div',
  'a',
  'img',
  'blockquote',
  'ul',
  'ol',
  'li',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'time',
  'video',
  // KaTeX's MathML and its SVG drawings (no script, foreignObject or links among them).
  'math',
  'semantics',
  'annotation',
  'mrow',
  'mi',
  'mn',
  'mo',
  'ms',
  'mtext',
  'mspace',
  'msup',
  'msub',
  'msubsup',
  'mfrac',
  'msqrt',
  'mroot',
  'mover',
  'munder',
  'munderover',
  'mtable',
  'mtr',
  'mtd',
  'mpadded',
  'mphantom',
  'mstyle',
  'menclose',
  'svg',
  'path',
  'line',
]);
const ALLOWED_ATTRS = new Set([
  'class',
  'href',
  'title',
  'src',
  'alt',
  'role',
  'aria-label',
  'aria-hidden',
  'data-user-id',
  'data-user-group-id',
  'data-stream-id',
  'data-code-language',
  'data-src-fullsize',
  'start',
  'style',
  'datetime',
  'preload',
  'data-id',
  'data-original-dimensions',
  'data-original-content-type',
  'data-animated',
  'data-transcoded-image',
  // KaTeX
  'xmlns',
  'encoding',
  'mathvariant',
  'separator',
  'stretchy',
  'lspace',
  'rspace',
  'display',
  'fence',
  'minsize',
  'maxsize',
  'accent',
  'accentunder',
  'columnalign',
  'columnlines',
  'rowspacing',
  'columnspacing',
  'scriptlevel',
  'displaystyle',
  'linethickness',
  'width',
  'height',
  'viewBox',
  'preserveAspectRatio',
  'd',
  'x1',
  'x2',
  'y1',
  'y2',
  'stroke-width',
  'notation',
  'mathcolor',
]);
const SAFE_URL = /^(?:https?:|ftp:|mailto:|tel:|sms:|bitcoin:|\/|#|user_uploads\/)/i;

/** Every tag is a known one with known attributes; no markup hides in text; URLs are safe. */
function problemsOf(html: string): string[] {
  const tag = /<(\/?)([a-zA-Z0-9]+)((?:\s+[a-zA-Z0-9-]+="[^"<>]*")*)\s*\/?>/g;
  let rest = html;
  const problems: string[] = [];
  for (const m of html.matchAll(tag)) {
    if (!ALLOWED_TAGS.has(m[2]!.toLowerCase())) problems.push(`tag ${m[2]!}`);
    for (const a of m[3]!.matchAll(/([a-zA-Z0-9-]+)="([^"]*)"/g)) {
      if (!ALLOWED_ATTRS.has(a[1]!)) problems.push(`attribute ${a[1]!}`);
      const value = a[2]!.replace(/&amp;/g, '&');
      if ((a[1] === 'href' || a[1] === 'src') && !SAFE_URL.test(value))
        problems.push(`url ${value}`);
      // Table alignment, and KaTeX's layout (lengths and colors; never url() or expressions).
      if (
        a[1] === 'style' &&
        !/^text-align: (left|right|center);$/.test(value) &&
        !/^(?:[a-z-]+:[-+#.%a-zA-Z0-9 ]*;)+$/.test(value)
      )
        problems.push(`style ${value}`);
      if (
        a[1] === 'xmlns' &&
        !/^http:\/\/www\.w3\.org\/(?:1998\/Math\/MathML|2000\/svg)$/.test(value)
      )
        problems.push(`xmlns ${value}`);
    }
    rest = rest.replace(m[0], '');
  }
  if (/[<>]/.test(rest)) problems.push('unescaped < or > in text');
  // Event handlers would be attributes (checked against the allow-list above); a javascript: URL
  // would be an href or src (checked above); a script element would be a tag.
  if (/<script/i.test(html)) problems.push('script element');
  return problems;
}

function assertSafe(t: Test, html: string, label: string): void {
  t.same(problemsOf(html), [], `${label}: output is safe`);
}

t.test('the safety check itself flags unsafe HTML', (t) => {
  t.same(problemsOf('<a href="javascript:alert(1)">x</a>'), ['url javascript:alert(1)']);
  t.same(problemsOf('<img src="x" onerror="alert(1)">'), ['url x', 'attribute onerror']);
  t.same(problemsOf('<script>alert(1)</script>'), ['tag script', 'tag script', 'script element']);
  t.same(problemsOf('<p>a < b</p>'), ['unescaped < or > in text']);
  t.same(problemsOf('<p>&lt;script&gt;</p>'), []);
  t.end();
});

t.test('renderer table', (t) => {
  t.ok(CASES.length >= 80, `at least 80 cases (${CASES.length})`);
  const names = new Set<string>();
  for (const c of CASES) {
    t.notOk(names.has(c.name), `unique name ${c.name}`);
    names.add(c.name);
    const r = renderMarkdown(c.input, CTX, c.opts);
    t.equal(r.rendered_content, c.expected, c.name);
    assertSafe(t, r.rendered_content, c.name);
  }
  t.end();
});

t.test('hostile inputs produce no script, handler, javascript: URL or raw markup', (t) => {
  for (const input of HOSTILE) {
    const r = renderMarkdown(input, CTX);
    assertSafe(t, r.rendered_content, JSON.stringify(input.slice(0, 60)));
  }
  t.end();
});

t.test('what a render reports', (t) => {
  const r = renderMarkdown(
    "@**King Hamlet** @_**Cordelia, Lear's daughter** @**Othello, the Moor of Venice** @*hamletcharacters* @*retired*",
    CTX,
  );
  t.same(r.mentions_user_ids, [10], 'only non-silent mentions of active users');
  t.same(r.mentions_user_group_ids, [5], 'deactivated groups are not mentioned');
  t.equal(r.mentions_stream_wildcard, false);
  t.equal(r.mentions_topic_wildcard, false);
  t.equal(r.has_link, false);

  const w = renderMarkdown('@**all** and @**topic**', CTX);
  t.equal(w.mentions_stream_wildcard, true);
  t.equal(w.mentions_topic_wildcard, true);
  t.same(
    renderMarkdown('@_**all** @_**topic**', CTX).mentions_stream_wildcard,
    false,
    'silent wildcards do not count',
  );
  t.same(
    renderMarkdown('> @**all** @**King Hamlet**', CTX).mentions_user_ids,
    [],
    'quoted mentions are silent',
  );
  t.same(renderMarkdown('`@**King Hamlet**`', CTX).mentions_user_ids, [], 'code is not a mention');

  const up = renderMarkdown(
    '[a](/user_uploads/2/ab/a.txt) http://zulip.testserver/user_uploads/2/cd/b.pdf [again](/user_uploads/2/ab/a.txt) http://other.example/user_uploads/9/x',
    CTX,
  );
  t.same(
    up.potential_attachment_path_ids,
    ['2/ab/a.txt', '2/cd/b.pdf'],
    'only this realm, in order, once',
  );
  t.equal(up.has_attachment, true);
  t.equal(up.has_link, true);
  t.equal(up.has_image, false);

  const im = renderMarkdown('https://example.com/cat.jpg', CTX);
  t.equal(im.has_image, true);
  t.equal(
    renderMarkdown('> https://example.com/cat.jpg', CTX).has_image,
    false,
    'no previews in quotes',
  );
  t.equal(renderMarkdown('#**Denmark**', CTX).has_link, true, 'a channel link is a link');

  t.equal(renderMarkdown('/me waves', CTX).is_me_message, true);
  t.equal(renderMarkdown('/meh', CTX).is_me_message, false);
  t.end();
});

t.test('alert words', (t) => {
  const ctx = {
    ...CTX,
    version: 'alerts',
    alert_words: [
      { user_id: 1, word: 'how' },
      { user_id: 2, word: 'this possible' },
      { user_id: 3, word: 'hello' },
      { user_id: 4, word: 'hey' },
      { user_id: 5, word: 'ALERTWORD' },
    ],
  };
  t.same(
    renderMarkdown('hello how is this possible how are you doing today', ctx)
      .user_ids_with_alert_words,
    [1, 2, 3],
  );
  t.same(renderMarkdown('We have an alertword day today!', ctx).user_ids_with_alert_words, [5]);
  t.same(
    renderMarkdown('showhow hellothere', ctx).user_ids_with_alert_words,
    [],
    'whole words only',
  );
  t.end();
});

t.test('linkifiers that no longer compile are skipped, not fatal', (t) => {
  // Stored before a rule changed: one the translator refuses (lookahead, backreference, as RE2
  // does) and one RE2 itself refuses (a repeat count over its limit once nested).
  const refused = ['(?=a)aa', '(a)\\1', '((a{100}){100}){100}'];
  for (const pattern of refused) {
    t.throws(() => validateLinkifier(pattern, 'https://x/'), `the API refuses ${pattern}`);
    t.equal(compileLinkifier({ id: 9, pattern, url_template: 'https://x/' }), null);
  }
  t.ok(re2Error('((a{100}){100}){100}'), 'RE2 itself refuses the nested repeat');
  const ctx = {
    ...CTX,
    version: 'bad',
    linkifiers: [
      ...refused.map((pattern, i) => ({ id: 90 + i, pattern, url_template: 'https://x/' })),
      ...CTX.linkifiers,
    ],
  };
  t.equal(
    renderMarkdown('aaa #123', ctx).rendered_content,
    '<p>aaa <a href="https://trac.example.com/ticket/123">#123</a></p>',
  );
  t.end();
});

t.test('linkable channels and previews are per-render options', (t) => {
  const content = '#**Denmark** #**Denmark>hamlet** #**Denmark>hamlet@7** #**Verona & co.**';
  const all = renderMarkdown(content, CTX).rendered_content;
  t.match(all, /data-stream-id="3"[^]*data-stream-id="3"[^]*near\/7[^]*data-stream-id="4"/);
  const onlyVerona = renderMarkdown(content, CTX, { linkable_channel_ids: [4] }).rendered_content;
  t.equal(
    onlyVerona,
    '<p>#<strong>Denmark</strong> #<strong>Denmark&gt;hamlet</strong> ' +
      '#<strong>Denmark&gt;hamlet@7</strong> ' +
      '<a class="stream" data-stream-id="4" href="/#narrow/channel/4-Verona-.26-co.2E">#Verona &amp; co.</a></p>',
  );
  t.notMatch(
    renderMarkdown(content, CTX, { linkable_channel_ids: [] }).rendered_content,
    /<a/,
    'an empty list links nothing',
  );
  const noPreview = renderMarkdown('https://example.com/cat.jpg', CTX, { no_previews: true });
  t.equal(
    noPreview.rendered_content,
    '<p><a href="https://example.com/cat.jpg">https://example.com/cat.jpg</a></p>',
  );
  t.equal(noPreview.has_image, false);
  t.equal(noPreview.has_link, true);
  t.same([...possibleChannelNames('#**a** `#**b>c**` #**d>e@1** #**** #*x* #**f>**')].sort(), [
    'a',
    'b',
    'b>c',
    'd',
    'd>e@1',
    'f',
    'f>',
  ]);
  t.end();
});

// zerver/tests/test_markdown.py: test_topic_single_containing_no_message,
// test_empty_string_topic_message_link
t.test('links to the empty topic', (t) => {
  t.equal(
    renderMarkdown('#**Denmark>**', CTX).rendered_content,
    '<p><a class="stream-topic" data-stream-id="3" href="/#narrow/channel/3-Denmark/topic/">#Denmark &gt; <em>general chat</em></a></p>',
  );
  t.equal(
    renderMarkdown('#**Denmark>@123**', CTX).rendered_content,
    '<p><a class="message-link" href="/#narrow/channel/3-Denmark/topic//near/123">#Denmark &gt; <em>general chat</em> @ 💬</a></p>',
  );
  t.equal(
    renderMarkdown('#**Denmark>some topic**', CTX).rendered_content,
    '<p><a class="stream-topic" data-stream-id="3" href="/#narrow/channel/3-Denmark/topic/some.20topic">#Denmark &gt; some topic</a></p>',
  );
  t.end();
});
