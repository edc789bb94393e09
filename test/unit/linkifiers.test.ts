/**
 * Linkifier building blocks: Python pattern translation and its refusals, RFC 6570 expansion,
 * topic_links (ported from the reference's test_markdown.py MarkdownLinkifierTest), and the
 * emoji table.
 */
import t from 'tap';
import { topicLinks, validateLinkifier } from '../../src/lib/markdown/linkifiers.js';
import { translatePythonRegex } from '../../src/lib/markdown/regex.js';
import { expandUriTemplate, parseUriTemplate } from '../../src/lib/markdown/uri-template.js';
import {
  allEmojiNames,
  emojiCodeForName,
  emojiCodeOf,
  emojiNameForCode,
  emojiTextOf,
} from '../../src/lib/emoji/index.js';

const L = (id: number, pattern: string, url_template: string) => ({ id, pattern, url_template });

t.test('Python patterns become JavaScript ones', (t) => {
  const tr = (p: string) => translatePythonRegex(p);
  t.same(tr('#(?P<id>[0-9]+)'), { source: '#(?<id>[0-9]+)', flags: '', groupNames: ['id'] });
  t.same(tr('com.+(?P<id>ABC\\-[0-9]+)').source, 'com.+(?<id>ABC-[0-9]+)');
  t.same(tr('(?i)abc'), { source: 'abc', flags: 'i', groupNames: [] });
  t.equal(tr('\\Aab\\z').source, '^ab$');
  t.equal(tr('\\pL+').source, '\\p{L}+');
  t.equal(tr('[[:alpha:]]+').source, '[a-zA-Z]+');
  t.equal(tr('a{').source, 'a\\{');
  t.equal(tr('a/b').source, 'a\\/b');
  t.equal(tr('\\Q.*\\E').source, '\\.\\*');
  t.same(tr('(?P<org>[a-z]+)/(?P<repo>[a-z]+)#(?P<id>[0-9]+)').groupNames, ['org', 'repo', 'id']);
  const refused: [string, string][] = [
    ['(foo', 'Bad regular expression: missing ): (foo'],
    ['foo)', 'Bad regular expression: unexpected ): foo)'],
    ['[abc', 'Bad regular expression: missing ]: [abc'],
    ['ZUL-(?P<id>\\d????)', 'Bad regular expression: bad repetition operator: ????'],
    ['a++', 'Bad regular expression: bad repetition operator: ++'],
    ['*a', 'Bad regular expression: missing argument to repetition operator: *'],
    ['a{1001}', 'Bad regular expression: bad repetition operator: {1001}'],
    ['(?=x)y', 'Bad regular expression: invalid perl operator: (?='],
    ['(?!x)y', 'Bad regular expression: invalid perl operator: (?!'],
    ['(?<!x)y', 'Bad regular expression: invalid perl operator: (?<'],
    ['(a)\\1', 'Bad regular expression: invalid escape sequence: \\1'],
    ['(?P<a>x)(?P<a>y)', 'Bad regular expression: duplicate capture group name: a'],
    ['(?#c)x', 'Bad regular expression: invalid perl operator: (?#'],
    ['(?z)x', 'Bad regular expression: invalid or unsupported Perl syntax: (?z'],
    ['', 'This field cannot be blank.'],
  ];
  for (const [p, msg] of refused) t.throws(() => tr(p), { message: msg }, p);
  // RE2's own syntax, passed on as written: inline and scoped flags, \x{…}, Unicode scripts.
  for (const p of ['b(?i)c', '(?i:x)y', 'a(?s-m:.)', '\\x{263a}', '\\p{Greek}+', '[\\p{Greek}0-9]'])
    t.equal(tr(p).source, p, p);
  // Repetition, nested too: RE2 matches in linear time what would backtrack without end.
  t.doesNotThrow(() => tr('(ab)+c*(d|e){2}'));
  for (const p of ['(a+)+b', '(\\w*\\s?)*$', '((ab)*c){2,}']) t.doesNotThrow(() => tr(p), p);
  t.end();
});

t.test("RE2's own syntax: accepted, matched, and refused in RE2's words", (t) => {
  const greek = L(1, '(?P<id>\\p{Greek}+)', 'https://e.com/{id}');
  t.doesNotThrow(() => validateLinkifier(greek.pattern, greek.url_template));
  t.same(topicLinks('see αβγ now', [greek]), [
    { url: 'https://e.com/%CE%B1%CE%B2%CE%B3', text: 'αβγ' },
  ]);
  const scoped = L(2, 'T(?i:ask)-(?P<id>\\x{30}*[1-9])', 'https://e.com/{id}');
  t.doesNotThrow(() => validateLinkifier(scoped.pattern, scoped.url_template));
  t.same(
    topicLinks('TASK-7 Task-008 task-1', [scoped]).map((l) => l.text),
    ['TASK-7', 'Task-008'],
  );
  t.throws(() => validateLinkifier('(?P<id>\\p{Foo})', 'https://e.com/{id}'), {
    message: 'Bad regular expression: invalid character class range: \\p{Foo}',
  });
  t.end();
});

t.test('RFC 6570 expansion', (t) => {
  const x = (tpl: string, v: Record<string, string | undefined>) =>
    expandUriTemplate(parseUriTemplate(tpl), v);
  t.equal(
    x('https://example.com/A%20Test/%%%ba/{id}', { id: '123' }),
    'https://example.com/A%20Test/%25%25%ba/123',
  );
  t.equal(x('https://e.com/{id}', { id: 'a b/c' }), 'https://e.com/a%20b%2Fc');
  t.equal(x('https://e.com/{+id}', { id: 'a b/c' }), 'https://e.com/a%20b/c');
  t.equal(
    x('https://e.com{/a,b}{?c,d}{#f}', { a: 'x', b: 'y', c: '1', d: '', f: 'top' }),
    'https://e.com/x/y?c=1&d=#top',
  );
  t.equal(x('https://e.com/{a}{.b}{;c}{&d}', { a: 'A', b: 'B', c: 'C' }), 'https://e.com/A.B;c=C');
  t.equal(x('https://e.com/{id:3}', { id: 'abcdef' }), 'https://e.com/abc');
  t.equal(x('https://e.com/{id}', {}), 'https://e.com/', 'an unmatched group is left out');
  for (const bad of [
    'https://example.com/{foo',
    'https://example.com/{{}',
    'https://example.com/{//foo}',
    'https://example.com/{bar++}',
    '{}',
    'a}b',
  ])
    t.throws(() => parseUriTemplate(bad), { message: 'Invalid URL template.' }, bad);
  for (const ok of [
    'https://example.com/{foo}{bars}',
    'https://example.com/%%(foo)s',
    'https://chat{.domain}.com/{#foo}',
    '$not_a_url$',
    'https://example.com/{?foo*}',
  ])
    t.doesNotThrow(() => parseUriTemplate(ok), ok);
  t.end();
});

t.test('test_links_in_topic_name', (t) => {
  t.same(topicLinks('https://google.com/hello-world', []), [
    { url: 'https://google.com/hello-world', text: 'https://google.com/hello-world' },
  ]);
  t.same(topicLinks('Without scheme google.com/hello-world', []), [
    { url: 'https://google.com/hello-world', text: 'google.com/hello-world' },
  ]);
  t.same(topicLinks('Without scheme random.words/hello-world', []), []);
  t.same(
    topicLinks('Try out http://ftp.debian.org, https://google.com/ and https://google.in/.', []),
    [
      { url: 'http://ftp.debian.org', text: 'http://ftp.debian.org' },
      { url: 'https://google.com/', text: 'https://google.com/' },
      { url: 'https://google.in/', text: 'https://google.in/' },
    ],
  );
  t.same(topicLinks('google.in google.com', []), [
    { url: 'https://google.in', text: 'google.in' },
    { url: 'https://google.com', text: 'google.com' },
  ]);
  t.same(topicLinks('Have you seen github.com/zulip?', []), [
    { url: 'https://github.com/zulip', text: 'github.com/zulip' },
  ]);
  t.same(topicLinks('Do you like https://example.com? I love it.', []), [
    { url: 'https://example.com', text: 'https://example.com' },
  ]);
  t.end();
});

t.test('test_realm_patterns in topics', (t) => {
  const trac = [L(1, '#(?P<id>[0-9]{2,8})', 'https://trac.example.com/ticket/{id}')];
  t.same(topicLinks('#444', trac), [{ url: 'https://trac.example.com/ticket/444', text: '#444' }]);
  t.same(topicLinks('#111 https://google.com #111 #222 #111 https://google.com #222', trac), [
    { url: 'https://trac.example.com/ticket/111', text: '#111' },
    { url: 'https://google.com', text: 'https://google.com' },
    { url: 'https://trac.example.com/ticket/111', text: '#111' },
    { url: 'https://trac.example.com/ticket/222', text: '#222' },
    { url: 'https://trac.example.com/ticket/111', text: '#111' },
    { url: 'https://google.com', text: 'https://google.com' },
    { url: 'https://trac.example.com/ticket/222', text: '#222' },
  ]);
  for (const [topic, n] of [
    ['Hello #123 World', 1],
    ['Hello #123World', 0],
    ['Hello#123 World', 0],
    ['Hello\u00a0#123\u00a0World', 1],
    ['チケットは #123 です', 1],
    ['チケットは#123です', 0],
    ['(#123)', 1],
    ['#123>', 1],
    ['"#123"', 1],
    ['#123@', 1],
    [')#123(', 0],
    ['##123', 0],
  ] as const)
    t.equal(topicLinks(topic, trac).length, n, topic);
  const nested = [...trac, L(2, 'hello#(?P<id>[0-9]+)', 'https://trac.example.com/hello/{id}')];
  t.same(topicLinks('hello#123 #234', nested), [
    { url: 'https://trac.example.com/hello/123', text: 'hello#123' },
    { url: 'https://trac.example.com/ticket/234', text: '#234' },
  ]);
  t.end();
});

t.test('test_topic_links_ordering_by_priority', (t) => {
  const ls = [
    L(1, 'http', 'http://example.com/'),
    L(2, 'b#(?P<id>[a-z]+)', 'http://example.com/b/{id}'),
    L(3, 'a#(?P<aid>[a-z]+) b#(?P<bid>[a-z]+)', 'http://example.com/a/{aid}/b/{bid}'),
    L(4, 'a#(?P<id>[a-z]+)', 'http://example.com/a/{id}'),
  ];
  t.same(topicLinks('http://foo.com a#asd b#bar', ls), [
    { text: 'http', url: 'http://example.com/' },
    { text: 'a#asd', url: 'http://example.com/a/asd' },
    { text: 'b#bar', url: 'http://example.com/b/bar' },
  ]);
  const mixed = [
    L(1, 'ABC-42', 'https://google.com'),
    L(2, 'com.+(?P<id>ABC\\-[0-9]+)', 'https://trac.example.com/ticket/{id}'),
  ];
  t.same(topicLinks('com ABC-42', mixed), [{ url: 'https://google.com', text: 'ABC-42' }]);
  t.same(topicLinks('https://foo.com/ABC-123', mixed), [
    { url: 'https://foo.com/ABC-123', text: 'https://foo.com/ABC-123' },
  ]);
  t.same(topicLinks('com https://foo.com/ABC-123', mixed), [
    { url: 'https://trac.example.com/ticket/ABC-123', text: 'com https://foo.com/ABC-123' },
  ]);
  t.end();
});

t.test('emoji table', (t) => {
  t.ok(allEmojiNames().size > 600, 'hundreds of names');
  const expected: [string, string][] = [
    ['smile', '1f642'],
    ['holiday_tree', '1f384'],
    ['+1', '1f44d'],
    ['thumbs_up', '1f44d'],
    ['heart', '2764'],
    ['hash', '0023-20e3'],
    ['woman_shrugging', '1f937-200d-2640'],
    ['octopus', '1f419'],
  ];
  for (const [name, code] of expected) t.equal(emojiCodeForName(name), code, name);
  t.equal(emojiNameForCode('1f44d'), '+1', 'canonical name');
  t.equal(emojiCodeForName('fried_egg'), undefined);
  t.equal(emojiCodeOf('⬆️'), '2b06', 'variation selector dropped');
  t.equal(emojiCodeOf('#️⃣'), '0023-20e3');
  t.equal(emojiTextOf('1f642'), '🙂');
  for (const [name, code] of allEmojiNames())
    t.match(code, /^[0-9a-f]{4,5}(-[0-9a-f]{4,5})*$/, `code of ${name}`);
  t.end();
});
