/**
 * Group-setting values (src/lib/group-settings.ts): normalization, equality, the `{new, old}`
 * check, and the values each setting refuses — the realm settings' lists from spec/API.md
 * included.
 */
import t from 'tap';
import {
  CHANNEL_GROUP_SETTING_CONFIG,
  REALM_GROUP_SETTING_CONFIG,
  USER_GROUP_SETTING_CONFIG,
  checkGroupSettingChange,
  groupSettingValuesEqual,
  normalizeGroupSettingValue,
  validateGroupSettingValue,
  type GroupLookup,
} from '../../src/lib/group-settings.js';
import { JsonableError } from '../../src/lib/errors.js';

const SYSTEM = [
  'role:internet',
  'role:everyone',
  'role:members',
  'role:fullmembers',
  'role:moderators',
  'role:administrators',
  'role:owners',
  'role:nobody',
] as const;
const groups = new Map<
  number,
  { id: number; name: string; is_system_group: number; deactivated: number }
>();
SYSTEM.forEach((name, i) =>
  groups.set(i + 1, { id: i + 1, name, is_system_group: 1, deactivated: 0 }),
);
groups.set(20, { id: 20, name: 'team', is_system_group: 0, deactivated: 0 });
groups.set(21, { id: 21, name: 'old team', is_system_group: 0, deactivated: 1 });
const sys = (name: (typeof SYSTEM)[number]) => SYSTEM.indexOf(name) + 1;
const lookup: GroupLookup = {
  group: (id) => groups.get(id),
  user: (id) => (id === 100 ? { is_active: 1 } : id === 101 ? { is_active: 0 } : undefined),
  systemGroupId: (name) => sys(name),
};

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof JsonableError) return `${err.code}: ${err.message}`;
    throw err;
  }
  return 'accepted';
}

t.test('normalization and equality', (t) => {
  const nobody = sys('role:nobody');
  t.equal(normalizeGroupSettingValue({ direct_members: [], direct_subgroups: [20] }, nobody), 20);
  t.equal(normalizeGroupSettingValue({ direct_members: [], direct_subgroups: [] }, nobody), nobody);
  t.same(
    normalizeGroupSettingValue({ direct_members: [3, 1, 3], direct_subgroups: [20] }, nobody),
    {
      direct_members: [1, 3],
      direct_subgroups: [20],
    },
  );
  t.ok(
    groupSettingValuesEqual(
      { direct_members: [1, 2], direct_subgroups: [] },
      { direct_members: [2, 1], direct_subgroups: [] },
    ),
  );
  t.notOk(groupSettingValuesEqual(1, { direct_members: [], direct_subgroups: [1] }));
  t.equal(checkGroupSettingChange(20, 20, undefined, nobody), false, 'unchanged');
  t.equal(checkGroupSettingChange(20, 5, 20, nobody), true);
  t.equal(
    refusal(() => checkGroupSettingChange(20, 5, 4, nobody)),
    "EXPECTATION_MISMATCH: 'old' value does not match the expected value.",
  );
  t.end();
});

t.test('what each kind of setting refuses', (t) => {
  const v = (
    name: string,
    config: Parameters<typeof validateGroupSettingValue>[2],
    value: Parameters<typeof validateGroupSettingValue>[3],
  ) => refusal(() => validateGroupSettingValue(lookup, name, config, value));
  const R = REALM_GROUP_SETTING_CONFIG;
  for (const name of [
    'can_create_public_channel_group',
    'can_create_private_channel_group',
  ] as const) {
    for (const g of ['role:internet', 'role:everyone', 'role:owners', 'role:nobody'] as const)
      t.equal(
        v(name, R[name], sys(g)),
        `BAD_REQUEST: '${name}' setting cannot be set to '${g}' group.`,
      );
    t.equal(v(name, R[name], sys('role:members')), 'accepted');
    t.equal(v(name, R[name], 20), 'accepted');
  }
  t.equal(
    v('create_multiuse_invite_group', R.create_multiuse_invite_group, 20),
    "SYSTEM_GROUP_REQUIRED: 'create_multiuse_invite_group' must be a system user group.",
  );
  t.equal(
    v('create_multiuse_invite_group', R.create_multiuse_invite_group, sys('role:owners')),
    "BAD_REQUEST: 'create_multiuse_invite_group' setting cannot be set to 'role:owners' group.",
  );
  t.equal(
    v('create_multiuse_invite_group', R.create_multiuse_invite_group, sys('role:administrators')),
    'accepted',
  );
  t.equal(
    v('can_access_all_users_group', R.can_access_all_users_group, sys('role:moderators')),
    "BAD_REQUEST: 'can_access_all_users_group' setting cannot be set to 'role:moderators' group.",
  );
  t.equal(
    v('can_create_web_public_channel_group', R.can_create_web_public_channel_group, {
      direct_members: [100],
      direct_subgroups: [],
    }),
    "SYSTEM_GROUP_REQUIRED: 'can_create_web_public_channel_group' must be a system user group.",
  );
  t.equal(
    v('can_mention_group', USER_GROUP_SETTING_CONFIG.can_mention_group, sys('role:owners')),
    "BAD_REQUEST: 'can_mention_group' setting cannot be set to 'role:owners' group.",
  );
  const C = CHANNEL_GROUP_SETTING_CONFIG;
  t.equal(v('can_send_message_group', C.can_send_message_group, sys('role:everyone')), 'accepted');
  t.equal(
    v('can_subscribe_group', C.can_subscribe_group, sys('role:everyone')),
    "BAD_REQUEST: 'can_subscribe_group' setting cannot be set to 'role:everyone' group.",
  );
  t.equal(
    v('can_send_message_group', C.can_send_message_group, 99),
    'BAD_REQUEST: Invalid user group',
  );
  t.equal(
    v('can_send_message_group', C.can_send_message_group, 21),
    'BAD_REQUEST: User group is deactivated.',
  );
  t.equal(
    v('can_send_message_group', C.can_send_message_group, {
      direct_members: [101],
      direct_subgroups: [],
    }),
    'BAD_REQUEST: Invalid user ID: 101',
  );
  t.equal(
    v('can_send_message_group', C.can_send_message_group, {
      direct_members: [100],
      direct_subgroups: [21],
    }),
    'BAD_REQUEST: User group is deactivated.',
  );
  t.equal(
    v('can_send_message_group', C.can_send_message_group, {
      direct_members: [100],
      direct_subgroups: [99],
    }),
    'BAD_REQUEST: Invalid user group ID: 99',
  );
  t.equal(
    v('can_send_message_group', C.can_send_message_group, {
      direct_members: [100],
      direct_subgroups: [20],
    }),
    'accepted',
  );
  t.end();
});
