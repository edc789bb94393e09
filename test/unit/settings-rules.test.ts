/**
 * The pure rules of the settings and administration area: time zones, languages, names, e-mail
 * addresses, who sees a real address, profile field definitions and values.
 */
import t, { type Test } from 'tap';
import { emailInvalidReason } from '../../src/lib/email-validation.js';
import { isAvailableLanguage, languageName } from '../../src/lib/languages.js';
import {
  isValidUrl,
  validateProfileField,
  validateProfileValue,
} from '../../src/lib/profile-fields.js';
import { isValidTimezone } from '../../src/lib/timezones.js';
import { canAccessDeliveryEmail, checkSettingsValues } from '../../src/lib/user-settings.js';
import { checkFullName } from '../../src/lib/user-rules.js';
import { checkRealmName, type RealmNameProblem } from '../../src/lib/realm-settings.js';

const throwsMsg = (t: Test, fn: () => unknown, msg: string) => t.throws(fn, { message: msg }, msg);

t.test('time zones: database names, case-sensitive', (t) => {
  for (const tz of [
    'America/New_York',
    'Asia/Kolkata',
    'Asia/Calcutta',
    'Europe/Kyiv',
    'US/Eastern',
    'UTC',
    'Etc/UTC',
    'Etc/GMT+5',
    'America/Argentina/Buenos_Aires',
    'America/Port-au-Prince',
  ])
    t.ok(isValidTimezone(tz), tz);
  for (const tz of [
    '',
    'us/eastern',
    'america/new_york',
    'Mars/Olympus',
    'GMT+05:00',
    'UTC ',
    '+05:00',
  ])
    t.notOk(isValidTimezone(tz), JSON.stringify(tz));
  t.end();
});

t.test('languages', (t) => {
  t.ok(isAvailableLanguage('en'));
  t.ok(isAvailableLanguage('zh-hans'));
  t.ok(isAvailableLanguage('pt_BR'));
  t.notOk(isAvailableLanguage('xx'));
  t.notOk(isAvailableLanguage('toString'), 'not an Object.prototype key');
  t.equal(languageName('de'), 'Deutsch');
  t.end();
});

t.test('settings values beyond their types', (t) => {
  t.doesNotThrow(() =>
    checkSettingsValues({
      default_language: 'fr',
      notification_sound: 'none',
      email_notifications_batching_period_seconds: 604800,
    }),
  );
  throwsMsg(
    t,
    () => checkSettingsValues({ default_language: 'klingon' }),
    'Invalid default_language',
  );
  throwsMsg(
    t,
    () => checkSettingsValues({ notification_sound: 'x' }),
    "Invalid notification sound 'x'",
  );
  throwsMsg(
    t,
    () => checkSettingsValues({ email_notifications_batching_period_seconds: -3 }),
    'Invalid email batching period: -3 seconds',
  );
  t.end();
});

t.test('names', (t) => {
  t.equal(checkFullName('  Ophelia  '), 'Ophelia');
  t.equal(checkFullName('Jo'), 'Jo', 'two characters are enough');
  t.equal(checkFullName('Ærø Ünïcødé 名前'), 'Ærø Ünïcødé 名前');
  t.equal(checkFullName('x'.repeat(100)), 'x'.repeat(100));
  throwsMsg(t, () => checkFullName('x'.repeat(101)), 'Name too long!');
  throwsMsg(t, () => checkFullName('😀'), 'Name too short!');
  for (const bad of ['a*b', 'a`b', 'a\\b', 'a>b', 'a"b', 'a@b', 'a\u0085b', 'a\uFFFEb', 'a\u0000b'])
    throwsMsg(t, () => checkFullName(bad), 'Invalid characters in name!');
  throwsMsg(t, () => checkFullName('King|42'), 'Invalid format!');
  t.equal(checkFullName('King|x'), 'King|x');
  t.end();
});

t.test('realm names: trimmed, 1 to 40 characters, one message for every caller', (t) => {
  const refused: [RealmNameProblem, string][] = [];
  const refuse = (problem: RealmNameProblem, message: string): never => {
    refused.push([problem, message]);
    throw new Error(message);
  };
  t.equal(checkRealmName('  Acme  ', refuse), 'Acme');
  t.equal(checkRealmName('x'.repeat(40), refuse), 'x'.repeat(40));
  t.equal(
    checkRealmName(` ${'\u{1F98A}'.repeat(40)} `, refuse),
    '\u{1F98A}'.repeat(40),
    'code points',
  );
  t.throws(() => checkRealmName(' \n ', refuse));
  t.throws(() => checkRealmName('', refuse));
  t.throws(() => checkRealmName('x'.repeat(41), refuse));
  t.throws(() => checkRealmName('\u{1F98A}'.repeat(41), refuse));
  t.same(refused, [
    ['blank', 'must be 1 to 40 characters'],
    ['blank', 'must be 1 to 40 characters'],
    ['too long', 'must be 1 to 40 characters'],
    ['too long', 'must be 1 to 40 characters'],
  ]);
  t.end();
});

t.test('e-mail addresses', (t) => {
  const open = { emails_restricted_to_domains: false, disallow_disposable_email_addresses: true };
  t.equal(emailInvalidReason('ann@example.com', open), null);
  t.equal(emailInvalidReason('ann', open), 'Invalid address.');
  t.equal(emailInvalidReason('ann@yopmail.com', open), 'Please use your real email address.');
  t.equal(
    emailInvalidReason('ann@yopmail.com', { ...open, disallow_disposable_email_addresses: false }),
    null,
  );
  const restricted = {
    emails_restricted_to_domains: true,
    disallow_disposable_email_addresses: true,
    domains: [{ domain: 'example.com', allow_subdomains: true }],
  };
  t.equal(emailInvalidReason('ann@example.com', restricted), null);
  t.equal(emailInvalidReason('ann@mail.example.com', restricted), null);
  t.equal(emailInvalidReason('ann@example.org', restricted), 'Outside your domain.');
  t.equal(
    emailInvalidReason('ann+x@example.com', restricted),
    'Email addresses containing + are not allowed.',
  );
  t.equal(
    emailInvalidReason('ann@example.com', { ...restricted, domains: [] }),
    'Outside your domain.',
    'no domain configured: none allowed',
  );
  t.end();
});

t.test('who sees a real address', (t) => {
  // visibility: 1 everyone, 2 members, 3 administrators, 4 nobody, 5 moderators
  const table: [number, boolean[]][] = [
    // viewer role: owner, admin, moderator, member, guest
    [1, [true, true, true, true, true]],
    [2, [true, true, true, true, false]],
    [5, [true, true, true, false, false]],
    [3, [true, true, false, false, false]],
    [4, [false, false, false, false, false]],
  ];
  const roles = [100, 200, 300, 400, 600];
  for (const [visibility, expected] of table)
    t.same(
      roles.map((r) => canAccessDeliveryEmail(r, visibility)),
      expected,
      `visibility ${visibility}`,
    );
  t.end();
});

t.test('profile field definitions', (t) => {
  const base = { name: 'F', hint: '', display_in_profile_summary: false };
  t.doesNotThrow(() =>
    validateProfileField({
      ...base,
      type: 7,
      field_data: { subtype: 'custom', url_pattern: 'https://example.com/%(username)s' },
    }),
  );
  t.doesNotThrow(
    () => validateProfileField({ ...base, name: '', type: 7, field_data: { subtype: 'github' } }),
    'a default external account needs no label',
  );
  throwsMsg(
    t,
    () =>
      validateProfileField({
        ...base,
        type: 7,
        field_data: { subtype: 'custom', url_pattern: 'nope/%(username)s' },
      }),
    'field_data["url_pattern"] is not a URL',
  );
  throwsMsg(
    t,
    () =>
      validateProfileField({ ...base, type: 3, field_data: { ' ': { text: 'A', order: '1' } } }),
    "'value' cannot be blank.",
  );
  throwsMsg(
    t,
    () =>
      validateProfileField({
        ...base,
        type: 3,
        field_data: { a: { text: 'A', order: '1', x: '' } },
      }),
    'Unexpected arguments: x',
  );
  throwsMsg(
    t,
    () =>
      validateProfileField({ ...base, type: 6, field_data: {}, display_in_profile_summary: true }),
    'Field type not supported for display in profile summary.',
  );
  t.end();
});

t.test('profile values', (t) => {
  const users = {
    user: (id: number) =>
      ({
        1: { is_active: 1, is_bot: 0 },
        2: { is_active: 0, is_bot: 0 },
        3: { is_active: 1, is_bot: 1 },
      })[id],
  };
  const field = (type: number, field_data = '') => ({ name: 'F', type, field_data });
  t.equal(validateProfileValue(field(4), '2024-02-29', users), '2024-02-29');
  throwsMsg(t, () => validateProfileValue(field(4), '2023-02-29', users), 'F is not a date');
  throwsMsg(t, () => validateProfileValue(field(4), '2023-2-28', users), 'F is not a date');
  t.equal(validateProfileValue(field(6), [1], users), '[1]');
  throwsMsg(t, () => validateProfileValue(field(6), [1, 9, 8], users), 'Invalid user IDs: 9, 8');
  throwsMsg(t, () => validateProfileValue(field(6), [2], users), 'User with ID 2 is deactivated');
  throwsMsg(t, () => validateProfileValue(field(6), [3], users), 'User with ID 3 is a bot');
  throwsMsg(t, () => validateProfileValue(field(6), [1.5], users), 'User IDs[0] is not an integer');
  t.equal(validateProfileValue(field(8), 'they/them', users), 'they/them');
  throwsMsg(
    t,
    () => validateProfileValue(field(3, '{"a":{"text":"A","order":"1"}}'), 'toString', users),
    "'toString' is not a valid choice for 'F'.",
  );
  for (const url of ['https://example.com', 'http://localhost:8080/x', 'ftp://10.0.0.1/f'])
    t.ok(isValidUrl(url), url);
  for (const url of ['example.com', 'mailto:a@b.c', 'https://', 'http://exa mple.com'])
    t.notOk(isValidUrl(url), url);
  t.end();
});
