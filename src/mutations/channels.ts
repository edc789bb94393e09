/**
 * Creating, changing and archiving channels, and the realm's default channels. Reference:
 * views/streams.py (update_stream_backend, deactivate_stream_backend), lib/streams.py
 * (create_stream_if_needed, check_channel_creation_permissions), actions/streams.py.
 */
import {
  canChangeContentAccessSettings,
  canCreateChannel,
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
  InvalidChannelIdError,
  JsonableError,
  OrganizationAdministratorRequiredError,
  OrganizationOwnerRequiredError,
} from '../lib/errors.js';
import type { GroupSettingValue } from '../lib/realm-settings.js';
import { Role } from '../lib/roles.js';
import { channelFromRow, type Channel } from '../queries/channels-view.js';
import { formatChannel, groupSettingForApi } from '../queries/channels.js';
import type { RealmView } from '../queries/realm-view.js';
import type { UserRow } from '../storage/users.js';
import { announceAccessChange, streamDeleteEvent, streamUpdateEvent } from './channel-events.js';
import { actingUser, type MutationContext } from './context.js';

export class CannotAdministerChannelError extends JsonableError {
  constructor() {
    super('You do not have permission to administer this channel.', {
      code: 'CANNOT_ADMINISTER_CHANNEL',
    });
  }
}

/** Web-public channels need the realm to allow spectators (the server setting is always on). */
export function webPublicEnabled(realm: RealmView): boolean {
  return realm.settings.enable_spectator_access;
}

/** Channel-level delete permissions may only be set by can_set_delete_message_policy_group. */
function checkDeletePolicyPermission(
  realm: RealmView,
  userId: number,
  name: ChannelGroupSettingName,
  value: GroupSettingValue,
): void {
  if (name !== 'can_delete_any_message_group' && name !== 'can_delete_own_message_group') return;
  if (value === realm.systemGroupId('role:nobody')) return;
  if (!realm.hasRealmPermission(userId, 'can_set_delete_message_policy_group'))
    throw new InsufficientPermissionError();
}

export function canSetTopicsPolicy(realm: RealmView, user: UserRow): boolean {
  return (
    user.role <= Role.ADMINISTRATOR ||
    realm.hasRealmPermission(user.id, 'can_set_topics_policy_group')
  );
}

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

export function checkFolderId(realm: RealmView, folderId: number | null): void {
  if (folderId === null) return;
  const f = realm.channels.folder(folderId);
  if (!f || f.is_archived) throw new JsonableError('Invalid channel folder ID');
}

/** The channel an administrative request targets, or the refusal the reference gives. */
export function accessChannelForAdministration(
  realm: RealmView,
  userId: number,
  channelId: number,
): Channel {
  const ch = realm.channels.byId(channelId);
  if (!ch) throw new InvalidChannelIdError();
  switch (realm.channels.administerDecision(userId, ch)) {
    case 'ok':
      return ch;
    case 'forbidden':
      throw new CannotAdministerChannelError();
    case 'invalid':
      throw new InvalidChannelIdError();
  }
}

/** Users who should receive default_streams events (guests do not see default channels). */
export function defaultStreamsAudience(realm: RealmView): number[] {
  return realm
    .activeUsers()
    .filter((u) => u.role !== Role.GUEST)
    .map((u) => u.id);
}

export function emitDefaultStreams(ctx: MutationContext): void {
  ctx.emit(
    { type: 'default_streams', default_streams: ctx.store.channels.defaultStreamIds(ctx.realm.id) },
    defaultStreamsAudience(ctx.realm),
  );
  ctx.afterCommit(() => ctx.realm.channels.reloadDefaults());
}

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
export function checkUpdateChannel(
  ctx: MutationContext,
  cmd: UpdateChannelCommand,
): Record<string, never> {
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

  // ---- everything checked; write and announce ----
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

// ---- DELETE /streams/{stream_id} ------------------------------------------------------------

export type ArchiveChannelCommand = { acting_user_id: number; stream_id: number };

/**
 * Archiving keeps the channel, its messages and subscriptions; it leaves the default channels.
 * Clients that know archived channels get `stream update is_archived`; the others get
 * `stream delete` marked `for_archiving` (the event queues pick one by client capability).
 */
export function checkArchiveChannel(
  ctx: MutationContext,
  cmd: ArchiveChannelCommand,
): Record<string, never> {
  const { realm, store } = ctx;
  actingUser(realm, cmd.acting_user_id);
  const ch = accessChannelForAdministration(realm, cmd.acting_user_id, cmd.stream_id);
  if (ch.deactivated) throw new JsonableError('Channel is already deactivated');
  const audience = realm.channels.metadataAudience(ch);
  store.channels.update(ch.id, 'deactivated', 1);
  ctx.emit(streamDeleteEvent([ch.id], true), audience);
  ctx.emit(streamUpdateEvent(ch, 'is_archived', true), audience);
  if (realm.channels.isDefault(ch.id)) {
    store.channels.removeDefaultStream(realm.id, ch.id);
    emitDefaultStreams(ctx);
  }
  ctx.afterCommit(() => realm.channels.reloadChannel(ch.id));
  return {};
}

// ---- default channels -----------------------------------------------------------------------

export type DefaultStreamCommand = { acting_user_id: number; stream_id: number; add: boolean };

export function checkChangeDefaultStream(
  ctx: MutationContext,
  cmd: DefaultStreamCommand,
): Record<string, never> {
  const { realm, store } = ctx;
  const user = actingUser(realm, cmd.acting_user_id);
  if (!isAdmin(user)) throw new OrganizationAdministratorRequiredError();
  const ch = realm.channels.byId(cmd.stream_id);
  const visible =
    ch &&
    (cmd.add
      ? realm.channels.may(user.id, ch, 'content')
      : realm.channels.may(user.id, ch, 'metadata'));
  if (!ch || !visible || (cmd.add && ch.deactivated)) throw new InvalidChannelIdError();
  if (cmd.add) {
    if (ch.invite_only) throw new JsonableError('Private channels cannot be made default.');
    if (realm.channels.isDefault(ch.id)) return {};
    store.channels.addDefaultStream(realm.id, ch.id);
  } else {
    if (!realm.channels.isDefault(ch.id)) return {};
    store.channels.removeDefaultStream(realm.id, ch.id);
  }
  emitDefaultStreams(ctx);
  return {};
}

// ---- channel folders ------------------------------------------------------------------------

export type CreateFolderCommand = {
  acting_user_id: number;
  name: string;
  description: string;
  rendered_description: string;
};

export function checkCreateChannelFolder(
  ctx: MutationContext,
  cmd: CreateFolderCommand,
): { channel_folder_id: number } {
  const { realm, store } = ctx;
  const user = actingUser(realm, cmd.acting_user_id);
  if (!isAdmin(user)) throw new OrganizationAdministratorRequiredError();
  const name = cmd.name.trim();
  if (name === '') throw new JsonableError("Channel folder name can't be empty.");
  if (realm.channels.allFolders().some((f) => f.name.toLowerCase() === name.toLowerCase()))
    throw new JsonableError(`Channel folder '${name}' already exists`);
  const id = store.channels.insertFolder({
    realm_id: realm.id,
    name,
    description: cmd.description,
    rendered_description: cmd.rendered_description,
    creator_id: user.id,
    date_created: ctx.now,
  });
  ctx.emit(
    {
      type: 'channel_folder',
      op: 'add',
      channel_folder: {
        id,
        name,
        description: cmd.description,
        rendered_description: cmd.rendered_description,
        creator_id: user.id,
        date_created: ctx.now,
        is_archived: false,
      },
    },
    realm.activeUsers().map((u) => u.id),
  );
  ctx.afterCommit(() => realm.channels.reloadFolders());
  return { channel_folder_id: id };
}
