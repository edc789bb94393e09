/**
 * PATCH /realm: who may change which organization setting, the values the endpoint cannot check
 * alone (group-setting values, channels, authentication methods), then the change itself through
 * doUpdateRealmSettings (which stores it and announces it). Reference: views/realm.py
 * update_realm, lib/user_groups.py access_user_group_for_setting.
 */
import {
  InvalidChannelIdError,
  JsonableError,
  OrganizationOwnerRequiredError,
} from '../lib/errors.js';
import {
  checkGroupSettingChange,
  normalizeGroupSettingValue,
  REALM_GROUP_SETTING_CONFIG,
  validateGroupSettingValue,
} from '../lib/group-settings.js';
import {
  isRealmGroupSettingName,
  type GroupSettingValue,
  type RealmGroupSettingName,
} from '../lib/realm-settings.js';
import { Role } from '../lib/roles.js';
import { checkRealmAdministrator } from '../lib/user-rules.js';
import type { MutationContext } from './context.js';
import {
  checkUpdateRealmSettings,
  doUpdateRealmSettings,
  type RealmSettingsPlan,
} from './realm-settings.js';

/** Settings only organization owners may change (the reference's update_realm). */
export const OWNER_ONLY_REALM_SETTINGS: ReadonlySet<string> = new Set([
  'invite_required',
  'create_multiuse_invite_group',
  'can_create_groups',
  'can_invite_users_group',
  'can_manage_all_groups',
  'can_manage_billing_group',
  'emails_restricted_to_domains',
  'disallow_disposable_email_addresses',
  'waiting_period_threshold',
  'message_retention_days',
  'authentication_methods',
  'string_id',
]);

/** Settings whose value is a channel id (-1: none). */
export const REALM_CHANNEL_SETTINGS = [
  'new_stream_announcements_stream_id',
  'signup_announcements_stream_id',
  'zulip_update_announcements_stream_id',
  'moderation_request_channel_id',
] as const;

/** The authentication methods this server has (register's realm_authentication_methods keys). */
export const AUTHENTICATION_METHODS: readonly string[] = ['Email'];

export type UpdateRealmCommand = {
  acting_user_id: number;
  name?: string;
  description?: string;
  /** Plain settings by name (already type-checked by the endpoint). */
  settings: Record<string, unknown>;
  /** Group settings: `{new, old?}` change requests. */
  group_settings: Partial<
    Record<RealmGroupSettingName, { new: GroupSettingValue; old?: GroupSettingValue }>
  >;
  authentication_methods?: Record<string, boolean>;
  string_id?: string;
};

/** What PATCH /realm answers: each changed setting, strings as "updated" (as the reference). */
export type UpdateRealmResult = Record<string, unknown>;

/** A checked PATCH /realm: what will be stored, and what was asked (for the answer). */
export type UpdateRealmPlan = {
  cmd: UpdateRealmCommand;
  settings: Record<string, unknown>;
  groupValues: Partial<Record<RealmGroupSettingName, GroupSettingValue>>;
  change: RealmSettingsPlan;
};

/** Validates PATCH /realm (permissions, methods, channels, group settings); never writes. */
export function checkUpdateRealm(ctx: MutationContext, cmd: UpdateRealmCommand): UpdateRealmPlan {
  const { realm } = ctx;
  const actor = realm.user(cmd.acting_user_id);
  checkRealmAdministrator(actor);
  const isOwner = actor.role === Role.OWNER;
  const asked = [
    ...Object.keys(cmd.settings),
    ...Object.keys(cmd.group_settings),
    ...(cmd.authentication_methods !== undefined ? ['authentication_methods'] : []),
    ...(cmd.string_id !== undefined ? ['string_id'] : []),
  ];
  if (!isOwner && asked.some((k) => OWNER_ONLY_REALM_SETTINGS.has(k)))
    throw new OrganizationOwnerRequiredError();

  const settings: Record<string, unknown> = { ...cmd.settings };

  if (cmd.authentication_methods !== undefined) {
    const methods = cmd.authentication_methods;
    for (const name of Object.keys(methods)) {
      if (!AUTHENTICATION_METHODS.includes(name)) {
        const valid = [...AUTHENTICATION_METHODS].sort().map((m) => `'${m}'`);
        throw new JsonableError(
          `Invalid authentication method: ${name}. Valid methods are: [${valid.join(', ')}]`,
        );
      }
    }
    const enabled = { Email: realm.settings.password_auth_enabled, ...methods };
    if (!Object.values(enabled).includes(true))
      throw new JsonableError('At least one authentication method must be enabled.');
    settings.password_auth_enabled = enabled.Email;
  }

  for (const key of REALM_CHANNEL_SETTINGS) {
    const id = settings[key];
    if (id === undefined || id === -1 || id === realm.settings[key]) continue;
    const ch = typeof id === 'number' && id >= 0 ? realm.channels.byId(id) : undefined;
    if (!ch || !realm.channels.may(actor.id, ch, 'metadata')) throw new InvalidChannelIdError();
    if (key === 'moderation_request_channel_id' && !ch.invite_only)
      throw new JsonableError('Moderation request channel must be private.');
  }

  const nobody = realm.systemGroupId('role:nobody');
  const groupValues: Partial<Record<RealmGroupSettingName, GroupSettingValue>> = {};
  for (const [key, change] of Object.entries(cmd.group_settings)) {
    if (!isRealmGroupSettingName(key) || !change) continue;
    const next = normalizeGroupSettingValue(change.new, nobody);
    if (!checkGroupSettingChange(realm.groupSetting(key), next, change.old, nobody)) continue;
    const value = validateGroupSettingValue(realm, key, REALM_GROUP_SETTING_CONFIG[key], next);
    if (key === 'can_access_all_users_group' && value !== realm.systemGroupId('role:everyone')) {
      // Guests' access to other users is not restricted anywhere on this server yet: refusing
      // is honest, accepting would promise a privacy the server does not give.
      throw new JsonableError(
        "Restricting guests' access to other users is not supported by this server.",
      );
    }
    groupValues[key] = value;
  }

  if (cmd.string_id !== undefined) throw new JsonableError('Must be a demo organization.');

  const change = checkUpdateRealmSettings(ctx, {
    acting_user_id: actor.id,
    ...(cmd.name !== undefined ? { name: cmd.name } : {}),
    ...(cmd.description !== undefined ? { description: cmd.description } : {}),
    settings: { ...settings, ...groupValues },
  });
  return { cmd, settings, groupValues, change };
}

/** Stores a checked PATCH /realm and answers with each changed setting asked for. */
export function doUpdateRealm(ctx: MutationContext, plan: UpdateRealmPlan): UpdateRealmResult {
  const { cmd, settings, groupValues } = plan;
  const { changed } = doUpdateRealmSettings(ctx, plan.change);
  const result: UpdateRealmResult = {};
  for (const key of changed) {
    // Settings derived from the one asked for (allow_edit_history, mandatory_topics) change
    // with it but are not reported.
    const asked = key in settings || key in groupValues || key === 'name' || key === 'description';
    if (!asked) continue;
    if (key === 'password_auth_enabled') {
      result.authentication_methods = cmd.authentication_methods;
      continue;
    }
    const value =
      key === 'name' ? cmd.name : key === 'description' ? cmd.description : settings[key];
    if (isRealmGroupSettingName(key)) result[key] = groupValues[key];
    else result[key] = typeof value === 'string' ? 'updated' : value;
  }
  return result;
}
