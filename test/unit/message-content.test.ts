/** Pure rules of sending: content, topics, `to`, client names, recipient ids, flags. */
import t from 'tap';
import { JsonableError } from '../../src/lib/errors.js';
import {
  clientNameFromUserAgent,
  defaultReadBySender,
  dmGroupKey,
  normalizeContent,
  normalizeTopic,
  parseChannelTo,
  parseDirectTo,
  recipientIdOf,
  topicOperand,
  truncateCodePoints,
} from '../../src/lib/message-content.js';
import {
  apiFlagNames,
  editableFlagBit,
  flagMask,
  MESSAGE_FLAG_BITS,
} from '../../src/lib/message-flags.js';

const msgOf = (fn: () => unknown) => {
  try {
    fn();
    return null;
  } catch (e) {
    return e instanceof JsonableError ? e.message : String(e);
  }
};

t.test('content', (t) => {
  t.equal(normalizeContent('\n\n  a  \n \t\n'), '  a');
  t.equal(
    msgOf(() => normalizeContent(' \n\t ')),
    'Message must not be empty',
  );
  t.equal(
    msgOf(() => normalizeContent('a\0b')),
    'Message must not contain null bytes',
  );
  const long = normalizeContent('😀'.repeat(10_001));
  t.equal([...long].length, 10_000, 'code points, not UTF-16 units');
  t.ok(long.endsWith('\n[message truncated]'));
  t.equal(normalizeContent('x'.repeat(10_000)).length, 10_000, 'exactly the limit is kept');
  t.equal(truncateCodePoints('abcdef', 5, '..'), 'abc..');
  t.end();
});

t.test('topics', (t) => {
  t.equal(normalizeTopic('  lunch '), 'lunch');
  t.equal(normalizeTopic('general chat'), '');
  t.equal(normalizeTopic('(no topic)'), '');
  t.equal(normalizeTopic('x'.repeat(61)), 'x'.repeat(57) + '...');
  t.equal(normalizeTopic('é'.repeat(60)), 'é'.repeat(60));
  t.equal(
    msgOf(() => normalizeTopic('a\tb')),
    'Invalid character in topic, at position 2!',
  );
  t.equal(
    msgOf(() => normalizeTopic('ab\uFFFE')),
    'Invalid character in topic, at position 3!',
  );
  t.equal(topicOperand('general chat'), '');
  t.equal(topicOperand(' lunch '), ' lunch ');
  t.end();
});

t.test('the forms of `to`', (t) => {
  t.equal(parseChannelTo('Verona'), 'Verona');
  t.equal(parseChannelTo('"Verona"'), 'Verona');
  t.equal(parseChannelTo('12'), 12);
  t.equal(parseChannelTo('[12]'), 12);
  t.equal(parseChannelTo('["Denmark"]'), 'Denmark');
  t.equal(
    msgOf(() => parseChannelTo('[1, 2]')),
    'Expected exactly one channel',
  );
  t.equal(
    msgOf(() => parseChannelTo('true')),
    'Invalid data type for channel',
  );
  t.same(parseDirectTo('[3, 4, 3]'), { ids: [3, 4] });
  t.same(parseDirectTo('["a@x.com", " b@x.com ", "a@x.com"]'), { emails: ['a@x.com', 'b@x.com'] });
  t.same(parseDirectTo('a@x.com,b@x.com'), { emails: ['a@x.com', 'b@x.com'] });
  t.same(parseDirectTo('[]'), { emails: [] });
  t.equal(
    msgOf(() => parseDirectTo('[1, "a@x.com"]')),
    'Recipient lists may contain emails or user IDs, but not both.',
  );
  t.equal(
    msgOf(() => parseDirectTo('["a@x.com", 1]')),
    'Recipient lists may contain emails or user IDs, but not both.',
  );
  t.equal(
    msgOf(() => parseDirectTo('{"a": 1}')),
    'Invalid data type for recipients',
  );
  t.equal(
    msgOf(() => parseDirectTo('[1.5]')),
    'Invalid data type for recipients',
  );
  t.end();
});

t.test('clients, recipients, conversation keys', (t) => {
  t.equal(clientNameFromUserAgent('ZulipMobile/27.1 (Android 14)'), 'ZulipMobile');
  t.equal(clientNameFromUserAgent('ZulipElectron/5.9.3 Mozilla/5.0'), 'ZulipElectron');
  t.equal(clientNameFromUserAgent('python-requests/2.31'), 'python-requests');
  t.equal(clientNameFromUserAgent(''), 'Unspecified');
  t.equal(clientNameFromUserAgent('x'.repeat(40)).length, 30);
  // Thirty code points, as the reference's name[:30] cuts: an emoji at the cut is kept whole.
  const fox = '\u{1F98A}';
  t.equal(clientNameFromUserAgent(`${'a'.repeat(29)}${fox}b/1.0`), `${'a'.repeat(29)}${fox}`);
  t.equal(clientNameFromUserAgent(`${fox.repeat(40)}/1.0`), fox.repeat(30), '30 emoji, 60 units');
  t.equal(
    clientNameFromUserAgent(`${'a'.repeat(28)}${fox}${fox}/2`),
    `${'a'.repeat(28)}${fox}${fox}`,
  );
  t.equal(defaultReadBySender('ZulipMobile'), true);
  t.equal(defaultReadBySender('website'), true);
  t.equal(defaultReadBySender('ZulipPython'), false);
  t.not(recipientIdOf(3, null), recipientIdOf(null, 3), 'channels and conversations never collide');
  t.equal(recipientIdOf(3, null), recipientIdOf(3, null));
  t.equal(dmGroupKey([10, 2, 10, 7]), '2,7,10');
  t.end();
});

t.test('flags', (t) => {
  const m = flagMask(['read', 'stream_wildcard_mentioned', 'is_private']);
  t.same(
    apiFlagNames(m),
    ['read', 'stream_wildcard_mentioned', 'wildcard_mentioned'],
    'server-only flags hidden',
  );
  t.same(apiFlagNames(0), []);
  t.equal(editableFlagBit('starred'), MESSAGE_FLAG_BITS.starred);
  t.equal(
    msgOf(() => editableFlagBit('mentioned')),
    "Flag not editable: 'mentioned'",
  );
  t.equal(
    msgOf(() => editableFlagBit('is_private')),
    "Invalid flag: 'is_private'",
  );
  t.equal(
    msgOf(() => editableFlagBit('wildcard_mentioned')),
    "Invalid flag: 'wildcard_mentioned'",
  );
  t.equal(
    msgOf(() => editableFlagBit('constructor')),
    "Invalid flag: 'constructor'",
  );
  t.end();
});
