/**
 * web/state/organization.ts with a fake API: the panel's values read off register's snapshot,
 * a permission shown as its system group or, composed, in words; who may change what (owners'
 * settings apart); the draft (an edit back to the server's value is none, another
 * administrator's change shows through untouched fields), what a save sends (group settings as
 * `{new, old}`, "unlimited", the e-mail visibility to the user defaults) and a refusal kept;
 * the custom emoji's rows and the form's checks. And the reducer's part (web/state/chat.ts):
 * `realm` events of either form keep the realm's name and limits, `realm_user_settings_defaults`
 * events the defaults, and who may add custom emoji.
 */
import t from 'tap';
import type { RegisterResponse, ServerEvent, UserGroup } from '../../src/client/types.js';
import { Role } from '../../src/lib/roles.js';
import {
  customEmojiRows,
  describeGroupSetting,
  editLimitChoices,
  emojiName,
  mayChange,
  newEmojiProblem,
  orgValues,
  OrgDraft,
  PERMISSIONS,
  systemGroupOf,
  type Request,
} from '../../web/state/organization.js';
import { chatState } from '../helpers/web-chat.js';

const sys = (id: number, name: string, members: number[], subgroups: number[] = []) => ({
  id,
  name,
  description: '',
  members,
  is_system_group: true,
  direct_subgroup_ids: subgroups,
});
// Users: 1 owner, 2 administrator, 3 member, 4 guest.
const GROUPS: (UserGroup & { direct_subgroup_ids?: number[] })[] = [
  sys(10, 'role:owners', [1]),
  sys(11, 'role:administrators', [2], [10]),
  sys(12, 'role:moderators', [], [11]),
  sys(13, 'role:fullmembers', [3], [12]),
  sys(14, 'role:members', [3], [12]),
  sys(15, 'role:everyone', [4], [14]),
  sys(16, 'role:nobody', []),
  { id: 20, name: 'reviewers', description: '', members: [3], is_system_group: false },
];
const groups = new Map(GROUPS.map((g) => [g.id, g]));

const SETTINGS: Record<string, unknown> = {
  realm_name: 'Elsinore',
  realm_description: 'The castle',
  realm_default_language: 'en',
  realm_allow_message_editing: true,
  realm_message_content_edit_limit_seconds: 600,
  realm_user_settings_defaults: { email_address_visibility: 1 },
  realm_can_create_public_channel_group: 14,
  realm_can_create_private_channel_group: 14,
  realm_can_invite_users_group: 14,
  realm_create_multiuse_invite_group: 11,
  realm_can_create_groups: 14,
  realm_can_manage_all_groups: 10,
  realm_can_add_custom_emoji_group: 14,
  realm_can_delete_own_message_group: 15,
  realm_can_move_messages_between_topics_group: 15,
  realm_can_move_messages_between_channels_group: { direct_members: [4], direct_subgroups: [20] },
};

t.test('values, system groups and composed values', (t) => {
  const v = orgValues(SETTINGS);
  t.equal(v.name, 'Elsinore');
  t.equal(v.description, 'The castle');
  t.equal(v.message_content_edit_limit_seconds, 600);
  t.equal(v.email_address_visibility, 1);
  t.equal(v.can_create_public_channel_group, 14);
  t.equal(orgValues({}).name, '', 'absent fields have defaults');
  t.equal(orgValues({}).message_content_edit_limit_seconds, null, 'no limit');
  t.equal(orgValues({}).allow_message_editing, true);

  t.equal(systemGroupOf(14, groups), 'role:members');
  t.equal(
    systemGroupOf({ direct_members: [], direct_subgroups: [11] }, groups),
    'role:administrators',
    'a set of just one system group is that group',
  );
  t.equal(
    systemGroupOf({ direct_members: [], direct_subgroups: [] }, groups),
    'role:nobody',
    'an empty set is nobody',
  );
  t.equal(systemGroupOf(20, groups), null, 'a group of the organization’s own');
  t.equal(systemGroupOf({ direct_members: [4], direct_subgroups: [11] }, groups), null);
  t.equal(systemGroupOf(999, groups), null, 'an unknown group');
  t.equal(systemGroupOf(undefined, groups), null);

  const name = (id: number) => ({ 3: 'Hamlet', 4: 'Polonius' })[id] ?? 'Unknown';
  t.equal(
    describeGroupSetting(
      SETTINGS.realm_can_move_messages_between_channels_group as never,
      groups,
      name,
    ),
    'the group “reviewers” and Polonius',
  );
  t.equal(
    describeGroupSetting({ direct_members: [3, 4], direct_subgroups: [11] }, groups, name),
    'Administrators only, Hamlet and Polonius',
  );
  t.equal(
    describeGroupSetting({ direct_members: [], direct_subgroups: [] }, groups, name),
    'Nobody',
  );
  t.equal(describeGroupSetting(20, groups, name), 'the group “reviewers”');
  t.end();
});

t.test('who may change what', (t) => {
  t.ok(mayChange('name', Role.ADMINISTRATOR));
  t.ok(mayChange('can_create_public_channel_group', Role.ADMINISTRATOR));
  t.notOk(mayChange('can_invite_users_group', Role.ADMINISTRATOR), 'owner-only');
  t.notOk(mayChange('can_create_groups', Role.ADMINISTRATOR), 'owner-only');
  t.ok(mayChange('can_invite_users_group', Role.OWNER));
  for (const role of [Role.MODERATOR, Role.MEMBER, Role.GUEST])
    t.notOk(mayChange('name', role), `role ${role} reads only`);
  // Each setting's choices are ones the server accepts: never everyone where it refuses it.
  const create = PERMISSIONS.find((p) => p.key === 'can_create_public_channel_group')!;
  t.same(create.choices, [
    'role:members',
    'role:fullmembers',
    'role:moderators',
    'role:administrators',
  ]);
  const links = PERMISSIONS.find((p) => p.key === 'create_multiuse_invite_group')!;
  t.notOk(links.choices.includes('role:owners'));
  t.end();
});

t.test('edit limits: the usual ones, and a custom current one among them', (t) => {
  t.same(
    editLimitChoices(600).map(([v]) => v),
    [null, 120, 600, 3600, 86_400, 604_800],
  );
  const custom = editLimitChoices(1800);
  t.same(
    custom.map(([v]) => v),
    [null, 120, 600, 1800, 3600, 86_400, 604_800],
  );
  t.equal(custom.find(([v]) => v === 1800)![1], '30 minutes');
  t.equal(editLimitChoices(null).length, 6);
  t.end();
});

type Call = { method: string; path: string; params: Record<string, unknown> | undefined };

function fake(fail?: (c: Call) => string | null) {
  const calls: Call[] = [];
  const request: Request = <T>(method: string, path: string, params?: Record<string, unknown>) => {
    const c = { method, path, params };
    calls.push(c);
    const refusal = fail?.(c);
    return refusal ? Promise.reject(new Error(refusal)) : Promise.resolve({} as T);
  };
  return { calls, request };
}

t.test('the draft: edits, live values, what a save sends', async (t) => {
  const server = { ...SETTINGS };
  const draft = new OrgDraft(
    () => orgValues(server),
    () => groups,
  );
  let changes = 0;
  draft.subscribe(() => changes++);

  draft.set('name', 'Elsinore Castle');
  t.equal(draft.value('name'), 'Elsinore Castle');
  t.same(draft.dirty, ['name']);
  draft.set('name', 'Elsinore');
  t.same(draft.dirty, [], 'back to the server’s value: no edit');
  t.ok(changes >= 2, 'each edit is told');

  // Another administrator's change shows through a field not edited, not through an edited one.
  draft.set('description', 'Mine');
  server.realm_name = 'Helsingør';
  server.realm_description = 'Theirs';
  t.equal(draft.value('name'), 'Helsingør');
  t.equal(draft.value('description'), 'Mine');

  draft.setGroup('can_create_public_channel_group', 'role:administrators');
  draft.set('message_content_edit_limit_seconds', null);
  draft.set('email_address_visibility', 3);
  t.same(draft.requests(), {
    realm: {
      description: 'Mine',
      can_create_public_channel_group: { new: 11, old: 14 },
      message_content_edit_limit_seconds: 'unlimited',
    },
    defaults: { email_address_visibility: 3 },
  });

  const api = fake();
  t.ok(await draft.save(api.request));
  t.same(
    api.calls.map((c) => `${c.method} ${c.path}`),
    ['PATCH /realm', 'PATCH /realm/user_settings_defaults'],
  );
  t.equal(draft.saved, 'Saved: 4 changes.');
  t.same(draft.dirty, [], 'saved edits are dropped');
  t.equal(draft.value('description'), 'Theirs', 'the server’s value shows again');

  t.ok(await draft.save(api.request), 'nothing to save');
  t.equal(api.calls.length, 2, 'and nothing sent');
});

t.test('a refused save keeps the edits and the reason', async (t) => {
  const draft = new OrgDraft(
    () => orgValues(SETTINGS),
    () => groups,
  );
  draft.set('can_invite_users_group', 11);
  const api = fake(() => 'Must be an organization owner');
  t.notOk(await draft.save(api.request));
  t.equal(draft.error, 'Must be an organization owner');
  t.same(draft.dirty, ['can_invite_users_group']);
  t.equal(draft.busy, false);

  draft.set('name', '   ');
  const sent = api.calls.length;
  t.notOk(await draft.save(api.request));
  t.equal(draft.error, 'The organization needs a name.');
  t.equal(api.calls.length, sent, 'an empty name is not sent');

  draft.discard();
  t.same(draft.dirty, []);
  t.equal(draft.error, null);
});

t.test('custom emoji rows and the form’s checks', (t) => {
  const emoji = {
    '1': { id: '1', name: 'parrot', source_url: '/p.gif', deactivated: false, author_id: 3 },
    '2': { id: '2', name: 'old', source_url: '/o.png', deactivated: true, author_id: 3 },
    '3': { id: '3', name: 'beer', source_url: '/b.png', deactivated: false, author_id: 2 },
    '4': { id: '4', name: 'anon', source_url: '/a.png', deactivated: false, author_id: null },
  };
  const member = customEmojiRows(emoji, { user_id: 3, role: Role.MEMBER });
  t.same(
    member.map((r) => r.name),
    ['anon', 'beer', 'parrot'],
    'active ones, by name',
  );
  t.same(
    member.map((r) => r.canDelete),
    [false, false, true],
    'a member deletes only their own',
  );
  const admin = customEmojiRows(emoji, { user_id: 2, role: Role.ADMINISTRATOR });
  t.ok(
    admin.every((r) => r.canDelete),
    'an administrator deletes any',
  );

  t.equal(emojiName('  party parrot '), 'party_parrot');
  t.equal(newEmojiProblem(' ', { type: 'image/png' }), 'Give the emoji a name.');
  t.equal(newEmojiProblem('x', null), 'Choose an image for the emoji.');
  t.match(newEmojiProblem('x', { type: 'text/plain' }), /must be an image/);
  t.equal(newEmojiProblem('x', { type: 'image/gif' }), null);
  t.equal(
    newEmojiProblem('Bad Name!', { type: 'image/gif' }),
    null,
    'the name rules are the server’s',
  );
  t.end();
});

const chat = (o: Partial<RegisterResponse> & Record<string, unknown>, self = 3, role = 400) =>
  chatState({ realm_user_groups: GROUPS, ...o }, self, role);
let id = 0;
const ev = (e: Record<string, unknown>) => ({ id: id++, ...e }) as unknown as ServerEvent;

t.test('the reducer keeps the realm’s fields and the user defaults', (t) => {
  const s = chat({ ...SETTINGS });
  t.equal(s.realm.name, 'Elsinore');
  const rev = s.rev.settings.value;
  s.apply([ev({ type: 'realm', op: 'update', property: 'name', value: 'Helsingør' })]);
  t.equal(s.realm.name, 'Helsingør', 'the op update form');
  s.apply([
    ev({
      type: 'realm',
      op: 'update_dict',
      property: 'default',
      data: {
        name: 'Kronborg',
        message_content_edit_limit_seconds: null,
        allow_message_editing: false,
      },
    }),
  ]);
  t.equal(s.realm.name, 'Kronborg', 'the update_dict form');
  t.equal(s.realm.editLimitSeconds, null);
  t.equal(s.realm.allowEditing, false);
  t.equal(orgValues(s.realm.settings).name, 'Kronborg', 'the panel reads the same');
  s.apply([
    ev({
      type: 'realm_user_settings_defaults',
      op: 'update',
      property: 'email_address_visibility',
      value: 4,
    }),
  ]);
  t.equal(orgValues(s.realm.settings).email_address_visibility, 4);
  t.ok(s.rev.settings.value >= rev + 3, 'each one redraws');
  t.end();
});

t.test('who may add custom emoji', (t) => {
  t.ok(chat({ ...SETTINGS }).canAddCustomEmoji(), 'a member, members allowed');
  const admins = chat({ ...SETTINGS, realm_can_add_custom_emoji_group: 11 });
  t.notOk(admins.canAddCustomEmoji(), 'a member, administrators only');
  admins.apply([
    ev({ type: 'realm', op: 'update', property: 'can_add_custom_emoji_group', value: 14 }),
  ]);
  t.ok(admins.canAddCustomEmoji(), 'allowed again, live');
  const guest = chat({ ...SETTINGS, realm_can_add_custom_emoji_group: 15 }, 4, 600);
  t.notOk(guest.canAddCustomEmoji(), 'never a guest');
  t.end();
});
