/**
 * The channel part of a realm's read model: channels by id and by name, active subscribers, each
 * user's subscription rows, the default channels and the channel folders — kept equal to the last
 * committed state (mutations refresh it after COMMIT) — and the access questions everything else
 * asks, answered by src/lib/channel-permissions.ts from facts gathered here.
 *
 * Interface for other areas (messages, events, rendering):
 *   byId(id), byName(name)                       lookups (names compare case-insensitively)
 *   may(userId, channel, action)                 any ChannelAction of channel-permissions.ts
 *   sendMessageDecision(userId, channel)         'ok' | 'not_allowed' | 'unauthorized'
 *   subscriberIds(channelId), isSubscribed(...)  active subscribers (active users only)
 *   historyPublic(channel)                       history_public_to_subscribers
 *   metadataAudience(channel)                    every user who may know the channel exists
 */
import {
  administerDecision,
  addSubscribersDecision,
  may,
  metadataAudience,
  sendMessageDecision,
  type AccessFacts,
  type ChannelAction,
  type ChannelGroupMembership,
  type RealmChannelMembership,
} from '../lib/channel-permissions.js';
import {
  CHANNEL_GROUP_SETTING_NAMES,
  parseStoredGroupSetting,
  type ChannelGroupSettingName,
} from '../lib/group-settings.js';
import type { GroupSettingValue } from '../lib/realm-settings.js';
import type { ChannelFolderRow, StreamRow, SubscriptionRow } from '../storage/channels.js';
import type { ReadStore } from '../storage/store.js';
import type { RealmView } from './realm-view.js';

/** A channel as the read model keeps it: the row with its group settings parsed. */
export type Channel = Omit<StreamRow, ChannelGroupSettingName> & {
  settings: Record<ChannelGroupSettingName, GroupSettingValue>;
};

export function channelFromRow(row: StreamRow): Channel {
  const settings = {} as Record<ChannelGroupSettingName, GroupSettingValue>;
  const base: Record<string, unknown> = { ...row };
  for (const name of CHANNEL_GROUP_SETTING_NAMES) {
    settings[name] = parseStoredGroupSetting(row[name]);
    delete base[name];
  }
  return { ...(base as Omit<StreamRow, ChannelGroupSettingName>), settings };
}

/** A channel without messages for this long is shown as not recently active. */
export const RECENT_ACTIVITY_DAYS = 180;

export class ChannelsView {
  private readonly channels = new Map<number, Channel>();
  private readonly idByLowerName = new Map<string, number>();
  /** channel id → active subscriber ids (deactivated users included; filtered on read) */
  private readonly subscribers = new Map<number, Set<number>>();
  /** user id → channel id → subscription row (active and inactive) */
  private readonly subsByUser = new Map<number, Map<number, SubscriptionRow>>();
  private defaults = new Set<number>();
  private readonly folders = new Map<number, ChannelFolderRow>();
  /**
   * Bumped whenever a channel row is (re)loaded — created, renamed, archived, changed: caches
   * derived from the channel list (the markdown render context) compare it to know they are stale.
   */
  version = 0;

  constructor(
    private readonly store: ReadStore,
    private readonly realm: RealmView,
  ) {
    this.reloadAll();
  }

  // ---- loading ------------------------------------------------------------------------------

  reloadAll(): void {
    this.channels.clear();
    this.idByLowerName.clear();
    this.subscribers.clear();
    this.subsByUser.clear();
    for (const row of this.store.channels.byRealm(this.realm.id)) this.putChannel(row);
    for (const s of this.store.channels.subscriptionsByRealm(this.realm.id)) this.putSub(s);
    this.reloadDefaults();
    this.reloadFolders();
  }

  private putChannel(row: StreamRow): void {
    this.version++;
    const previous = this.channels.get(row.id);
    if (previous) this.idByLowerName.delete(previous.name.toLowerCase());
    const ch = channelFromRow(row);
    this.channels.set(row.id, ch);
    this.idByLowerName.set(ch.name.toLowerCase(), ch.id);
    if (!this.subscribers.has(row.id)) this.subscribers.set(row.id, new Set());
  }

  private putSub(s: SubscriptionRow): void {
    let mine = this.subsByUser.get(s.user_id);
    if (!mine) this.subsByUser.set(s.user_id, (mine = new Map<number, SubscriptionRow>()));
    mine.set(s.stream_id, s);
    let subs = this.subscribers.get(s.stream_id);
    if (!subs) this.subscribers.set(s.stream_id, (subs = new Set()));
    if (s.active) subs.add(s.user_id);
    else subs.delete(s.user_id);
  }

  /** After a change to one channel's row. */
  reloadChannel(id: number): void {
    const row = this.store.channels.byId(id);
    if (row && row.realm_id === this.realm.id) this.putChannel(row);
  }

  /** After subscriptions to a channel changed. */
  reloadSubscriptions(channelId: number): void {
    this.subscribers.set(channelId, new Set());
    for (const mine of this.subsByUser.values()) mine.delete(channelId);
    for (const s of this.store.channels.subscriptionsByStream(channelId)) this.putSub(s);
  }

  /** After one user's subscription to a channel changed. */
  reloadSubscription(userId: number, channelId: number): void {
    const row = this.store.channels.subscription(userId, channelId);
    if (row) this.putSub(row);
  }

  reloadDefaults(): void {
    this.defaults = new Set(this.store.channels.defaultStreamIds(this.realm.id));
  }

  reloadFolders(): void {
    this.folders.clear();
    for (const f of this.store.channels.foldersByRealm(this.realm.id)) this.folders.set(f.id, f);
  }

  // ---- lookups ------------------------------------------------------------------------------

  byId(id: number): Channel | undefined {
    return this.channels.get(id);
  }

  /** Case-insensitive, surrounding whitespace ignored, archived channels included. */
  byName(name: string): Channel | undefined {
    const id = this.idByLowerName.get(name.trim().toLowerCase());
    return id === undefined ? undefined : this.channels.get(id);
  }

  all(): IterableIterator<Channel> {
    return this.channels.values();
  }

  defaultChannelIds(): number[] {
    return [...this.defaults].sort((a, b) => a - b);
  }

  isDefault(channelId: number): boolean {
    return this.defaults.has(channelId);
  }

  folder(id: number): ChannelFolderRow | undefined {
    return this.folders.get(id);
  }

  allFolders(): ChannelFolderRow[] {
    return [...this.folders.values()];
  }

  isSubscribed(userId: number, channelId: number): boolean {
    return this.subscribers.get(channelId)?.has(userId) ?? false;
  }

  /** Active subscribers who are active users, ascending. */
  subscriberIds(channelId: number): number[] {
    const out: number[] = [];
    for (const id of this.subscribers.get(channelId) ?? []) {
      if (this.realm.user(id)?.is_active) out.push(id);
    }
    return out.sort((a, b) => a - b);
  }

  subscription(userId: number, channelId: number): SubscriptionRow | undefined {
    return this.subsByUser.get(userId)?.get(channelId);
  }

  /** Every subscription row of a user (active and inactive), by channel id. */
  subscriptionsOf(userId: number): ReadonlyMap<number, SubscriptionRow> {
    return this.subsByUser.get(userId) ?? new Map<number, SubscriptionRow>();
  }

  /** Facts read from the messages table: the first message, and activity within 180 days. */
  activity(
    ch: Channel,
    nowSeconds: number,
  ): { first_message_id: number | null; is_recently_active: boolean } {
    const cutoff = nowSeconds - RECENT_ACTIVITY_DAYS * 86400;
    const { first, last } = this.store.topics.activity(ch.id);
    return { first_message_id: first, is_recently_active: (last ?? ch.date_created) >= cutoff };
  }

  /** Changes whenever some channel's first message id may have (ChannelActivity.firstVersion). */
  firstMessageVersion(): number {
    return this.store.topics.firstMessageVersion();
  }

  historyPublic(ch: Channel): boolean {
    return ch.history_public_to_subscribers === 1;
  }

  // ---- permissions --------------------------------------------------------------------------

  inSetting(userId: number, value: GroupSettingValue): boolean {
    return this.realm.isUserInGroupSetting(userId, value);
  }

  /** The user's realm-level channel permissions, each computed when first asked. */
  realmMembership(userId: number): RealmChannelMembership {
    return new LazyRealmMembership(this.realm, userId);
  }

  /**
   * The facts channel-permissions.ts decides from (group memberships are computed only when a
   * rule asks for them). `overrides` lets a mutation ask about a state it is about to write (a
   * subscription, a new privacy) before the read model has it.
   */
  facts(
    userId: number,
    ch: Channel,
    overrides: { subscribed?: boolean; channel?: Partial<Channel> } = {},
  ): AccessFacts {
    const u = this.realm.user(userId);
    const c = overrides.channel ? { ...ch, ...overrides.channel } : ch;
    return {
      user: { role: u?.role ?? 600, is_active: !!u?.is_active },
      channel: {
        invite_only: c.invite_only === 1,
        is_web_public: c.is_web_public === 1,
        history_public_to_subscribers: c.history_public_to_subscribers === 1,
        deactivated: c.deactivated === 1,
      },
      subscribed: overrides.subscribed ?? this.isSubscribed(userId, ch.id),
      inChannel: new LazyChannelMembership(this.realm, userId, c.settings),
      inRealm: new LazyRealmMembership(this.realm, userId),
    };
  }

  may(userId: number, ch: Channel, action: ChannelAction): boolean {
    return may(this.facts(userId, ch), action);
  }

  administerDecision(userId: number, ch: Channel): 'ok' | 'invalid' | 'forbidden' {
    return administerDecision(this.facts(userId, ch));
  }

  addSubscribersDecision(userId: number, ch: Channel): 'ok' | 'unauthorized' | 'forbidden' {
    return addSubscribersDecision(this.facts(userId, ch));
  }

  /** Posting, for the message area. A bot's owner's membership and subscription count for it. */
  sendMessageDecision(userId: number, ch: Channel): 'ok' | 'not_allowed' | 'unauthorized' {
    const u = this.realm.user(userId);
    const owner = u?.is_bot && u.bot_owner_id !== null ? this.facts(u.bot_owner_id, ch) : undefined;
    return sendMessageDecision(this.facts(userId, ch), owner);
  }

  /**
   * Every active user who may know the channel exists, ascending. `overrides` describes the
   * channel as a mutation is about to leave it (privacy change), and `subscribers` the
   * subscribers it will have.
   */
  metadataAudience(
    ch: Channel,
    overrides: { channel?: Partial<Channel>; subscribers?: ReadonlySet<number> } = {},
  ): number[] {
    const c = { ...ch, ...overrides.channel };
    const users: { id: number; role: number }[] = [];
    for (const u of this.realm.usersById.values()) if (u.is_active) users.push(u);
    return metadataAudience({
      channel: {
        invite_only: c.invite_only === 1,
        is_web_public: c.is_web_public === 1,
        history_public_to_subscribers: c.history_public_to_subscribers === 1,
        deactivated: c.deactivated === 1,
      },
      activeUsers: users,
      subscribers: overrides.subscribers ?? this.subscribers.get(ch.id) ?? new Set<number>(),
      groupMembers: (setting) => this.realm.usersInGroupSetting(c.settings[setting]),
    });
  }
}

class LazyRealmMembership implements RealmChannelMembership {
  constructor(
    private readonly realm: RealmView,
    private readonly userId: number,
  ) {}
  private has(name: Parameters<RealmView['hasRealmPermission']>[1]): boolean {
    return this.realm.hasRealmPermission(this.userId, name);
  }
  get can_add_subscribers_group() {
    return this.has('can_add_subscribers_group');
  }
  get can_create_public_channel_group() {
    return this.has('can_create_public_channel_group');
  }
  get can_create_private_channel_group() {
    return this.has('can_create_private_channel_group');
  }
  get can_create_web_public_channel_group() {
    return this.has('can_create_web_public_channel_group');
  }
  get can_delete_any_message_group() {
    return this.has('can_delete_any_message_group');
  }
  get can_delete_own_message_group() {
    return this.has('can_delete_own_message_group');
  }
  get can_set_delete_message_policy_group() {
    return this.has('can_set_delete_message_policy_group');
  }
  get can_set_topics_policy_group() {
    return this.has('can_set_topics_policy_group');
  }
}

class LazyChannelMembership implements ChannelGroupMembership {
  constructor(
    private readonly realm: RealmView,
    private readonly userId: number,
    private readonly settings: Record<ChannelGroupSettingName, GroupSettingValue>,
  ) {}
  private has(name: ChannelGroupSettingName): boolean {
    return this.realm.isUserInGroupSetting(this.userId, this.settings[name]);
  }
  get can_add_subscribers_group() {
    return this.has('can_add_subscribers_group');
  }
  get can_remove_subscribers_group() {
    return this.has('can_remove_subscribers_group');
  }
  get can_administer_channel_group() {
    return this.has('can_administer_channel_group');
  }
  get can_send_message_group() {
    return this.has('can_send_message_group');
  }
  get can_subscribe_group() {
    return this.has('can_subscribe_group');
  }
  get can_delete_any_message_group() {
    return this.has('can_delete_any_message_group');
  }
  get can_delete_own_message_group() {
    return this.has('can_delete_own_message_group');
  }
}
