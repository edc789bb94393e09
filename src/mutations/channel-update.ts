/**
 * Changing a channel's properties (PATCH /streams/{stream_id}): name, description, privacy,
 * history, retention, folder, topics policy, default-channel membership and group settings.
 * Reference: views/streams.py (update_stream_backend), actions/streams.py.
 */
import {
  canChangeContentAccessSettings,
  hasContentAccess,
  isAdmin,
} from '../lib/channel-permissions.js';
import { checkChannelName, type TopicsPolicy } from '../lib/channel-rules.js';
import {
  CHANNEL_GROUP_SETTING_CONFIG,
  CHANNEL_GROUP_SETTING_NAMES,
  checkGroupSettingChange,
  normalizeGroupSettingValue,
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
import { formatChannel, groupSettingForApi } from '../queries/channels.js';
import { announceAccessChange, streamUpdateEvent } from './channel-events.js';
import { actingUser, type MutationContext } from './context.js';
import {
  accessChannelForAdministration,
  canSetTopicsPolicy,
  checkDeletePolicyPermission,
  checkFolderId,
  emitDefaultStreams,
  webPublicEnabled,
} from './channel-access.js';

// ---- PATCH /streams/{stream_id} -------------------------------------------------------------

export type GroupSettingChange = { new: GroupSettingValue; old?: GroupSettingValue };

export type UpdateChannelCommand = {
  acting_user_id: number;
  stream_id: number;
  description?: { text: string; rendered: string };
  new_name?: string;
  is_private?: boolean;
  is_web_public?: boolean;
  history_public_to_subscribers?: boolean;
  is_default_stream?: boolean;
  /** Parsed: null is the realm default, -1 unlimited. */
  message_retention_days?: number | null;
  is_archived?: boolean;
  folder_id?: number | null;
  topics_policy?: TopicsPolicy;
  settings: Partial<Record<ChannelGroupSettingName, GroupSettingChange>>;
};

/** update_stream_backend: every parameter checked before anything is written. */
/** A checked PATCH /streams/{stream_id}: the command and the state it leads to. */
export type ChannelUpdate = {
  cmd: UpdateChannelCommand;
  ch: Channel;
  isPrivate: boolean;
  isWebPublic: boolean;
  history: boolean;
  newName: string | undefined;
  settingChanges: [ChannelGroupSettingName, GroupSettingValue][];
};

export function checkUpdateChannel(ctx: MutationContext, cmd: UpdateChannelCommand): ChannelUpdate {
  const { realm, store } = ctx;
  const view = realm.channels;
  const user = actingUser(realm, cmd.acting_user_id);
  const ch = accessChannelForAdministration(realm, user.id, cmd.stream_id);
  const facts = view.facts(user.id, ch);

  // Privacy: the proposed state must be coherent.
  const isPrivate = cmd.is_private ?? ch.invite_only === 1;
  const isWebPublic = cmd.is_web_public ?? ch.is_web_public === 1;
  const isDefault = cmd.is_default_stream ?? view.isDefault(ch.id);
  const history =
    cmd.history_public_to_subscribers ??
    (cmd.is_private !== undefined ? !cmd.is_private : ch.history_public_to_subscribers === 1);
  if (isWebPublic && !history) throw new JsonableError('Invalid parameters');
  if (isWebPublic && isPrivate) throw new JsonableError('Invalid parameters');
  if (!isPrivate && !history) throw new JsonableError('Invalid parameters');
  if (isPrivate && isDefault) throw new JsonableError('A default channel cannot be private.');
  if (cmd.is_private !== undefined && !hasContentAccess(facts))
    throw new JsonableError('Channel content access is required.');
  if (cmd.is_private !== undefined) {
    const inRealm = view.realmMembership(user.id);
    if (cmd.is_private && !inRealm.can_create_private_channel_group)
      throw new InsufficientPermissionError();
    if (!cmd.is_private && !inRealm.can_create_public_channel_group)
      throw new InsufficientPermissionError();
  }
  if (cmd.is_web_public) {
    if (!webPublicEnabled(realm)) throw new JsonableError('Web-public channels are not enabled.');
    if (!view.realmMembership(user.id).can_create_web_public_channel_group)
      throw new InsufficientPermissionError();
  }
  if (cmd.is_default_stream !== undefined && !isAdmin(user))
    throw new JsonableError('You do not have permission to change default channels.', {
      code: 'CANNOT_MANAGE_DEFAULT_CHANNEL',
    });
  if (cmd.message_retention_days !== undefined && user.role !== Role.OWNER)
    throw new OrganizationOwnerRequiredError();
  if (cmd.is_archived === true)
    throw new JsonableError('Channels are archived with DELETE /streams/{stream_id}, not updated.');
  if (cmd.is_archived === false && !ch.deactivated)
    throw new JsonableError('Channel is not currently deactivated');
  if (cmd.topics_policy !== undefined) {
    if (!canSetTopicsPolicy(realm, user)) throw new InsufficientPermissionError();
    if (cmd.topics_policy === 'empty_topic_only' && store.topics.hasNamedTopic(ch.id))
      throw new JsonableError(
        'To enable this configuration, all messages in this channel must be in the "general chat" topic. Consider renaming or deleting other topics.',
      );
  }
  let newName: string | undefined;
  if (cmd.new_name !== undefined) {
    newName = cmd.new_name.trim();
    if (newName === ch.name) throw new JsonableError('Channel already has that name.');
    checkChannelName(newName);
    if (newName.toLowerCase() !== ch.name.toLowerCase()) {
      const other = view.byName(newName);
      if (other) {
        if (view.may(user.id, other, 'metadata') || view.may(user.id, other, 'content'))
          throw new JsonableError(`Channel '${newName}' already exists`, {
            code: 'CHANNEL_ALREADY_EXISTS',
            extra: { channel_name: newName },
          });
        throw new InsufficientPermissionError();
      }
    }
  }
  if (cmd.folder_id !== undefined) checkFolderId(realm, cmd.folder_id);

  const nobody = realm.systemGroupId('role:nobody');
  const settingChanges: [ChannelGroupSettingName, GroupSettingValue][] = [];
  for (const name of CHANNEL_GROUP_SETTING_NAMES) {
    const change = cmd.settings[name];
    if (!change) continue;
    const next = normalizeGroupSettingValue(change.new, nobody);
    if (!checkGroupSettingChange(ch.settings[name], next, change.old, nobody)) continue;
    if (
      (name === 'can_add_subscribers_group' || name === 'can_subscribe_group') &&
      !canChangeContentAccessSettings(facts)
    )
      throw new JsonableError('Channel content access is required.');
    const value = validateGroupSettingValue(realm, name, CHANNEL_GROUP_SETTING_CONFIG[name], next);
    checkDeletePolicyPermission(realm, user.id, name, value);
    settingChanges.push([name, value]);
  }

  return { cmd, ch, isPrivate, isWebPublic, history, newName, settingChanges };
}

/** Writes and announces a checked channel update. */
export function doUpdateChannel(ctx: MutationContext, plan: ChannelUpdate): Record<string, never> {
  const { realm, store } = ctx;
  const view = realm.channels;
  const { cmd, ch, isPrivate, isWebPublic, history, newName, settingChanges } = plan;
  const updateEvents: Record<string, unknown>[] = [];
  const write = (
    column: Parameters<typeof store.channels.update>[1],
    value: string | number | null,
  ) => store.channels.update(ch.id, column, value);

  const privacyChanged =
    (cmd.is_private !== undefined ||
      cmd.is_web_public !== undefined ||
      cmd.history_public_to_subscribers !== undefined) &&
    (isPrivate !== (ch.invite_only === 1) ||
      isWebPublic !== (ch.is_web_public === 1) ||
      history !== (ch.history_public_to_subscribers === 1));
  const audienceBefore = view.metadataAudience(ch);
  if (privacyChanged) {
    write('invite_only', isPrivate ? 1 : 0);
    write('is_web_public', isWebPublic ? 1 : 0);
    write('history_public_to_subscribers', history ? 1 : 0);
    const extra = { history_public_to_subscribers: history, is_web_public: isWebPublic };
    if (isPrivate !== (ch.invite_only === 1))
      updateEvents.push(streamUpdateEvent(ch, 'invite_only', isPrivate, extra));
    if (history !== (ch.history_public_to_subscribers === 1))
      updateEvents.push(streamUpdateEvent(ch, 'history_public_to_subscribers', history));
    if (isWebPublic !== (ch.is_web_public === 1))
      updateEvents.push(streamUpdateEvent(ch, 'is_web_public', isWebPublic));
  }
  if (
    cmd.message_retention_days !== undefined &&
    cmd.message_retention_days !== ch.message_retention_days
  ) {
    write('message_retention_days', cmd.message_retention_days);
    updateEvents.push(streamUpdateEvent(ch, 'message_retention_days', cmd.message_retention_days));
  }
  if (cmd.is_archived === false) {
    write('deactivated', 0);
    updateEvents.push(streamUpdateEvent(ch, 'is_archived', false));
  }
  if (cmd.topics_policy !== undefined && cmd.topics_policy !== ch.topics_policy) {
    write('topics_policy', cmd.topics_policy);
    updateEvents.push(streamUpdateEvent(ch, 'topics_policy', cmd.topics_policy));
  }
  // The same text may render differently for another user (channel links follow the acting
  // user's access) or after channels changed: a different rendering is a change too.
  if (
    cmd.description !== undefined &&
    (cmd.description.text !== ch.description ||
      cmd.description.rendered !== ch.rendered_description)
  ) {
    write('description', cmd.description.text);
    write('rendered_description', cmd.description.rendered);
    updateEvents.push(
      streamUpdateEvent(ch, 'description', cmd.description.text, {
        rendered_description: cmd.description.rendered,
      }),
    );
  }
  if (cmd.folder_id !== undefined && cmd.folder_id !== ch.folder_id) {
    write('folder_id', cmd.folder_id);
    updateEvents.push(streamUpdateEvent(ch, 'folder_id', cmd.folder_id));
  }
  for (const [name, value] of settingChanges) {
    write(name, JSON.stringify(value));
    updateEvents.push(streamUpdateEvent(ch, name, groupSettingForApi(realm, value)));
  }
  if (newName !== undefined) {
    write('name', newName);
    // The event carries the old name in `name` (how clients find the channel to rename).
    updateEvents.push(streamUpdateEvent(ch, 'name', newName));
  }
  const current = channelFromRow(store.channels.byId(ch.id)!);

  // Who may know the channel now; events go to those who did before and still do.
  const subscribers = view.subscriberIds(ch.id);
  const audienceAfter = view.metadataAudience(current, { channel: current });
  const { kept } = announceAccessChange(ctx, current, audienceBefore, audienceAfter, subscribers);
  if (cmd.is_archived === false) {
    // Clients that do not know archived channels learn of it again as a new channel.
    ctx.emit(
      {
        type: 'stream',
        op: 'create',
        streams: [formatChannel(realm, current, ctx.now)],
        for_unarchiving: true,
      },
      kept,
    );
  }
  for (const e of updateEvents) ctx.emit(e as { type: string }, kept);

  if (cmd.is_default_stream !== undefined && cmd.is_default_stream !== view.isDefault(ch.id)) {
    if (cmd.is_default_stream) store.channels.addDefaultStream(realm.id, ch.id);
    else store.channels.removeDefaultStream(realm.id, ch.id);
    emitDefaultStreams(ctx);
  }
  ctx.afterCommit(() => view.reloadChannel(ch.id));
  return {};
}
