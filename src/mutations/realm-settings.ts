/**
 * Changing realm (organization) settings: the realm command `realm.update_settings`. Reference:
 * actions/realm_settings.py do_set_realm_property / do_change_realm_permission_group_setting.
 * PATCH /realm (src/mutations/realm-admin.ts) checks permissions and values and then calls it;
 * tests, benches and admin tools call it through realm.ask.
 *
 * Everyone active in the realm is told, after commit: one `realm` `update_dict` event (property
 * "default") carrying every changed setting that event form covers, and a `realm` `update` event
 * ({property, value}) for each other changed setting, as the reference.
 */
import { JsonableError } from '../lib/errors.js';
import { longerThan } from '../lib/strings.js';
import {
  checkRealmName,
  isRealmGroupSettingName,
  MAX_REALM_DESCRIPTION_LENGTH,
  REALM_GROUP_SETTING_DEFAULTS,
  REALM_SETTING_DEFAULTS,
  type GroupSettingValue,
  type RealmGroupSettingName,
  type RealmSettingName,
  type RealmSettings,
  type StoredRealmSettings,
} from '../lib/realm-settings.js';
import { authenticationMethods, deprecatedPolicies } from '../queries/state/realm.js';
import type { MutationContext } from './context.js';
import { onWaitingPeriodChanged } from './user-admin.js';
import { realmIconUrl } from '../lib/urls.js';

export type UpdateRealmSettingsCommand = {
  acting_user_id: number | null;
  name?: string;
  description?: string;
  /** Plain settings and group settings, by name (without the `realm_` prefix). */
  settings?: Record<string, unknown>;
};

export type UpdateRealmSettingsResult = { changed: string[] };

/** Settings the `update_dict` form carries (the others use op `update`). */
const UPDATE_DICT_KEYS: ReadonlySet<string> = new Set([
  'allow_message_editing',
  'default_code_block_language',
  'default_language',
  'description',
  'digest_emails_enabled',
  'digest_weekday',
  'disallow_disposable_email_addresses',
  'email_changes_disabled',
  'emails_restricted_to_domains',
  'enable_guest_user_dm_warning',
  'enable_guest_user_indicator',
  'enable_read_receipts',
  'enable_spectator_access',
  'giphy_rating',
  'inline_image_preview',
  'inline_url_embed_preview',
  'invite_required',
  'jitsi_server_url',
  'logo_source',
  'mandatory_topics',
  'message_content_allowed_in_email_notifications',
  'message_content_delete_limit_seconds',
  'message_content_edit_limit_seconds',
  'message_edit_history_visibility_policy',
  'moderation_request_channel_id',
  'move_messages_between_streams_limit_seconds',
  'move_messages_within_stream_limit_seconds',
  'name',
  'name_changes_disabled',
  'new_stream_announcements_stream_id',
  'night_logo_source',
  'org_type',
  'plan_type',
  'presence_disabled',
  'push_notifications_enabled',
  'push_notifications_enabled_end_timestamp',
  'require_unique_names',
  'send_welcome_emails',
  'signup_announcements_stream_id',
  'upload_quota_mib',
  'video_chat_provider',
  'waiting_period_threshold',
  'want_advertise_in_communities_directory',
  'zulip_update_announcements_stream_id',
  ...Object.keys(REALM_GROUP_SETTING_DEFAULTS).filter(
    (k) => k !== 'can_set_delete_message_policy_group' && k !== 'can_set_topics_policy_group',
  ),
]);

/** Values a plain setting may take: the default's type, plus null where the default allows it. */
const NULLABLE: ReadonlySet<RealmSettingName> = new Set([
  'message_content_edit_limit_seconds',
  'message_content_delete_limit_seconds',
  'move_messages_within_stream_limit_seconds',
  'move_messages_between_streams_limit_seconds',
  'jitsi_server_url',
  'upload_quota_mib',
  'push_notifications_enabled_end_timestamp',
]);
const ENUMS: Partial<Record<RealmSettingName, readonly unknown[]>> = {
  message_edit_history_visibility_policy: ['all', 'moves', 'none'],
  topics_policy: ['allow_empty_topic', 'disable_empty_topic'],
  icon_source: ['G', 'U'],
  logo_source: ['D', 'U'],
  night_logo_source: ['D', 'U'],
};

function checkPlainValue(name: RealmSettingName, value: unknown): void {
  const def = REALM_SETTING_DEFAULTS[name] as unknown;
  if (value === null) {
    if (NULLABLE.has(name)) return;
    throw new JsonableError(`Invalid ${name}`);
  }
  const expected = def === null ? (name === 'jitsi_server_url' ? 'string' : 'number') : typeof def;
  if (typeof value !== expected) throw new JsonableError(`Invalid ${name}`);
  if (expected === 'number' && !Number.isInteger(value)) throw new JsonableError(`Invalid ${name}`);
  const allowed = ENUMS[name];
  if (allowed && !allowed.includes(value)) throw new JsonableError(`Invalid ${name}`);
}

function checkGroupValue(ctx: MutationContext, name: string, value: unknown): GroupSettingValue {
  const { store, realm } = ctx;
  const inRealm = (groupId: unknown) =>
    typeof groupId === 'number' && store.groups.byId(groupId)?.realm_id === realm.id;
  if (typeof value === 'number') {
    if (!inRealm(value)) throw new JsonableError(`Invalid user group ID: ${value}`);
    return value;
  }
  if (typeof value === 'object' && value !== null) {
    const v = value as { direct_members?: unknown; direct_subgroups?: unknown };
    if (Array.isArray(v.direct_members) && Array.isArray(v.direct_subgroups)) {
      for (const id of v.direct_members) {
        const u = typeof id === 'number' ? store.users.byId(id) : undefined;
        if (!u || u.realm_id !== realm.id)
          throw new JsonableError(`Invalid user ID: ${String(id)}`);
      }
      for (const id of v.direct_subgroups) {
        if (!inRealm(id)) throw new JsonableError(`Invalid user group ID: ${String(id)}`);
      }
      return {
        direct_members: [...(v.direct_members as number[])].sort((a, b) => a - b),
        direct_subgroups: [...(v.direct_subgroups as number[])].sort((a, b) => a - b),
      };
    }
  }
  throw new JsonableError(`Invalid ${name}`);
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** What a checked settings change will write: every value already validated. */
export type RealmSettingsPlan = {
  /** The settings column as it will be stored (defaults left out). */
  stored: StoredRealmSettings;
  /** The settings with the changes applied. */
  current: RealmSettings;
  /** Each changed setting (with the ones derived from it) and its new value. */
  changes: Map<string, unknown>;
  name: string;
  description: string;
};

/** Validates a realm settings change and works out what it changes; refuses, never writes. */
export function checkUpdateRealmSettings(
  ctx: MutationContext,
  cmd: UpdateRealmSettingsCommand,
): RealmSettingsPlan {
  const { store, realm } = ctx;
  const row = store.realms.byId(realm.id)!;
  const stored: StoredRealmSettings = JSON.parse(row.settings) as StoredRealmSettings;
  const current: RealmSettings = { ...REALM_SETTING_DEFAULTS, ...realm.settings };
  const changes = new Map<string, unknown>();

  const setPlain = (name: RealmSettingName, value: unknown) => {
    if (same(current[name], value)) return;
    (current as Record<string, unknown>)[name] = value;
    if (same(REALM_SETTING_DEFAULTS[name], value)) delete stored[name];
    else (stored as Record<string, unknown>)[name] = value;
    changes.set(name, value);
  };

  for (const [name, value] of Object.entries(cmd.settings ?? {})) {
    if (isRealmGroupSettingName(name)) {
      const v = checkGroupValue(ctx, name, value);
      const key: RealmGroupSettingName = name;
      if (same(realm.groupSetting(key), v)) continue;
      if (typeof v === 'number' && v === realm.systemGroupId(REALM_GROUP_SETTING_DEFAULTS[key])) {
        delete stored[key];
      } else {
        stored[key] = v;
      }
      changes.set(name, v);
    } else if (Object.hasOwn(REALM_SETTING_DEFAULTS, name)) {
      checkPlainValue(name as RealmSettingName, value);
      setPlain(name as RealmSettingName, value);
    } else {
      throw new JsonableError(`Invalid setting: ${name}`);
    }
  }
  // Pairs the reference derives one from the other stay consistent.
  if (changes.has('message_edit_history_visibility_policy')) {
    setPlain('allow_edit_history', current.message_edit_history_visibility_policy !== 'none');
  } else if (changes.has('allow_edit_history')) {
    setPlain('message_edit_history_visibility_policy', current.allow_edit_history ? 'all' : 'none');
  }
  if (changes.has('topics_policy')) {
    setPlain('mandatory_topics', current.topics_policy === 'disable_empty_topic');
  } else if (changes.has('mandatory_topics')) {
    setPlain(
      'topics_policy',
      current.mandatory_topics ? 'disable_empty_topic' : 'allow_empty_topic',
    );
  }

  let name = row.name;
  let description = row.description;
  if (cmd.name !== undefined && cmd.name !== row.name) {
    name = checkRealmName(cmd.name, (problem) => {
      throw new JsonableError(
        problem === 'blank'
          ? 'Organization name cannot be blank'
          : 'Organization name is too long.',
      );
    });
    changes.set('name', name);
  }
  if (cmd.description !== undefined && cmd.description !== row.description) {
    if (longerThan(cmd.description, MAX_REALM_DESCRIPTION_LENGTH)) {
      throw new JsonableError('Organization description is too long.');
    }
    description = cmd.description;
    changes.set('description', description);
  }
  return { stored, current, changes, name, description };
}

/**
 * Tells everyone the realm's icon (the reference's `realm` update_dict `icon`), as `settings`
 * make it.
 */
export function emitRealmIcon(ctx: MutationContext, settings: RealmSettings): void {
  const { store, realm } = ctx;
  const row = store.realms.byId(realm.id)!;
  ctx.emit(
    {
      type: 'realm',
      op: 'update_dict',
      property: 'icon',
      data: { icon_url: realmIconUrl(row, settings), icon_source: settings.icon_source },
    },
    realm.activeUsers().map((u) => u.id),
  );
}

/** Stores a checked realm settings change and announces it. */
export function doUpdateRealmSettings(
  ctx: MutationContext,
  plan: RealmSettingsPlan,
): UpdateRealmSettingsResult {
  const { store, realm } = ctx;
  const { stored, current, changes, name, description } = plan;
  if (changes.size === 0) return { changed: [] };
  const row = store.realms.byId(realm.id)!;

  store.realms.updateSettings(realm.id, JSON.stringify(stored));
  if (name !== row.name || description !== row.description) {
    store.realms.updateNameDescription(realm.id, name, description);
  }

  const everyone = realm.activeUsers().map((u) => u.id);
  // The deprecated integer policies register reports are derived from the group settings: when
  // one changes with them, it is announced too, so a client's state stays equal to a new
  // snapshot.
  const policiesBefore = deprecatedPolicies(realm);
  const policiesAfter = deprecatedPolicies(realm, (key) =>
    key in stored
      ? (stored[key] as GroupSettingValue)
      : realm.systemGroupId(REALM_GROUP_SETTING_DEFAULTS[key]),
  );
  const data: Record<string, unknown> = {};
  let iconChanged = false;
  for (const [key, value] of changes) {
    if (UPDATE_DICT_KEYS.has(key)) {
      data[key] = value;
    } else if (key === 'password_auth_enabled') {
      data.authentication_methods = authenticationMethods(current);
    } else if (key === 'external_avatars' || key === 'icon_source' || key === 'icon_file') {
      // The realm's icon (its uploaded one or the default: the reference's update_dict
      // `icon`, sent once below). Users' default avatars change with `external_avatars` for each
      // client at its next register (an operator's change, rarely made).
      if (key !== 'external_avatars' || current.icon_source === 'G') iconChanged = true;
    } else {
      ctx.emit({ type: 'realm', op: 'update', property: key, value }, everyone);
    }
  }
  if (Object.keys(data).length > 0) {
    ctx.emit({ type: 'realm', op: 'update_dict', property: 'default', data }, everyone);
  }
  if (iconChanged) emitRealmIcon(ctx, current);
  for (const [key, value] of Object.entries(policiesAfter)) {
    if (policiesBefore[key] !== value) {
      ctx.emit(
        { type: 'realm', op: 'update', property: key.replace(/^realm_/, ''), value },
        everyone,
      );
    }
  }
  ctx.afterCommit(() => realm.reloadRealm());
  // A new waiting period makes members full members sooner or later.
  if (changes.has('waiting_period_threshold')) {
    onWaitingPeriodChanged(ctx, current.waiting_period_threshold);
  }
  return { changed: [...changes.keys()] };
}
