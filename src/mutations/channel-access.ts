/**
 * What the channel mutations share: the refusal for a channel one may not administer and the
 * lookup that gives it, who may set the topics policy and channel delete permissions, whether
 * web-public channels are enabled, folder ids, and the `default_streams` event.
 */
import { type ChannelGroupSettingName } from '../lib/group-settings.js';
import {
  InsufficientPermissionError,
  InvalidChannelIdError,
  JsonableError,
} from '../lib/errors.js';
import type { GroupSettingValue } from '../lib/realm-settings.js';
import { Role } from '../lib/roles.js';
import { type Channel } from '../queries/channels-view.js';
import type { RealmView } from '../queries/realm-view.js';
import type { UserRow } from '../storage/users.js';
import { type MutationContext } from './context.js';

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
export function checkDeletePolicyPermission(
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
