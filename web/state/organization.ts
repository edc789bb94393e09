/**
 * The administrators' Organization and Custom emoji settings panels (web/app/organization.tsx):
 * framework-free state over the API, given a `request` function (the app passes the typed
 * client's; tests a fake).
 *
 * Organization: the realm's name and description, and the permissions a team sets first. Each
 * permission is a group-setting value (a group id, or `{direct_members, direct_subgroups}`): when
 * it is one system group (a role and those above it), the panel offers the system groups the
 * setting accepts, as the reference's dropdowns do; any other value (a group of the
 * organization's own, a set of people and groups) is shown as it is, read-only. What the user
 * changed is held in an `OrgDraft` until saved; every other field shows the server's value as the
 * realm events keep it, so that another administrator's change appears at once.
 *
 * Custom emoji: the rows of the list (who added each, whether this user may delete it), and the
 * checks made before an upload (the server checks again: its name and size errors are shown).
 */
import { LANGUAGES } from '../../src/lib/languages.js';
import { Role, SYSTEM_GROUP_CHOICES, type OfferedSystemGroup } from '../../src/lib/roles.js';
import type { RealmEmoji } from '../../src/client/types.js';
import type { GroupSetting, GroupsById } from './groups.js';
import type { Request } from './bots.js';

export type { Request } from './bots.js';

export type SystemGroupName = OfferedSystemGroup;

/** How a permission's choice reads: each role group holds the roles above it too. */
export const ROLE_GROUP_LABELS: Readonly<Record<SystemGroupName, string>> = {
  'role:everyone': 'Everyone, guests included',
  'role:members': 'Members, moderators and administrators',
  'role:fullmembers': 'Full members, moderators and administrators',
  'role:moderators': 'Moderators and administrators',
  'role:administrators': 'Administrators only',
  'role:owners': 'Owners only',
  'role:nobody': 'Nobody',
};

const ALL = SYSTEM_GROUP_CHOICES;
const without = (...names: SystemGroupName[]) => ALL.filter((g) => !names.includes(g));

export type Permission = {
  /** The setting's name in PATCH /realm (register's is `realm_<key>`). */
  key: string;
  label: string;
  /** Only owners may change it (the others see it read-only). */
  ownerOnly: boolean;
  /** The system groups the server accepts for it, in the order offered. */
  choices: readonly SystemGroupName[];
};

export type PermissionSection = { title: string; settings: Permission[] };

/**
 * The permissions of the panel, by section. The choices follow what the server accepts for
 * each (src/lib/group-settings.ts): channel creation never by guests, owners alone or nobody;
 * invitation links by a system group that is not the owners'; and so on.
 */
export const PERMISSION_SECTIONS: readonly PermissionSection[] = [
  {
    title: 'Channels',
    settings: [
      {
        key: 'can_create_public_channel_group',
        label: 'Who can create public channels',
        ownerOnly: false,
        choices: without('role:everyone', 'role:owners', 'role:nobody'),
      },
      {
        key: 'can_create_private_channel_group',
        label: 'Who can create private channels',
        ownerOnly: false,
        choices: without('role:everyone', 'role:owners', 'role:nobody'),
      },
    ],
  },
  {
    title: 'Joining the organization',
    settings: [
      {
        key: 'can_invite_users_group',
        label: 'Who can send invitations by e-mail',
        ownerOnly: true,
        choices: without('role:everyone'),
      },
      {
        key: 'create_multiuse_invite_group',
        label: 'Who can create invitation links',
        ownerOnly: true,
        choices: without('role:everyone', 'role:owners'),
      },
    ],
  },
  {
    title: 'Groups and custom emoji',
    settings: [
      {
        key: 'can_create_groups',
        label: 'Who can create user groups',
        ownerOnly: true,
        choices: without('role:everyone'),
      },
      {
        key: 'can_manage_all_groups',
        label: 'Who can manage every user group',
        ownerOnly: true,
        choices: without('role:everyone', 'role:nobody'),
      },
      {
        key: 'can_add_custom_emoji_group',
        label: 'Who can add custom emoji',
        ownerOnly: false,
        choices: without('role:everyone'),
      },
    ],
  },
  {
    title: 'Messages',
    settings: [
      {
        key: 'can_delete_own_message_group',
        label: 'Who can delete their own messages',
        ownerOnly: false,
        choices: ALL,
      },
      {
        key: 'can_move_messages_between_topics_group',
        label: 'Who can move messages to another topic',
        ownerOnly: false,
        choices: ALL,
      },
      {
        key: 'can_move_messages_between_channels_group',
        label: 'Who can move messages to another channel',
        ownerOnly: false,
        choices: without('role:everyone'),
      },
    ],
  },
];

export const PERMISSIONS: readonly Permission[] = PERMISSION_SECTIONS.flatMap((s) => s.settings);

/** How long after sending its author may edit a message (null: any time). */
export const EDIT_LIMITS: readonly [number | null, string][] = [
  [null, 'Any time'],
  [120, '2 minutes'],
  [600, '10 minutes'],
  [3600, '1 hour'],
  [86_400, '1 day'],
  [604_800, '1 week'],
];

/** The edit-limit choices, with the current value among them when it is not a usual one. */
export function editLimitChoices(current: number | null): [number | null, string][] {
  const choices = [...EDIT_LIMITS];
  if (!choices.some(([v]) => v === current) && current !== null) {
    const minutes = Math.round(current / 60);
    choices.push([current, minutes === 1 ? '1 minute' : `${minutes} minutes`]);
    choices.sort((a, b) => (a[0] ?? Infinity) - (b[0] ?? Infinity));
    choices.unshift(choices.pop()!); // "Any time" first
  }
  return choices;
}

/**
 * Who can see a new user's e-mail address (the realm's default of the user setting
 * `email_address_visibility`, PATCH /realm/user_settings_defaults): the API's numbers.
 */
export const EMAIL_VISIBILITY: readonly [number, string][] = [
  [1, 'Everyone, guests included'],
  [2, 'Members, moderators and administrators'],
  [5, 'Moderators and administrators'],
  [3, 'Administrators only'],
  [4, 'Nobody'],
];

/** The interface languages an organization may choose, by name. */
export const LANGUAGE_CHOICES: readonly [string, string][] = Object.entries(LANGUAGES).sort(
  (a, b) => a[1].localeCompare(b[1]),
);

/** The fields of the panel, as the server has them now. */
export type OrgValues = Record<string, unknown> & {
  name: string;
  description: string;
  default_language: string;
  allow_message_editing: boolean;
  message_content_edit_limit_seconds: number | null;
  email_address_visibility: number;
};

/** Profile fields; the others are permissions. */
export const PROFILE_KEYS = ['name', 'description'] as const;
/** Fields other than group settings in the permissions form. */
export const OTHER_KEYS = [
  'default_language',
  'allow_message_editing',
  'message_content_edit_limit_seconds',
  'email_address_visibility',
] as const;

/** The panel's fields from register's snapshot as the realm events keep it (`realm_*` keys). */
export function orgValues(settings: Readonly<Record<string, unknown>>): OrgValues {
  const defaults = (settings.realm_user_settings_defaults ?? {}) as Record<string, unknown>;
  const limit = settings.realm_message_content_edit_limit_seconds;
  const values: OrgValues = {
    name: typeof settings.realm_name === 'string' ? settings.realm_name : '',
    description: typeof settings.realm_description === 'string' ? settings.realm_description : '',
    default_language:
      typeof settings.realm_default_language === 'string' ? settings.realm_default_language : 'en',
    allow_message_editing: settings.realm_allow_message_editing !== false,
    message_content_edit_limit_seconds: typeof limit === 'number' ? limit : null,
    email_address_visibility:
      typeof defaults.email_address_visibility === 'number' ? defaults.email_address_visibility : 1,
  };
  for (const p of PERMISSIONS) values[p.key] = settings[`realm_${p.key}`];
  return values;
}

/** The system group a value is (its id, a set of just that group, or an empty set), or null. */
export function systemGroupOf(
  value: GroupSetting | undefined,
  groups: GroupsById,
): SystemGroupName | null {
  let id: number | undefined;
  if (
    typeof value === 'object' &&
    value.direct_members.length + value.direct_subgroups.length === 0
  )
    return 'role:nobody'; // no one: what the server makes of the nobody group
  if (typeof value === 'number') id = value;
  else if (value && value.direct_members.length === 0 && value.direct_subgroups.length === 1)
    id = value.direct_subgroups[0];
  const g = id === undefined ? undefined : groups.get(id);
  if (!g || g.is_system_group !== true || !(g.name in ROLE_GROUP_LABELS)) return null;
  return g.name as SystemGroupName;
}

/** The id of a system group, by name. */
export function systemGroupId(name: SystemGroupName, groups: GroupsById): number | undefined {
  for (const g of groups.values()) if (g.is_system_group === true && g.name === name) return g.id;
  return undefined;
}

/** A value that is not one system group, in words: its groups and people. */
export function describeGroupSetting(
  value: GroupSetting | undefined,
  groups: GroupsById,
  userName: (id: number) => string,
): string {
  if (value === undefined) return 'Not set';
  const groupName = (id: number) => {
    const g = groups.get(id);
    if (!g) return 'an unknown group';
    if (g.is_system_group === true && g.name in ROLE_GROUP_LABELS)
      return ROLE_GROUP_LABELS[g.name as SystemGroupName];
    return `the group “${g.name}”`;
  };
  if (typeof value === 'number') return groupName(value);
  const parts = [
    ...value.direct_subgroups.map(groupName),
    ...value.direct_members.map((id) => userName(id)),
  ];
  if (parts.length === 0) return ROLE_GROUP_LABELS['role:nobody'];
  if (parts.length === 1) return parts[0]!;
  return `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

/** Whether a user of this role may change this field (the server checks again). */
export function mayChange(key: string, role: number): boolean {
  if (role > Role.ADMINISTRATOR) return false;
  const p = PERMISSIONS.find((x) => x.key === key);
  return p?.ownerOnly === true ? role <= Role.OWNER : true;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * What the user changed in one form and not saved yet: a field shows its edit, or the server's
 * value as it is now. An edit back to the server's value is no edit. Saving sends only the
 * edits: the realm's fields by PATCH /realm (a group setting as `{new, old}`, so that a change
 * made meanwhile by someone else is refused rather than overwritten), the e-mail visibility by
 * PATCH /realm/user_settings_defaults.
 */
export class OrgDraft {
  private readonly edits = new Map<string, unknown>();
  error: string | null = null;
  /** What the last save did, for the view to say. */
  saved: string | null = null;
  busy = false;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly current: () => OrgValues,
    private readonly groups: () => GroupsById,
  ) {}

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    for (const fn of this.listeners) fn();
  }

  value<K extends string>(key: K): unknown {
    return this.edits.has(key) ? this.edits.get(key) : this.current()[key];
  }

  set(key: string, value: unknown): void {
    if (same(value, this.current()[key])) this.edits.delete(key);
    else this.edits.set(key, value);
    this.saved = null;
    this.changed();
  }

  /** A permission set to a system group (by name). */
  setGroup(key: string, name: SystemGroupName): void {
    const id = systemGroupId(name, this.groups());
    if (id !== undefined) this.set(key, id);
  }

  /** The fields edited (and still different from the server's value). */
  get dirty(): string[] {
    const now = this.current();
    return [...this.edits.keys()].filter((k) => !same(this.edits.get(k), now[k]));
  }

  discard(): void {
    this.edits.clear();
    this.error = null;
    this.saved = null;
    this.changed();
  }

  /** The requests that save the edits: PATCH /realm's and the user defaults' parameters. */
  requests(): { realm: Record<string, unknown>; defaults: Record<string, unknown> } {
    const now = this.current();
    const realm: Record<string, unknown> = {};
    const defaults: Record<string, unknown> = {};
    for (const key of this.dirty) {
      const v = this.edits.get(key);
      if (key === 'email_address_visibility') defaults[key] = v;
      else if (PERMISSIONS.some((p) => p.key === key)) realm[key] = { new: v, old: now[key] };
      else if (key === 'message_content_edit_limit_seconds') realm[key] = v ?? 'unlimited';
      else realm[key] = typeof v === 'string' && key !== 'default_language' ? v.trim() : v;
    }
    return { realm, defaults };
  }

  /** Sends the edits; true when all were saved (the edits are then dropped). */
  async save(request: Request): Promise<boolean> {
    const { realm, defaults } = this.requests();
    const count = Object.keys(realm).length + Object.keys(defaults).length;
    if (count === 0) return true;
    if (realm.name !== undefined && realm.name === '') {
      this.error = 'The organization needs a name.';
      this.changed();
      return false;
    }
    this.busy = true;
    this.error = null;
    this.saved = null;
    this.changed();
    try {
      if (Object.keys(realm).length > 0) {
        await request('PATCH', '/realm', realm);
        for (const k of Object.keys(realm)) this.edits.delete(k);
      }
      if (Object.keys(defaults).length > 0) {
        await request('PATCH', '/realm/user_settings_defaults', defaults);
        for (const k of Object.keys(defaults)) this.edits.delete(k);
      }
      this.saved = count === 1 ? 'Saved: 1 change.' : `Saved: ${count} changes.`;
      return true;
    } catch (e) {
      this.error = message(e);
      return false;
    } finally {
      this.busy = false;
      this.changed();
    }
  }
}

// ---- Custom emoji ---------------------------------------------------------------------------

export type EmojiRow = {
  name: string;
  url: string;
  authorId: number | null;
  /** This user may delete it: its author, or an administrator. */
  canDelete: boolean;
};

/** The organization's active custom emoji, by name. */
export function customEmojiRows(
  emoji: Readonly<Record<string, RealmEmoji>>,
  me: { user_id: number; role: number },
): EmojiRow[] {
  const admin = me.role <= Role.ADMINISTRATOR;
  return Object.values(emoji)
    .filter((e) => !e.deactivated)
    .map((e) => ({
      name: e.name,
      url: e.source_url,
      authorId: e.author_id ?? null,
      canDelete: admin || (e.author_id ?? null) === me.user_id,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The name as the server stores it (spaces are underscores). */
export function emojiName(raw: string): string {
  return raw.trim().replaceAll(' ', '_');
}

/**
 * Why an emoji cannot be sent, or null: only what the form must have (a name, one image); the
 * name's rules, the image's kind and size are the server's to refuse, with its own words.
 */
export function newEmojiProblem(raw: string, file: { type: string } | null): string | null {
  if (emojiName(raw) === '') return 'Give the emoji a name.';
  if (!file) return 'Choose an image for the emoji.';
  if (file.type !== '' && !file.type.startsWith('image/'))
    return 'The emoji must be an image (PNG, GIF, JPEG or WebP).';
  return null;
}
