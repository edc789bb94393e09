/**
 * The one place that decides "may user U do X on channel C". Pure: the caller (ChannelsView)
 * gathers the facts — the user's role, whether they are subscribed, which of the channel's and the
 * realm's permission groups they belong to — and every endpoint, mutation, event audience and
 * register snapshot asks here. Reference: lib/streams.py (user_has_metadata_access,
 * user_has_content_access, can_access_stream_history, access_stream_for_send_message,
 * bulk_can_remove_subscribers_from_streams, get_streams_to_which_user_cannot_add_subscribers,
 * can_administer_accessible_channel) and views/streams.py.
 *
 * Vocabulary:
 * - metadata access: the user may know the channel exists (name, description, settings,
 *   subscribers). Events about a channel go exactly to the users with metadata access.
 * - content access: the user may read its messages (subscribed, public to them, or granted by
 *   can_subscribe_group / can_add_subscribers_group).
 * - history access: the user may also read messages sent before they subscribed.
 *
 * Guests never count as members of a setting that does not allow `role:everyone`
 * (can_add_subscribers_group, can_administer_channel_group, can_subscribe_group,
 * can_remove_subscribers_group when so configured): such a setting cannot grant them anything.
 */
import { Role } from './roles.js';

export type ChannelFacts = {
  invite_only: boolean;
  is_web_public: boolean;
  history_public_to_subscribers: boolean;
  deactivated: boolean;
};

/** Membership of the user in each channel setting's group, resolved through subgroups. */
export type ChannelGroupMembership = {
  can_add_subscribers_group: boolean;
  can_remove_subscribers_group: boolean;
  can_administer_channel_group: boolean;
  can_send_message_group: boolean;
  can_subscribe_group: boolean;
  can_delete_any_message_group: boolean;
  can_delete_own_message_group: boolean;
};

/** Membership of the user in the realm-level settings that bear on channels. */
export type RealmChannelMembership = {
  can_add_subscribers_group: boolean;
  can_create_public_channel_group: boolean;
  can_create_private_channel_group: boolean;
  can_create_web_public_channel_group: boolean;
  can_delete_any_message_group: boolean;
  can_delete_own_message_group: boolean;
  can_set_delete_message_policy_group: boolean;
  can_set_topics_policy_group: boolean;
};

export type UserFacts = {
  role: number;
  is_active: boolean;
};

export type AccessFacts = {
  user: UserFacts;
  channel: ChannelFacts;
  subscribed: boolean;
  inChannel: ChannelGroupMembership;
  inRealm: RealmChannelMembership;
};

export const isAdmin = (u: { role: number }) => u.role <= Role.ADMINISTRATOR;
export const isGuest = (u: { role: number }) => u.role === Role.GUEST;

/** Settings that never include guests, whatever group they name. */
const EXCLUDES_GUESTS: ReadonlySet<keyof ChannelGroupMembership> = new Set([
  'can_add_subscribers_group',
  'can_administer_channel_group',
  'can_subscribe_group',
]);

/** Membership in a channel setting's group, with guests removed where they never count. */
function inGroup(f: AccessFacts, setting: keyof ChannelGroupMembership): boolean {
  if (isGuest(f.user) && EXCLUDES_GUESTS.has(setting)) return false;
  return f.inChannel[setting];
}

const isPublic = (c: ChannelFacts) => !c.invite_only;

/** May know the channel exists and see its settings and subscribers. */
export function hasMetadataAccess(f: AccessFacts): boolean {
  if (!f.user.is_active) return false;
  if (f.channel.is_web_public) return true;
  if (f.subscribed) return true;
  if (isGuest(f.user)) return false;
  if (isPublic(f.channel)) return true;
  if (isAdmin(f.user)) return true;
  return (
    inGroup(f, 'can_administer_channel_group') ||
    inGroup(f, 'can_add_subscribers_group') ||
    inGroup(f, 'can_subscribe_group')
  );
}

/** May read the channel's messages (those they received, or all of them with history access). */
export function hasContentAccess(f: AccessFacts): boolean {
  if (!f.user.is_active) return false;
  if (f.channel.is_web_public) return true;
  if (f.subscribed) return true;
  if (isGuest(f.user)) return false;
  if (isPublic(f.channel)) return true;
  return inGroup(f, 'can_subscribe_group') || inGroup(f, 'can_add_subscribers_group');
}

/** May read messages sent before they subscribed (else only messages they received). */
export function hasHistoryAccess(f: AccessFacts): boolean {
  if (!f.user.is_active) return false;
  if (f.channel.is_web_public) return true;
  if (isPublic(f.channel) && !isGuest(f.user)) return true;
  return f.channel.history_public_to_subscribers && hasContentAccess(f);
}

/**
 * Everyone with metadata access to one channel, computed for a whole realm at once (the audience
 * of every event about the channel). Same rules as hasMetadataAccess, set-wise: per user only a
 * few set lookups. `groupMembers` gives the (non-guest or not) members of a channel setting.
 */
export function metadataAudience(input: {
  channel: ChannelFacts;
  activeUsers: Iterable<{ id: number; role: number }>;
  subscribers: ReadonlySet<number>;
  groupMembers: (
    setting: 'can_administer_channel_group' | 'can_add_subscribers_group' | 'can_subscribe_group',
  ) => ReadonlySet<number>;
}): number[] {
  const out: number[] = [];
  const c = input.channel;
  if (c.is_web_public) {
    for (const u of input.activeUsers) out.push(u.id);
    return out;
  }
  if (isPublic(c)) {
    for (const u of input.activeUsers)
      if (!isGuest(u) || input.subscribers.has(u.id)) out.push(u.id);
    return out;
  }
  const granting = [
    input.groupMembers('can_administer_channel_group'),
    input.groupMembers('can_add_subscribers_group'),
    input.groupMembers('can_subscribe_group'),
  ];
  for (const u of input.activeUsers) {
    if (input.subscribers.has(u.id)) out.push(u.id);
    else if (isGuest(u)) continue;
    else if (isAdmin(u) || granting.some((g) => g.has(u.id))) out.push(u.id);
  }
  return out;
}

/** Subscribers of a channel are visible exactly to users who may know the channel. */
export const canSeeSubscribers = hasMetadataAccess;

/** Whether a user may subscribe themselves (guests never may, through this API). */
export function canSubscribeSelf(f: AccessFacts): boolean {
  return !isGuest(f.user) && hasContentAccess(f);
}

/**
 * Subscribing others: 'unauthorized' means the user cannot access the channel at all ("Unable to
 * access channel"), 'forbidden' that they can but may not add others ("Insufficient permission").
 */
export function addSubscribersDecision(f: AccessFacts): 'ok' | 'unauthorized' | 'forbidden' {
  if (isGuest(f.user) || !hasContentAccess(f)) return 'unauthorized';
  if (f.inRealm.can_add_subscribers_group || isAdmin(f.user)) return 'ok';
  if (inGroup(f, 'can_administer_channel_group') || inGroup(f, 'can_add_subscribers_group'))
    return 'ok';
  return 'forbidden';
}

/** Unsubscribing someone other than oneself or one's own bot. */
export function canRemoveSubscribers(f: AccessFacts): boolean {
  if (!f.user.is_active) return false;
  if (isAdmin(f.user)) return true;
  if (isGuest(f.user)) return false;
  if (inGroup(f, 'can_administer_channel_group')) return true;
  return hasMetadataAccess(f) && inGroup(f, 'can_remove_subscribers_group');
}

/**
 * Changing the channel (name, description, folder, archiving, permissions):
 * 'invalid' when the user must not learn the channel exists ("Invalid channel ID"),
 * 'forbidden' when they know it but may not administer it.
 */
export function administerDecision(f: AccessFacts): 'ok' | 'invalid' | 'forbidden' {
  if (!f.user.is_active) return 'invalid';
  if (isAdmin(f.user)) return 'ok';
  if (inGroup(f, 'can_administer_channel_group')) return 'ok';
  return hasContentAccess(f) ? 'forbidden' : 'invalid';
}

export function canAdminister(f: AccessFacts): boolean {
  return administerDecision(f) === 'ok';
}

/**
 * Changing privacy, or the settings that grant content access (can_add_subscribers_group,
 * can_subscribe_group), needs content access on top of administering: an administrator who is not
 * subscribed to a private channel may rename it but not open it up.
 */
export function canChangeContentAccessSettings(f: AccessFacts): boolean {
  return canAdminister(f) && hasContentAccess(f);
}

/**
 * Posting: the channel's can_send_message_group (for a bot, its owner's membership counts too)
 * and access to the channel. 'not_allowed' → "You do not have permission to post in this
 * channel."; 'unauthorized' → "Not authorized to send to channel '<name>'".
 */
export function sendMessageDecision(
  f: AccessFacts,
  botOwner?: AccessFacts,
): 'ok' | 'not_allowed' | 'unauthorized' {
  if (!f.inChannel.can_send_message_group && !botOwner?.inChannel.can_send_message_group)
    return 'not_allowed';
  if (f.channel.deactivated || !f.user.is_active) return 'unauthorized';
  if (f.channel.is_web_public) return 'ok';
  if (isPublic(f.channel) && !isGuest(f.user)) return 'ok';
  if (f.subscribed) return 'ok';
  if (botOwner?.subscribed) return 'ok';
  if (
    f.channel.history_public_to_subscribers &&
    !isGuest(f.user) &&
    (inGroup(f, 'can_subscribe_group') || inGroup(f, 'can_add_subscribers_group'))
  )
    return 'ok';
  return 'unauthorized';
}

/**
 * Deleting anyone's message in the channel (realm-wide or channel-level permission). Whether the
 * user can see that message at all is the message area's check (access to the message itself).
 */
export function canDeleteAnyMessage(f: AccessFacts): boolean {
  if (!f.user.is_active) return false;
  return f.inRealm.can_delete_any_message_group || f.inChannel.can_delete_any_message_group;
}

/** Deleting one's own message in the channel (time limits are the caller's business). */
export function canDeleteOwnMessage(f: AccessFacts): boolean {
  if (!f.user.is_active) return false;
  if (canDeleteAnyMessage(f)) return true;
  return f.inRealm.can_delete_own_message_group || f.inChannel.can_delete_own_message_group;
}

/** Creating a channel with the given privacy. */
export function canCreateChannel(
  user: UserFacts,
  inRealm: RealmChannelMembership,
  kind: { invite_only: boolean; is_web_public: boolean },
): boolean {
  if (!user.is_active) return false;
  if (kind.invite_only) return inRealm.can_create_private_channel_group;
  if (kind.is_web_public && !inRealm.can_create_web_public_channel_group) return false;
  return inRealm.can_create_public_channel_group;
}

/** The actions the role × action table in test/unit/channel-permissions.test.ts covers. */
export type ChannelAction =
  | 'metadata'
  | 'content'
  | 'history'
  | 'subscribe_self'
  | 'add_subscribers'
  | 'remove_subscribers'
  | 'administer'
  | 'change_permissions'
  | 'send_message'
  | 'delete_any_message'
  | 'delete_own_message';

export function may(f: AccessFacts, action: ChannelAction): boolean {
  switch (action) {
    case 'metadata':
      return hasMetadataAccess(f);
    case 'content':
      return hasContentAccess(f);
    case 'history':
      return hasHistoryAccess(f);
    case 'subscribe_self':
      return canSubscribeSelf(f);
    case 'add_subscribers':
      return addSubscribersDecision(f) === 'ok';
    case 'remove_subscribers':
      return canRemoveSubscribers(f);
    case 'administer':
      return canAdminister(f);
    case 'change_permissions':
      return canChangeContentAccessSettings(f);
    case 'send_message':
      return sendMessageDecision(f) === 'ok';
    case 'delete_any_message':
      return canDeleteAnyMessage(f);
    case 'delete_own_message':
      return canDeleteOwnMessage(f);
  }
}
