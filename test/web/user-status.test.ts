/**
 * web/state/user-status.ts: statuses from register's snapshot and `user_status` events (only
 * what an event carries changes; '' clears), and what the status dialog sends (only what
 * differs, the text trimmed to the server's limit).
 */
import t from 'tap';
import {
  applyStatus,
  cleanText,
  hasStatus,
  MAX_STATUS_TEXT,
  NO_STATUS,
  PRESETS,
  statusRequest,
  UserStatuses,
  type Status,
} from '../../web/state/user-status.js';

const palm = { name: 'palm_tree', code: '1f334', type: 'unicode_emoji' };
const busy = { name: 'working_on_it', code: '1f6e0', type: 'unicode_emoji' };

t.test("UserStatuses: register's snapshot", (t) => {
  const s = new UserStatuses({
    '2': { status_text: 'out to lunch' },
    '3': { emoji_name: 'palm_tree', emoji_code: '1f334', reaction_type: 'unicode_emoji' },
    '4': { away: true },
    x: { status_text: 'not a user id' },
  });
  t.same(s.get(2), { text: 'out to lunch', emoji: null });
  t.same(s.get(3), { text: '', emoji: palm });
  t.equal(s.get(4), NO_STATUS, 'away alone is no status (it is presence)');
  t.equal(s.get(5), NO_STATUS);
  t.same(new UserStatuses().get(2), NO_STATUS, 'no snapshot');
  t.end();
});

t.test('UserStatuses: events change only what they carry', (t) => {
  const s = new UserStatuses();
  t.ok(s.apply(2, { status_text: 'Vacationing' }), 'a text');
  t.ok(
    s.apply(2, { emoji_name: 'palm_tree', emoji_code: '1f334', reaction_type: 'unicode_emoji' }),
  );
  t.same(s.get(2), { text: 'Vacationing', emoji: palm }, 'the emoji joins the text');
  t.notOk(s.apply(2, { status_text: 'Vacationing' }), 'the same text: nothing to draw');
  t.notOk(s.apply(2, { away: false }), 'away: not a status change');
  t.ok(s.apply(2, { status_text: '' }));
  t.same(s.get(2), { text: '', emoji: palm }, "'' clears the text, the emoji stays");
  t.ok(
    s.apply(2, { emoji_name: '', emoji_code: '', reaction_type: 'unicode_emoji' }),
    'the emoji cleared',
  );
  t.equal(s.get(2), NO_STATUS, 'nothing left: no status');
  t.notOk(hasStatus(s.get(2)));
  t.end();
});

t.test('applyStatus: a custom emoji; the same object when nothing changes', (t) => {
  const old: Status = { text: 'Busy', emoji: busy };
  t.equal(applyStatus(old, {}), old);
  t.same(applyStatus(old, { emoji_name: 'octo', emoji_code: '7', reaction_type: 'realm_emoji' }), {
    text: 'Busy',
    emoji: { name: 'octo', code: '7', type: 'realm_emoji' },
  });
  t.end();
});

t.test('statusRequest: only what differs, or nothing', (t) => {
  t.equal(statusRequest(NO_STATUS, NO_STATUS), null);
  t.equal(statusRequest(NO_STATUS, { text: '   ', emoji: null }), null, 'spaces are no text');
  t.same(statusRequest(NO_STATUS, { text: ' Busy ', emoji: busy }), {
    status_text: 'Busy',
    emoji_name: 'working_on_it',
    emoji_code: '1f6e0',
    reaction_type: 'unicode_emoji',
  });
  const now: Status = { text: 'Busy', emoji: busy };
  t.equal(statusRequest(now, { text: 'Busy', emoji: { ...busy } }), null, 'the same emoji');
  t.same(statusRequest(now, { text: 'Busy', emoji: palm }), {
    emoji_name: 'palm_tree',
    emoji_code: '1f334',
    reaction_type: 'unicode_emoji',
  });
  t.same(statusRequest(now, { text: 'Out sick', emoji: busy }), { status_text: 'Out sick' });
  t.same(statusRequest(now, NO_STATUS), { status_text: '', emoji_name: '' }, 'Clear: both emptied');
  t.end();
});

t.test("cleanText: trimmed, at most the server's limit (in characters)", (t) => {
  t.equal(cleanText('  lunch  '), 'lunch');
  const long = '🌴'.repeat(MAX_STATUS_TEXT + 5);
  t.equal([...cleanText(long)].length, MAX_STATUS_TEXT, 'astral characters count once');
  t.end();
});

t.test("PRESETS: the reference's common statuses, each with an emoji", (t) => {
  t.same(
    PRESETS.map((p) => p.text),
    [
      'Busy',
      'In a meeting',
      'Commuting',
      'Out sick',
      'Vacationing',
      'Working remotely',
      'At the office',
    ],
  );
  t.ok(PRESETS.every((p) => /^[a-z_]+$/.test(p.emoji)));
  t.end();
});
