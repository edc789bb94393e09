/**
 * web/state/settings-more.ts: alert words read from the add form and found in a message's text
 * (whole words, any case, the longest at a place; not in links, code or mentions), the uploads'
 * events, filter, order and quota, a linkifier's example and the reorder, the default
 * channels and playgrounds' rows, what adding several default channels said. And the reducer's
 * part (web/state/chat.ts): register's alert words, linkifiers, playgrounds and default channels,
 * then their events; uploads kept by `attachment` events only once fetched.
 */
import t from 'tap';
import type { ServerEvent } from '../../src/client/types.js';
import {
  addableChannels,
  alertWordRanges,
  alertWordsMayMark,
  applyAttachmentEvent,
  attachmentRows,
  defaultChannelRows,
  defaultChannelsAdded,
  expandTemplate,
  linkifierExample,
  moved,
  parseAlertWords,
  playgroundRows,
  playgroundUrl,
  quotaText,
  sortedAlertWords,
  type Attachment,
  type Uploads,
} from '../../web/state/settings-more.js';
import { chatState } from '../helpers/web-chat.js';

const marked = (text: string, words: string[]) =>
  alertWordRanges(text, words).map(([a, b]) => text.slice(a, b));

t.test('alert words from the form: split, trimmed, no repeats', (t) => {
  t.same(parseAlertWords(' release , outage\nRelease,, deploy window '), [
    'release',
    'outage',
    'deploy window',
  ]);
  t.same(parseAlertWords(' , \n'), [], 'nothing to add');
  t.same(sortedAlertWords(['beta', 'Alpha', 'alpha', 'Gamma']), [
    'alpha',
    'Alpha',
    'beta',
    'Gamma',
  ]);
  t.end();
});

t.test('alert words in a text: whole words, any case', (t) => {
  t.same(marked('The Release is out.', ['release']), ['Release']);
  t.same(marked('releases and prerelease', ['release']), [], 'not inside other words');
  t.same(marked('(release) "release", release!', ['release']), ['release', 'release', 'release']);
  t.same(marked('release', ['release']), ['release'], 'the whole text');
  t.same(marked('deploy window opens', ['deploy', 'deploy window']), ['deploy window'], 'longest');
  t.same(marked('a deploy, a window', ['deploy', 'window']), ['deploy', 'window']);
  t.same(marked('no words here', []), []);
  t.same(marked('x', ['  ']), [], 'a blank word marks nothing');
  t.same(alertWordRanges('Go release now', ['RELEASE']), [[3, 10]], 'offsets in the text');
  t.end();
});

t.test('where alert words are not marked', (t) => {
  const tag = (name: string, classes = '') => ({ name, classes });
  t.ok(alertWordsMayMark([]), 'the message’s own text');
  t.ok(alertWordsMayMark([tag('P'), tag('STRONG')]));
  t.notOk(alertWordsMayMark([tag('A')]), 'a link');
  t.notOk(alertWordsMayMark([tag('SPAN'), tag('CODE')]), 'code');
  t.notOk(alertWordsMayMark([tag('SPAN', 'user-mention silent')]), 'a mention');
  t.notOk(alertWordsMayMark([tag('SPAN', 'alert-word')]), 'marked already');
  t.ok(alertWordsMayMark([tag('SPAN', 'user-mentioned')]), 'a class only like one');
  t.end();
});

const file = (id: number, name: string, created: number, size = 100): Attachment => ({
  id,
  name,
  path_id: `2/ab/${name}`,
  size,
  create_time: created,
  messages: [],
});

t.test('uploads: events, filter, newest first', (t) => {
  let u: Uploads = {
    list: [file(1, 'notes.txt', 1000), file(2, 'Plan.pdf', 3000)],
    spaceUsed: 200,
  };
  u = applyAttachmentEvent(u, {
    op: 'add',
    attachment: file(3, 'plan-v2.pdf', 2000),
    upload_space_used: 300,
  });
  t.equal(u.spaceUsed, 300, 'the realm’s space from the event');
  t.same(
    attachmentRows(u.list, '').map((a) => a.id),
    [2, 3, 1],
    'newest first',
  );
  t.same(
    attachmentRows(u.list, ' PLAN ').map((a) => a.id),
    [2, 3],
    'the filter, any case',
  );
  t.same(
    attachmentRows(u.list, 'plan v2').map((a) => a.id),
    [3],
    'every word of the filter',
  );
  const used = { ...file(1, 'notes.txt', 1000), messages: [{ id: 9, date_sent: 1500 }] };
  u = applyAttachmentEvent(u, { op: 'update', attachment: used });
  t.same(u.list.find((a) => a.id === 1)?.messages, [{ id: 9, date_sent: 1500 }], 'updated');
  t.equal(u.spaceUsed, 300, 'kept without one in the event');
  u = applyAttachmentEvent(u, { op: 'remove', attachment: { id: 2 }, upload_space_used: 200 });
  t.same(
    u.list.map((a) => a.id),
    [1, 3],
    'removed',
  );
  const same = applyAttachmentEvent(u, { op: 'update', attachment: { id: 1 } });
  t.equal(same.list, u.list, 'an update without the attachment changes nothing');
  t.end();
});

t.test('the quota in words (the sizes: format.test.ts)', (t) => {
  t.equal(quotaText(2048, null), 'The organization’s uploads take 2 KB.');
  t.equal(quotaText(512 * 1024, 1), 'The organization’s uploads take 512 KB of its 1 MB (50%).');
  t.match(quotaText(5 * 1024 * 1024, 1), /\(100%\)/, 'never past 100%');
  t.end();
});

t.test('a linkifier’s example', (t) => {
  t.same(
    linkifierExample({
      pattern: '#(?P<id>[0-9]+)',
      url_template: 'https://github.com/zulip/zulip/issues/{id}',
    }),
    { text: '#123', url: 'https://github.com/zulip/zulip/issues/123' },
  );
  t.same(
    linkifierExample({
      pattern: '(?P<org>[a-zA-Z0-9_-]+)/(?P<repo>[a-zA-Z0-9_-]+)#(?P<id>\\d+)',
      url_template: 'https://github.com/{org}/{repo}/issues/{id}',
    }),
    { text: 'a1/a1#123', url: 'https://github.com/a1/a1/issues/123' },
  );
  t.same(
    linkifierExample({ pattern: 'RFC ?(?P<n>\\d+)', url_template: 'https://x/{n}' }),
    null,
    'a pattern with more than literal text and groups: none',
  );
  t.same(linkifierExample({ pattern: 'ticket-(?P<id>\\w+)', url_template: 'https://t/{id}' }), {
    text: 'ticket-abc',
    url: 'https://t/abc',
  });
  t.equal(linkifierExample({ pattern: '(', url_template: 'x' }), null, 'not a pattern');
  t.equal(
    expandTemplate('https://x/{a}?q={+b}', { a: 'a b/c', b: 'x/y z' }),
    'https://x/a%20b%2Fc?q=x/y%20z',
  );
  t.end();
});

t.test('moving a linkifier', (t) => {
  t.same(moved([1, 2, 3], 2, -1), [2, 1, 3]);
  t.same(moved([1, 2, 3], 2, 1), [1, 3, 2]);
  t.equal(moved([1, 2, 3], 1, -1), null, 'the first cannot go up');
  t.equal(moved([1, 2, 3], 3, 1), null, 'the last cannot go down');
  t.equal(moved([1, 2, 3], 7, 1), null, 'not in the list');
  t.end();
});

t.test('default channels and playgrounds', (t) => {
  const channels = new Map([
    [1, { stream_id: 1, name: 'general' }],
    [2, { stream_id: 2, name: 'design', invite_only: true }],
    [3, { stream_id: 3, name: 'announce' }],
    [4, { stream_id: 4, name: 'old', is_archived: true }],
  ]);
  t.same(
    defaultChannelRows([1, 3, 99], channels).map((c) => c.name),
    ['announce', 'general'],
    'by name, unknown ones left out',
  );
  t.same(
    addableChannels([1], channels).map((c) => c.name),
    ['announce'],
    'not default, not archived, not private (the server refuses those)',
  );
  t.same(
    playgroundRows([
      { id: 2, name: 'B', pygments_language: 'Rust', url_template: 'x' },
      { id: 1, name: 'A', pygments_language: 'Python', url_template: 'x' },
      { id: 3, name: 'A', pygments_language: 'Rust', url_template: 'x' },
    ]).map((p) => p.id),
    [1, 3, 2],
  );
  t.end();
});

let id = 0;
const ev = (e: Record<string, unknown>) => ({ id: id++, ...e }) as unknown as ServerEvent;

const chat = (o: Record<string, unknown>) => chatState(o);

t.test('default channels added at once, said', (t) => {
  t.equal(defaultChannelsAdded(['announce']), '#announce is now a default channel.');
  t.equal(
    defaultChannelsAdded(['announce', 'welcome']),
    '#announce and #welcome are now default channels.',
  );
  t.equal(defaultChannelsAdded(['a', 'b', 'c']), '#a, #b and #c are now default channels.');
  t.end();
});

t.test('the reducer: register’s lists, then their events', (t) => {
  const s = chat({
    alert_words: ['release'],
    realm_linkifiers: [{ id: 1, pattern: '#(?P<id>\\d+)', url_template: 'https://x/{id}' }],
    realm_playgrounds: [],
    realm_default_streams: [5],
  });
  t.same(s.alertWords, ['release']);
  t.equal(s.linkifiers.length, 1);
  t.same(s.defaultStreams, [5]);
  const rev = s.rev.extras.value;
  s.apply([
    ev({ type: 'alert_words', alert_words: ['release', 'outage'] }),
    ev({ type: 'realm_linkifiers', realm_linkifiers: [] }),
    ev({
      type: 'realm_playgrounds',
      realm_playgrounds: [{ id: 4, name: 'Rust', pygments_language: 'Rust', url_template: 'u' }],
    }),
    ev({ type: 'default_streams', default_streams: [5, 6] }),
  ]);
  t.same(s.alertWords, ['release', 'outage']);
  t.same(s.linkifiers, []);
  t.equal(s.playgrounds[0]?.name, 'Rust');
  t.same(s.defaultStreams, [5, 6]);
  t.equal(s.rev.extras.value, rev + 4, 'each one redraws the panels');

  const none = chat({});
  t.same(
    [none.alertWords, none.linkifiers, none.playgrounds, none.defaultStreams],
    [[], [], [], []],
    'none in the snapshot: empty lists',
  );
  t.end();
});

t.test('the reducer: uploads once fetched', (t) => {
  const s = chat({});
  s.apply([
    ev({ type: 'attachment', op: 'add', attachment: file(1, 'a.txt', 1), upload_space_used: 9 }),
  ]);
  t.equal(s.uploads, null, 'not fetched: nothing kept (the fetch has it)');
  s.setUploads([file(1, 'a.txt', 1)], 100);
  s.apply([
    ev({ type: 'attachment', op: 'add', attachment: file(2, 'b.txt', 2), upload_space_used: 200 }),
  ]);
  t.same(
    s.uploads?.list.map((a) => a.id),
    [1, 2],
  );
  t.equal(s.uploads?.spaceUsed, 200);
  s.apply([
    ev({ type: 'attachment', op: 'remove', attachment: { id: 1 }, upload_space_used: 100 }),
  ]);
  t.same(
    s.uploads?.list.map((a) => a.id),
    [2],
  );
  t.end();
});

t.test("a playground's link: the template expanded, only to http(s)", (t) => {
  t.equal(
    playgroundUrl('https://play.example/?code={code}', 'fn main() { 1 + 1 }'),
    'https://play.example/?code=fn%20main%28%29%20%7B%201%20%2B%201%20%7D',
    'a simple variable percent-encodes reserved characters too',
  );
  t.equal(
    playgroundUrl('https://play.example/#{+code}', 'a/b?c'),
    'https://play.example/#a/b?c',
    '{+code} keeps them',
  );
  t.equal(playgroundUrl('https://play.example/{?code}', 'x'), 'https://play.example/?code=x');
  t.equal(playgroundUrl('javascript:alert(1)//{code}', 'x'), null, 'no script link');
  t.equal(playgroundUrl('file:///etc/{code}', 'x'), null, 'no local scheme');
  t.equal(playgroundUrl('/relative/{code}', 'x'), null, 'no relative link');
  t.equal(playgroundUrl('https://play.example/{code', 'x'), null, 'no broken template');
  t.end();
});
