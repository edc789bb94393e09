/**
 * Pure rules of invitations and drafts: the invitee list, confirmation keys, the "equal or stricter
 * role" rule, and how draft content and topics are normalized.
 */
import t from 'tap';
import {
  checkInviteRole,
  generateConfirmationKey,
  invitationPath,
  isConfirmationKey,
  parseInviteeEmails,
} from '../../src/lib/invitations.js';
import { normalizeBody, truncateContent, truncateTopic } from '../../src/lib/drafts.js';

t.test('parseInviteeEmails: commas, newlines, names, duplicates', (t) => {
  t.same(parseInviteeEmails('a@x.org'), ['a@x.org']);
  t.same(parseInviteeEmails(' a@x.org ,\nBob <b@x.org>,a@x.org, ,'), ['a@x.org', '', 'b@x.org']);
  t.same(parseInviteeEmails('"Smith, Jo" <jo@x.org>'), ['"Smith', 'jo@x.org']);
  t.end();
});

t.test('confirmation keys: 24 lower-case base32 characters, all different', (t) => {
  const keys = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const k = generateConfirmationKey();
    t.ok(isConfirmationKey(k), k);
    keys.add(k);
  }
  t.equal(keys.size, 200);
  t.notOk(isConfirmationKey('ABCDEFGHIJKLMNOPQRSTUVWX'));
  t.notOk(isConfirmationKey('abcdefghijklmnopqrstuvw'));
  t.notOk(isConfirmationKey('abcdefghijklmnopqrstuvw1'));
  t.equal(invitationPath(true, 'k'), '/join/k/');
  t.equal(invitationPath(false, 'k'), '/accounts/do_confirm/k/');
  t.end();
});

t.test('checkInviteRole: equal or stricter than the caller’s role', (t) => {
  const roles = [100, 200, 300, 400, 600];
  for (const caller of roles) {
    for (const invited of roles) {
      const ok = invited >= caller;
      if (ok) t.doesNotThrow(() => checkInviteRole(invited, caller), `${caller} → ${invited}`);
      else
        t.throws(
          () => checkInviteRole(invited, caller),
          {
            message:
              invited === 100
                ? 'Must be an organization owner'
                : 'Must be an organization administrator',
          },
          `${caller} ↛ ${invited}`,
        );
    }
  }
  t.end();
});

t.test('draft content and topics', (t) => {
  t.equal(normalizeBody('\n\n  text  \n\t'), '  text');
  t.throws(() => normalizeBody(' \n '), { message: 'Message must not be empty' });
  t.throws(() => normalizeBody('a\u0000b'), { message: 'Message must not contain null bytes' });
  t.equal(truncateContent('😀'.repeat(5), 4, '.'), '😀😀😀.', 'code points, not UTF-16 units');
  t.equal(truncateContent('abcd', 4, '.'), 'abcd');
  t.equal(truncateTopic('x'.repeat(60)), 'x'.repeat(60));
  t.equal(truncateTopic('x'.repeat(61)), 'x'.repeat(57) + '...');
  t.end();
});
