/**
 * Creating channels: which group settings a new channel gets, what its creator may create, and
 * the new row. Reference: lib/streams.py (create_stream_if_needed,
 * check_channel_creation_permissions), actions/streams.py. Changing channels is in
 * channel-update.ts, archiving, default channels and folders in channel-admin.ts, what they share
 * in channel-access.ts.
 */
import { canCreateChannel } from '../lib/channel-permissions.js';
import { type TopicsPolicy } from '../lib/channel-rules.js';
import {
  CHANNEL_GROUP_SETTING_CONFIG,
  CHANNEL_GROUP_SETTING_NAMES,
  validateGroupSettingValue,
  type ChannelGroupSettingName,
} from '../lib/group-settings.js';
import {
  InsufficientPermissionError,
  JsonableError,
  OrganizationOwnerRequiredError,
} from '../lib/errors.js';
import type { GroupSettingValue } from '../lib/realm-settings.js';
import { Role } from '../lib/roles.js';
import { channelFromRow, type Channel } from '../queries/channels-view.js';
import type { RealmView } from '../queries/realm-view.js';
import type { UserRow } from '../storage/users.js';
import { type MutationContext } from './context.js';
import { checkDeletePolicyPermission, webPublicEnabled } from './channel-access.js';

export { canSetTopicsPolicy, checkFolderId, emitDefaultStreams } from './channel-access.js';
export {
  checkUpdateChannel,
  doUpdateChannel,
  type GroupSettingChange,
  type UpdateChannelCommand,
} from './channel-update.js';
export {
  checkArchiveChannel,
  checkChangeDefaultStream,
  checkCreateChannelFolder,
  doArchiveChannel,
  doChangeDefaultStream,
  doCreateChannelFolder,
} from './channel-admin.js';

/** Validates requested group settings for a new channel; missing ones get the defaults. */
export function channelGroupSettingsForCreation(
  realm: RealmView,
  creatorId: number,
  requested: Partial<Record<ChannelGroupSettingName, GroupSettingValue>>,
): Record<ChannelGroupSettingName, GroupSettingValue> {
  const sys = (n: Parameters<RealmView['systemGroupId']>[0]) => realm.systemGroupId(n);
  const defaults: Record<ChannelGroupSettingName, GroupSettingValue> = {
    can_add_subscribers_group: sys('role:nobody'),
    can_remove_subscribers_group: sys('role:administrators'),
    can_administer_channel_group: { direct_members: [creatorId], direct_subgroups: [] },
    can_send_message_group: sys('role:everyone'),
    can_subscribe_group: sys('role:nobody'),
    can_delete_any_message_group: sys('role:nobody'),
    can_delete_own_message_group: sys('role:nobody'),
  };
  const out = { ...defaults };
  for (const name of CHANNEL_GROUP_SETTING_NAMES) {
    const raw = requested[name];
    if (raw === undefined) continue;
    const value = validateGroupSettingValue(realm, name, CHANNEL_GROUP_SETTING_CONFIG[name], raw);
    checkDeletePolicyPermission(realm, creatorId, name, value);
    out[name] = value;
  }
  return out;
}

export type NewChannelSpec = {
  name: string;
  description: string;
  rendered_description: string;
  invite_only: boolean;
  is_web_public: boolean;
  history_public_to_subscribers: boolean | null;
  message_retention_days: number | null;
  topics_policy: TopicsPolicy;
  folder_id: number | null;
  settings: Record<ChannelGroupSettingName, GroupSettingValue>;
};

/** Refuses what the creator may not create (check_channel_creation_permissions). */
export function checkChannelCreation(
  realm: RealmView,
  user: UserRow,
  spec: { invite_only: boolean; is_web_public: boolean; retentionGiven: boolean },
  isDefault: boolean,
): void {
  const inRealm = realm.channels.realmMembership(user.id);
  const facts = { role: user.role, is_active: true };
  if (!canCreateChannel(facts, inRealm, { invite_only: spec.invite_only, is_web_public: false }))
    throw new InsufficientPermissionError();
  if (isDefault && user.role > Role.ADMINISTRATOR) throw new InsufficientPermissionError();
  if (spec.invite_only && isDefault)
    throw new JsonableError('A default channel cannot be private.');
  if (spec.is_web_public) {
    if (!webPublicEnabled(realm)) throw new JsonableError('Web-public channels are not enabled.');
    if (!inRealm.can_create_web_public_channel_group) throw new InsufficientPermissionError();
    if (spec.invite_only) throw new JsonableError('Invalid parameters');
  }
  if (spec.retentionGiven && user.role !== Role.OWNER) throw new OrganizationOwnerRequiredError();
}

/** Writes a new channel row; returns it as the read model will hold it. */
export function insertChannel(
  ctx: MutationContext,
  creatorId: number,
  spec: NewChannelSpec,
): Channel {
  const history = spec.invite_only ? (spec.history_public_to_subscribers ?? false) : true;
  const id = ctx.store.channels.insert({
    realm_id: ctx.realm.id,
    name: spec.name,
    description: spec.description,
    rendered_description: spec.rendered_description,
    date_created: ctx.now,
    creator_id: creatorId,
    deactivated: 0,
    invite_only: spec.invite_only ? 1 : 0,
    history_public_to_subscribers: history ? 1 : 0,
    is_web_public: spec.is_web_public ? 1 : 0,
    message_retention_days: spec.message_retention_days,
    topics_policy: spec.topics_policy,
    folder_id: spec.folder_id,
    can_add_subscribers_group: JSON.stringify(spec.settings.can_add_subscribers_group),
    can_remove_subscribers_group: JSON.stringify(spec.settings.can_remove_subscribers_group),
    can_administer_channel_group: JSON.stringify(spec.settings.can_administer_channel_group),
    can_send_message_group: JSON.stringify(spec.settings.can_send_message_group),
    can_subscribe_group: JSON.stringify(spec.settings.can_subscribe_group),
    can_delete_any_message_group: JSON.stringify(spec.settings.can_delete_any_message_group),
    can_delete_own_message_group: JSON.stringify(spec.settings.can_delete_own_message_group),
  });
  const ch = channelFromRow(ctx.store.channels.byId(id)!);
  ctx.afterCommit(() => {
    ctx.realm.channels.reloadChannel(id);
    ctx.realm.channels.reloadSubscriptions(id);
  });
  return ch;
}
