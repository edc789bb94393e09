/**
 * The client's model of the realm for one user: built from a `POST /register` snapshot, kept
 * current by `apply(events)` (the one reducer of server events), read by the views through the
 * revision signals (`rev.*`, and each message list's own). Framework-free: no DOM, no fetch;
 * fetching lives in loader.ts, the views in web/app.
 */
import { signal } from '@preact/signals-core';
import type {
  Channel,
  CustomProfileField,
  Message,
  RealmEmoji,
  RegisterResponse,
  ServerEvent,
  Subscription,
  User,
  UserGroup,
  UserSettings,
} from '../../src/client/types.js';
import {
  canPostIn,
  ChannelMembers,
  channelPermissions,
  creatableChoices,
  type ChannelPermissions,
  type Privacy,
} from './channel-settings.js';
import { isMeMessage } from './format.js';
import { inGroupSetting, type GroupSetting } from './groups.js';
import { MessageList, type FetchedMessage } from './message-list.js';
import { mutedBy, TOPIC, topicMuted } from './muting.js';
import {
  conversationIds,
  channelOf,
  dmOf,
  hidesMutedTopics,
  hidesMutedTopicsWhenDrawn,
  matches,
  mentionsUser,
  messageDmIds,
  mutingApplies,
  narrowKey,
  messagesMoved,
  sameTopic,
  type TopicMove,
  type MatchContext,
  type Narrow,
  type Names,
} from './narrow.js';
import { NAME_ORDER, Presence, type PresenceStatus, type PresenceTimes } from './presence.js';
import { TypingTracker, typingKey, type Timers } from './typing.js';
import { topicKey, Unread, type UnreadCounts } from './unread.js';
import { RecentConversations } from './recent.js';
import { UserStatuses } from './user-status.js';
import { drawnForMutes, MutedUsers } from './muted-users.js';
import type { RealmExport } from './realm-exports.js';
import { withValue } from './profile-data.js';
import type { Linkifier, Playground } from './settings-more.js';
import { applyAttachmentEvent, type Attachment, type Uploads } from './uploads.js';

export { TOPIC } from './muting.js';

export const MAX_LISTS = 10;
/** Changes to messages kept while a fetch is in flight (see ChatState.changedMeanwhile). */
export const MAX_CHANGES_KEPT = 1000;

/**
 * An event that changes a stored message's copy (its content, place, reactions, widget's
 * submessages or flags).
 */
type CopyChange = Extract<
  ServerEvent,
  | { type: 'update_message' }
  | { type: 'reaction' }
  | { type: 'submessage' }
  | { type: 'update_message_flags' }
>;

export type TopicInfo = { name: string; maxId: number };

export type Realm = {
  name: string;
  url: string;
  iconUrl: string;
  /** 'U': an administrator uploaded the icon; 'G': the default (the sidebar draws the initial). */
  iconSource: string;
  emptyTopicName: string;
  allowEditing: boolean;
  editLimitSeconds: number | null;
  deleteLimitSeconds: number | null;
  moveWithinLimitSeconds: number | null;
  mandatoryTopics: boolean;
  maxMessageLength: number;
  maxTopicLength: number;
  maxUploadMib: number;
  emojiDataUrl: string | null;
  emoji: Record<string, RealmEmoji>;
  settings: Record<string, unknown>;
  typing: { startedWaitMs: number; stoppedWaitMs: number; startedExpiryMs: number };
  presencePingSeconds: number;
  presenceOfflineSeconds: number;
  /** The organization turned presence off: everyone else is shown offline (presenceOf). */
  presenceDisabled: boolean;
};

export type Clock = { now(): number; timers: Timers };

/** What a message's row needs beyond the message (its flags live on it). */
export type StoredMessage = Message & { flags: string[]; local_failed?: boolean };

/** Local ids handed out in this page (echo()). */
let pageEchoes = 0;

export class ChatState {
  readonly selfId: number;
  self: User;
  readonly realm: Realm;
  readonly users = new Map<number, User>();
  usersComplete: boolean;
  /** The realm's custom profile fields (register's, then `custom_profile_fields` events). */
  profileFields: CustomProfileField[];
  /**
   * Names read off messages (senders, direct-message recipients) while the people are not loaded
   * yet (usersComplete false): the sidebar's conversations and the first screen name people
   * before GET /users answers, instead of "Unknown user". Emptied once it has.
   */
  private readonly namesSeen = new Map<number, string>();
  /** Subscribed channels. */
  readonly subs = new Map<number, Subscription>();
  /** Every channel the user can see (subscribed or not), for names and links. */
  readonly channels = new Map<number, Channel>();
  /**
   * Archived channels the user can see (registered with `archived_channels`): kept apart, out of
   * `channels` and `subs` (nothing is posted there, the lists leave them out), for their names
   * (a scheduled message that failed to go to one) and to come back whole when unarchived.
   */
  readonly archived = new Map<number, { channel: Channel; sub: Subscription | null }>();
  readonly userTopics = new Map<string, number>();
  /** The topics' names as the user's topic policies give them (userTopics' keys are folded). */
  private readonly userTopicNames = new Map<string, string>();
  readonly groups = new Map<number, UserGroup & { direct_subgroup_ids?: number[] }>();
  settings: UserSettings;
  readonly unread: Unread;
  /** The Recent conversations view's conversations (recent.ts), from every message seen. */
  readonly recent: RecentConversations;
  readonly messages = new Map<number, StoredMessage>();
  /** Message lists by narrow key, least recently used first. */
  readonly lists = new Map<string, MessageList>();
  /** A channel's topics, newest first (fetched when the channel is opened, then kept live). */
  readonly topics = new Map<number, TopicInfo[]>();
  /**
   * Channels whose topics are being fetched, with what the events said meanwhile (the answer
   * may be older): topics that got a message, and whether messages moved in or out.
   */
  private readonly topicsAsked = new Map<
    number,
    { noted: TopicInfo[]; moved: boolean; moves: { mv: TopicMove; newest: number }[] }
  >();
  /**
   * Channels whose topics held in `topics` may be out of date (messages moved in or out, some
   * deleted): fetched again, and shown as they are until the answer (the sidebar does not go
   * back to "Loading topics…", nor lose the row that had the focus to a blank).
   */
  private readonly topicsOutdated = new Set<number>();
  /**
   * Where whole topics went (the moves onward, a rename or resolving among them), by where they
   * were (topicKey), the last MOVES_KEPT: the sidebar's focus follows a topic's row there.
   */
  private readonly topicsMovedTo = new Map<string, { streamId: number; topic: string }>();
  /**
   * Edits, moves, reactions and flags that arrived while a list was being fetched, in order (at
   * most MAX_CHANGES_KEPT, the oldest dropped: a fetch that needed one is asked again, see
   * changesLostSince). The answer may be older than them, and a message not held yet had no copy
   * for them to change: its fetched copy gets them when stored. Each is harmless on a copy that
   * already has it (content and place are set, a reaction or flag is added only when absent).
   * Forgotten when a fetch starts with none in flight.
   */
  private changedMeanwhile: CopyChange[] = [];
  /** Changes ever kept (the last one's number), and the number of the last one dropped. */
  private changesKept = 0;
  private lastChangeDropped = 0;
  /**
   * The ids of the user's starred messages (register's `starred_messages`, kept by the star
   * flag's events and by deletions), for the Starred view's count.
   */
  readonly starred: Set<number>;
  /** Direct-message conversations (key: the other participants' ids) → newest message id. */
  readonly dms = new Map<string, number>();
  readonly typing: TypingTracker;
  /** Everyone's presence (register's `presences`, the pings' answers, `presence` events). */
  readonly presence: Presence;
  /** The members of the channels whose settings were opened (channel-settings.ts). */
  readonly members: ChannelMembers;
  /** Everyone's status text and emoji (register's `user_status`, `user_status` events). */
  readonly statuses: UserStatuses;
  maxMessageId: number;
  readonly rev = {
    users: signal(0),
    channels: signal(0),
    unread: signal(0),
    dms: signal(0),
    topics: signal(0),
    settings: signal(0),
    starred: signal(0),
    presence: signal(0),
    status: signal(0),
    /** Alert words, linkifiers, playgrounds, default channels, uploads (settings-more.ts). */
    extras: signal(0),
    /** Who the user muted (muted-users.ts). */
    muted: signal(0),
    /** Invitations changed (`invites_changed`: the Invitations panel fetches them again). */
    invites: signal(0),
    /**
     * A stored message changed (edited, moved, its flags or reactions): what shows one message
     * outside its list follows it (the edit history and read receipts dialogs ask again).
     */
    messages: signal(0),
  };
  /** The realm's exports once the Data exports panel fetched them, then `realm_export` events. */
  realmExports: RealmExport[] | null = null;
  /** The users the user muted, with when (`muted_users`, then its events). */
  readonly mutedUsers: MutedUsers;
  /** The user's alert words (`alert_words`, then its events). */
  alertWords: string[];
  /** The realm's linkifiers, in processing order (`realm_linkifiers`). */
  linkifiers: Linkifier[];
  /** The realm's code playgrounds (`realm_playgrounds`). */
  playgrounds: Playground[];
  /** The ids of the realm's default channels (`realm_default_streams`). */
  defaultStreams: number[];
  /** The user's uploads once the settings fetched them (GET /attachments), then their events. */
  uploads: Uploads | null = null;
  private readonly clock: Clock;
  private localSeq = 0;
  /** local_id → the echoed message's temporary id. */
  readonly echoes = new Map<string, number>();

  /**
   * `me` (from `GET /users/me`) stands in for the user's own fields when the snapshot was fetched
   * without `realm_user` (the users then come later: setUsers).
   */
  constructor(r: RegisterResponse, clock: Clock, me?: User) {
    this.clock = clock;
    this.selfId = me?.user_id ?? r.user_id;
    if (me) this.users.set(me.user_id, me);
    for (const u of r.realm_users ?? []) this.users.set(u.user_id, u);
    for (const u of r.realm_non_active_users ?? [])
      this.users.set(u.user_id, { ...u, is_active: false });
    for (const u of r.cross_realm_bots ?? []) this.users.set(u.user_id, u);
    this.usersComplete = r.realm_users !== undefined;
    this.profileFields = r.custom_profile_fields ?? [];
    this.alertWords = (r.alert_words as string[] | undefined) ?? [];
    this.linkifiers = (r.realm_linkifiers as Linkifier[] | undefined) ?? [];
    this.playgrounds = (r.realm_playgrounds as Playground[] | undefined) ?? [];
    this.defaultStreams = (r.realm_default_streams as number[] | undefined) ?? [];
    this.mutedUsers = new MutedUsers(r.muted_users);
    this.self = this.users.get(this.selfId) ?? {
      user_id: r.user_id,
      email: r.email,
      full_name: r.full_name,
      is_bot: false,
      is_admin: r.is_admin,
    };
    for (const s of r.subscriptions ?? []) {
      if (s.is_archived === true) this.archived.set(s.stream_id, { channel: s, sub: s });
      else {
        this.subs.set(s.stream_id, s);
        this.channels.set(s.stream_id, s);
      }
    }
    for (const s of [...(r.unsubscribed ?? []), ...(r.never_subscribed ?? [])]) {
      if (s.is_archived === true) this.archived.set(s.stream_id, { channel: s, sub: null });
      else this.channels.set(s.stream_id, s);
    }
    for (const t of r.user_topics ?? []) {
      this.userTopics.set(topicKey(t.stream_id, t.topic_name), t.visibility_policy);
      this.userTopicNames.set(topicKey(t.stream_id, t.topic_name), t.topic_name);
    }
    for (const g of r.realm_user_groups ?? []) this.groups.set(g.id, g);
    this.settings = r.user_settings ?? ({} as UserSettings);
    this.unread = Unread.fromRegister(this.selfId, r.unread_msgs);
    this.recent = new RecentConversations(this.selfId);
    this.starred = new Set(r.starred_messages ?? []);
    for (const c of r.recent_private_conversations ?? []) {
      this.dms.set(conversationIds(c.user_ids, this.selfId).join(','), c.max_message_id);
    }
    for (const key of this.unread.ids().map((id) => this.unread.where(id))) {
      if (key?.kind === 'dm' && !this.dms.has(key.key)) this.dms.set(key.key, 0);
    }
    this.maxMessageId = r.max_message_id ?? 0;
    this.members = new ChannelMembers(this.selfId);
    const settings = r as Record<string, unknown>;
    const num = (k: string, d: number | null): number | null =>
      typeof settings[k] === 'number' ? settings[k] : d;
    this.realm = {
      name: r.realm_name ?? 'Confab',
      url: r.realm_url ?? '',
      iconUrl: r.realm_icon_url ?? '',
      iconSource: typeof settings.realm_icon_source === 'string' ? settings.realm_icon_source : 'G',
      emptyTopicName: r.realm_empty_topic_display_name ?? 'general chat',
      allowEditing: r.realm_allow_message_editing ?? true,
      editLimitSeconds: r.realm_message_content_edit_limit_seconds ?? null,
      deleteLimitSeconds: r.realm_message_content_delete_limit_seconds ?? null,
      moveWithinLimitSeconds: r.realm_move_messages_within_stream_limit_seconds ?? null,
      mandatoryTopics: r.realm_mandatory_topics ?? false,
      maxMessageLength: r.max_message_length ?? 10_000,
      maxTopicLength: r.max_topic_length ?? 60,
      maxUploadMib: r.max_file_upload_size_mib ?? 25,
      emojiDataUrl: r.server_emoji_data_url ?? null,
      emoji: r.realm_emoji ?? {},
      settings,
      typing: {
        startedWaitMs: num('server_typing_started_wait_period_milliseconds', 10_000)!,
        stoppedWaitMs: num('server_typing_stopped_wait_period_milliseconds', 5_000)!,
        startedExpiryMs: num('server_typing_started_expiry_period_milliseconds', 15_000)!,
      },
      presencePingSeconds: num('server_presence_ping_interval_seconds', 60)!,
      presenceOfflineSeconds: num('server_presence_offline_threshold_seconds', 140)!,
      presenceDisabled: r.realm_presence_disabled === true,
    };
    this.presence = new Presence(this.realm.presenceOfflineSeconds, r);
    this.statuses = new UserStatuses(r.user_status);
    this.typing = new TypingTracker(
      this.realm.typing.startedExpiryMs,
      () => clock.now(),
      clock.timers,
    );
  }

  /** The realm's exports as GET /export/realm gave them (events keep them from then on). */
  setRealmExports(list: RealmExport[]): void {
    this.realmExports = list;
    this.rev.extras.value++;
  }

  /** The user's uploads as GET /attachments gave them (events keep them from then on). */
  setUploads(list: Attachment[], spaceUsed: number | null): void {
    this.uploads = { list, spaceUsed };
    this.rev.extras.value++;
  }

  // ---- Lookups -------------------------------------------------------------------------

  userName(id: number): string {
    const known =
      this.users.get(id)?.full_name ?? (id === this.selfId ? this.self.full_name : null);
    if (known !== null) return known;
    if (this.usersComplete) return 'Unknown user';
    // Not loaded yet: a name a message gave, else a neutral mark until the people arrive.
    return this.namesSeen.get(id) ?? '…';
  }

  /** Remembers the names a message carries while the people are not loaded (namesSeen). */
  private learnNames(m: Message): void {
    if (this.usersComplete) return;
    this.namesSeen.set(m.sender_id, m.sender_full_name);
    if (typeof m.display_recipient !== 'string')
      for (const r of m.display_recipient) this.namesSeen.set(r.id, r.full_name);
  }

  channelName(id: number): string {
    return this.channels.get(id)?.name ?? this.archived.get(id)?.channel.name ?? 'unknown';
  }

  /** Archiving (`is_archived` true): the channel leaves `channels` and `subs`, kept apart. */
  private archiveChannel(id: number): void {
    const channel = this.channels.get(id);
    if (!channel) return;
    const sub = this.subs.get(id);
    this.archived.set(id, {
      channel: { ...channel, is_archived: true },
      sub: sub ? { ...sub, is_archived: true } : null,
    });
    this.channels.delete(id);
    this.subs.delete(id);
  }

  /** Unarchiving: the channel back as it was (a subscription too, if the user had one). */
  private unarchiveChannel(id: number): void {
    const a = this.archived.get(id);
    if (!a) return;
    this.archived.delete(id);
    if (a.sub) {
      const sub = { ...a.sub, is_archived: false };
      this.subs.set(id, sub);
      this.channels.set(id, sub);
    } else this.channels.set(id, { ...a.channel, is_archived: false });
  }

  channelByName(name: string): Channel | undefined {
    const lower = name.toLowerCase();
    for (const c of this.channels.values()) if (c.name.toLowerCase() === lower) return c;
    return undefined;
  }

  names(): Names {
    return {
      channelName: (id) => this.channels.get(id)?.name,
      channelId: (name) => this.channelByName(name)?.stream_id,
      userName: (id) => this.users.get(id)?.full_name,
      userId: (email) => {
        const e = email.toLowerCase();
        for (const u of this.users.values()) if (u.email.toLowerCase() === e) return u.user_id;
        return undefined;
      },
      selfId: this.selfId,
    };
  }

  private subsCache: { rev: number; subs: Subscription[] } | null = null;

  /**
   * Subscribed channels in sidebar order (pinned first, then by name, case and accents aside),
   * sorted once per change of the channels: the sidebar and the compose box ask on every draw.
   */
  sortedSubs(): readonly Subscription[] {
    const rev = this.rev.channels.peek();
    if (this.subsCache?.rev !== rev) {
      const subs = [...this.subs.values()].sort(
        (a, b) => Number(b.pin_to_top) - Number(a.pin_to_top) || NAME_ORDER.compare(a.name, b.name),
      );
      this.subsCache = { rev, subs };
    }
    return this.subsCache.subs;
  }

  /**
   * The sidebar's groups of channels, as the reference's: those pinned to the top (their own
   * group, first), then the others; each by name.
   */
  channelGroups(): { pinned: readonly Subscription[]; others: readonly Subscription[] } {
    const subs = this.sortedSubs();
    const n = subs.findIndex((s) => !s.pin_to_top);
    const cut = n === -1 ? subs.length : n;
    return { pinned: subs.slice(0, cut), others: subs.slice(cut) };
  }

  /** Display name of a topic (the empty topic has the realm's name for it). */
  topicName(topic: string): string {
    return topic === '' ? this.realm.emptyTopicName : topic;
  }

  /**
   * The count the Starred view shows: its starred messages, or null when the user turned such
   * counts off (the `starred_message_counts` setting, on unless said otherwise).
   */
  starredCount(): number | null {
    return this.settings.starred_message_counts === false ? null : this.starred.size;
  }

  private countsCache: { key: string; counts: UnreadCounts } | null = null;

  /**
   * The unread counts (unread.counts with this user's muting), computed once per change of the
   * unread bookkeeping or the channels' settings: the sidebar and the title both ask often.
   */
  unreadCounts(): UnreadCounts {
    const key = `${this.rev.unread.peek()}:${this.rev.channels.peek()}`;
    if (this.countsCache?.key !== key) {
      this.countsCache = {
        key,
        counts: this.unread.counts({
          mutedTopic: (id, t, key) => this.mutedTopic(id, t, key),
          subscribed: (id) => this.subs.has(id) && !this.subs.get(id)!.is_archived,
        }),
      };
    }
    return this.countsCache.counts;
  }

  /** Whether a channel's topic is muted for this user (muting the channel mutes its topics). */
  mutedTopic(streamId: number, topic: string, key = topicKey(streamId, topic)): boolean {
    return topicMuted(this.userTopics.get(key) ?? TOPIC.INHERIT, this.channelMuted(streamId));
  }

  /**
   * Whether the user muted a channel. A channel left keeps its muting, as the server keeps it
   * (the subscription's row stays, and `in:home` still leaves it out; joining again brings the
   * muting back) and as the reference's web app keeps it (sub.is_muted of an unsubscribed
   * channel): leaving one changes nothing in All messages.
   */
  channelMuted(streamId: number): boolean {
    const s = this.subs.get(streamId) ?? (this.channels.get(streamId) as Partial<Subscription>);
    return s?.is_muted ?? false;
  }

  /** What mutes a topic, if anything: its channel, or itself (muting.ts mutedBy). */
  mutedBy(streamId: number, topic: string): 'channel' | 'topic' | null {
    return mutedBy(this.topicPolicy(streamId, topic), this.channelMuted(streamId));
  }

  /** Whether the topic itself is muted (its policy "muted"): what a channel's view leaves out. */
  topicMutedItself(streamId: number, topic: string): boolean {
    return this.userTopics.get(topicKey(streamId, topic)) === TOPIC.MUTED;
  }

  /**
   * A list's window as the view draws it: in the views that hide them as they draw
   * (narrow.hidesMutedTopicsWhenDrawn: a sender's messages, unread…), without the messages of
   * topics muted as such, but those that mention the user, as the reference's web app.
   */
  drawnIds(list: MessageList): number[] {
    const ids = this.drawnForMutedUsers(list);
    if (!hidesMutedTopicsWhenDrawn(list.narrow)) return ids;
    return ids.filter((id) => {
      const m = this.messages.get(id);
      return (
        m === undefined ||
        m.type !== 'stream' ||
        !this.topicMutedItself(m.stream_id!, m.subject) ||
        mentionsUser(m.flags)
      );
    });
  }

  /**
   * A list's window without the one-on-one direct messages with someone the user muted, but in
   * that conversation's own view (muted-users.ts drawnForMutes). They stay in the list (paging).
   */
  private drawnForMutedUsers(list: MessageList): number[] {
    const ids = list.windowIds();
    if (this.mutedUsers.size === 0) return ids;
    const oneOnOne = dmOf(list.narrow)?.length === 1;
    return ids.filter((id) => {
      const m = this.messages.get(id);
      if (m === undefined || m.type === 'stream') return true;
      return drawnForMutes(messageDmIds(m, this.selfId), this.mutedUsers, oneOnOne);
    });
  }

  /** The topics of a channel the user muted as such, by their names (narrow.apiNarrow). */
  mutedTopicsIn(streamId: number): string[] {
    const prefix = topicKey(streamId, '');
    const out: string[] = [];
    for (const [key, policy] of this.userTopics) {
      if (policy === TOPIC.MUTED && key.startsWith(prefix)) out.push(this.userTopicNames.get(key)!);
    }
    return out.sort();
  }

  /** What narrow.matches needs for a message with these flags (the user, their muting). */
  matchContext(flags: readonly string[]): MatchContext {
    return {
      selfId: this.selfId,
      flags,
      mutedTopic: (streamId, topic) => this.mutedTopic(streamId, topic),
      topicMutedItself: (streamId, topic) => this.topicMutedItself(streamId, topic),
    };
  }

  /** Counts the changes of the user's muting (mutingMark, mutingChangedSince). */
  private mutingChanges = 0;

  /** Where the muting changes are when a fetch starts (for mutingChangedSince). */
  mutingMark(): number {
    return this.mutingChanges;
  }

  /**
   * Whether the user's muting changed since `mark`: an answer the server made before may hold
   * what is muted now, or lack what is not any more (for the narrows muting applies to).
   */
  mutingChangedSince(mark: number): boolean {
    return this.mutingChanges > mark;
  }

  /**
   * The user's muting changed (a topic's policy, a channel muted or unmuted; `muted`: whether
   * something was muted, `unmuted`: whether something may show again), as the reference's web
   * app follows it: the lists muting applies to (the combined feed; `itself`: a channel's view,
   * by its topic muted as such) drop at once what they no longer hold; what may join one is only
   * on the server (muting kept it out of the fetches): the list is fetched again (stale; a fetch
   * on its way is asked again, see mutingChangedSince). So is one left with nothing where the
   * server has more (all it held muted): an empty run has no end to page from.
   */
  private mutingChanged(
    home: { muted: boolean; unmuted: boolean },
    itself?: { streamId: number; muted: boolean; unmuted: boolean },
  ): void {
    const changed = (c?: { muted: boolean; unmuted: boolean }) => !!c && (c.muted || c.unmuted);
    if (!changed(home) && !changed(itself)) return;
    this.mutingChanges++;
    for (const l of this.lists.values()) {
      let change = home;
      if (hidesMutedTopics(l.narrow)) {
        if (!itself || channelOf(l.narrow) !== itself.streamId) continue;
        change = itself;
      } else if (!mutingApplies(l.narrow)) continue;
      if (!changed(change)) continue;
      const gone = l.ids.filter((id) => {
        const m = this.messages.get(id);
        return m !== undefined && matches(l.narrow, m, this.matchContext(m.flags)) === false;
      });
      if (gone.length) l.remove(gone);
      // `-in:home` holds what muting hides: what was muted joins it.
      const negated = l.narrow.terms.some((t) => t.operator === 'in' && t.negated);
      const emptied = l.size === 0 && !(l.foundOldest && l.foundNewest);
      if (((negated ? change.muted : change.unmuted) || emptied) && l.loaded && !l.loading)
        l.markStale();
    }
  }

  topicPolicy(streamId: number, topic: string): number {
    return this.userTopics.get(topicKey(streamId, topic)) ?? TOPIC.INHERIT;
  }

  /** The name of a direct-message conversation ("You" for one's own). */
  dmName(ids: readonly number[]): string {
    if (ids.length === 1 && ids[0] === this.selfId) return `${this.self.full_name} (you)`;
    return ids.map((id) => this.userName(id)).join(', ');
  }

  inGroup(setting: GroupSetting | undefined): boolean {
    return inGroupSetting(setting, this.selfId, this.groups);
  }

  get isAdmin(): boolean {
    return (
      this.self.is_admin === true || this.self.is_owner === true || (this.self.role ?? 400) <= 200
    );
  }

  /** The kinds of channel the user may create (none: no "Create channel"). */
  creatableChannels(): Privacy[] {
    return creatableChoices((g) => this.inGroup(g), {
      publicGroup: this.realmGroup('realm_can_create_public_channel_group'),
      privateGroup: this.realmGroup('realm_can_create_private_channel_group'),
    });
  }

  /** What the user may change in a channel (its settings' controls). */
  channelPermissions(streamId: number): ChannelPermissions {
    const ch = this.channels.get(streamId);
    if (!ch) return { administer: false, addMembers: false, removeMembers: false };
    return channelPermissions(ch, {
      admin: this.isAdmin,
      guest: this.self.is_guest === true || this.self.role === 600,
      subscribed: this.subs.has(streamId),
      inGroup: (g) => this.inGroup(g),
      realmAddSubscribers: this.realmGroup('realm_can_add_subscribers_group'),
    });
  }

  /**
   * Whether the user may post in a channel (canPostIn); a channel the app does not know
   * (removed from it, archived): no.
   */
  canPostIn(streamId: number): boolean {
    const ch = this.channels.get(streamId);
    if (!ch) return false;
    return canPostIn(ch, {
      guest: this.self.is_guest === true || this.self.role === 600,
      subscribed: this.subs.has(streamId),
      inGroup: (g) => this.inGroup(g),
    });
  }

  get isModerator(): boolean {
    return (this.self.role ?? 400) <= 300 || this.isAdmin;
  }

  /** The realm's own fields from its settings, after a `realm` event changed them. */
  private syncRealm(): void {
    const set = this.realm.settings;
    const limit = (k: string) => (typeof set[k] === 'number' ? set[k] : null);
    if (typeof set.realm_name === 'string') this.realm.name = set.realm_name;
    // The `icon` update_dict event ({icon_url, icon_source}) lands in the settings as these.
    if (typeof set.realm_icon_url === 'string') this.realm.iconUrl = set.realm_icon_url;
    if (typeof set.realm_icon_source === 'string') this.realm.iconSource = set.realm_icon_source;
    this.realm.allowEditing = set.realm_allow_message_editing !== false;
    this.realm.editLimitSeconds = limit('realm_message_content_edit_limit_seconds');
    this.realm.deleteLimitSeconds = limit('realm_message_content_delete_limit_seconds');
    this.realm.moveWithinLimitSeconds = limit('realm_move_messages_within_stream_limit_seconds');
    this.realm.mandatoryTopics = set.realm_mandatory_topics === true;
    this.realm.presenceDisabled = set.realm_presence_disabled === true;
  }

  /** Whether the user may add custom emoji (never a guest). */
  canAddCustomEmoji(): boolean {
    if (this.self.is_guest === true || (this.self.role ?? 400) >= 600) return false;
    return this.inGroup(this.realmGroup('realm_can_add_custom_emoji_group'));
  }

  private realmGroup(name: string): GroupSetting | undefined {
    return this.realm.settings[name] as GroupSetting | undefined;
  }

  /** Whether the user may edit a message's content now. */
  canEditContent(m: Message, nowSeconds: number): boolean {
    // A poll's or to-do list's content cannot be edited (the server refuses: "Widgets cannot be
    // edited."); its topic can.
    return this.ownEditable(m, nowSeconds) && !(m.submessages && m.submessages.length > 0);
  }

  /** The user's own message, within the realm's edit limit. */
  private ownEditable(m: Message, nowSeconds: number): boolean {
    if (m.sender_id !== this.selfId || !this.realm.allowEditing || m.local_id !== undefined)
      return false;
    const limit = this.realm.editLimitSeconds;
    return limit === null || limit === 0 || nowSeconds - m.timestamp < limit;
  }

  /** Whether the user may change a message's topic now. */
  canEditTopic(m: Message, nowSeconds: number): boolean {
    if (m.type !== 'stream' || m.local_id !== undefined) return false;
    if (!this.inGroup(this.realmGroup('realm_can_move_messages_between_topics_group'))) {
      return this.ownEditable(m, nowSeconds);
    }
    if (this.isModerator) return true;
    const limit = this.realm.moveWithinLimitSeconds;
    return limit === null || nowSeconds - m.timestamp < limit;
  }

  canDelete(m: Message, nowSeconds: number): boolean {
    if (m.local_id !== undefined) return false;
    if (this.inGroup(this.realmGroup('realm_can_delete_any_message_group'))) return true;
    if (m.sender_id !== this.selfId) return false;
    if (!this.inGroup(this.realmGroup('realm_can_delete_own_message_group'))) return false;
    const limit = this.realm.deleteLimitSeconds;
    return limit === null || nowSeconds - m.timestamp < limit;
  }

  canInviteByEmail(): boolean {
    return (
      this.inGroup(this.realmGroup('realm_can_invite_users_group')) ||
      this.realm.settings.can_invite_others_to_realm === true
    );
  }

  canCreateInviteLink(): boolean {
    return this.inGroup(this.realmGroup('realm_create_multiuse_invite_group'));
  }

  // ---- Message lists -------------------------------------------------------------------

  /** The list of a narrow (made when first asked for), most recently used last. */
  list(narrow: Narrow): MessageList {
    const key = narrowKey(narrow);
    let l = this.lists.get(key);
    if (l) {
      this.lists.delete(key);
    } else {
      l = new MessageList(narrow);
    }
    this.lists.set(key, l);
    while (this.lists.size > MAX_LISTS) {
      const oldest = this.lists.keys().next().value!;
      this.lists.delete(oldest);
      this.collectMessages();
    }
    return l;
  }

  /** Drops stored messages that no list holds any more (what memory holds stays bounded). */
  collectMessages(): void {
    const live = new Set<number>();
    for (const l of this.lists.values()) for (const id of l.ids) live.add(id);
    for (const id of this.messages.keys()) if (!live.has(id)) this.messages.delete(id);
  }

  /** A fetch of a list is about to start: what earlier fetches saw is forgotten if none is in flight. */
  fetchStarting(): void {
    for (const l of this.lists.values()) if (l.fetching) return;
    this.changedMeanwhile = [];
  }

  /**
   * Messages fetched for a list: stored (unless events already keep a newer copy), with the
   * edits, moves, reactions and flags that arrived while they were on their way. Returns the ids
   * that such a move took out of `narrow` (the list leaves them out).
   */
  ingest(messages: readonly Message[], narrow?: Narrow): Set<number> {
    const movedOut = new Set<number>();
    const learning = !this.usersComplete && messages.length > 0;
    for (const fetched of messages) {
      if (learning) this.learnNames(fetched);
      if (fetched.id > this.maxMessageId) this.maxMessageId = fetched.id;
      let m = this.messages.get(fetched.id);
      if (!m) {
        // A search's highlighting stays with the search's list (MessageList.keepHighlights),
        // not on the message that every list shows.
        const { match_content: _c, match_subject: _s, ...copy } = fetched as FetchedMessage;
        m = { ...copy, flags: fetched.flags ?? [] };
        let moved = false;
        for (const e of this.changedMeanwhile) {
          if (!changeConcerns(e, m.id)) continue;
          m = this.changeCopy(e, m);
          if (e.type === 'update_message' && isMove(e)) moved = true;
        }
        this.messages.set(m.id, m);
        if (moved && narrow && !matches(narrow, m, this.matchContext(m.flags))) {
          movedOut.add(m.id);
        }
      }
      if (this.unread.oldUnreadsMissing && !m.flags.includes('read') && !this.unread.has(m.id)) {
        this.unread.addMessage(m, m.flags);
        this.rev.unread.value++;
      }
    }
    // Names drawn as "…" before these messages came can be drawn now.
    if (learning) this.rev.users.value++;
    // Where they are now (a move meanwhile applied), for the Recent conversations view.
    this.recent.add(messages.map((m) => this.messages.get(m.id) ?? m));
    return movedOut;
  }

  /** Keeps a change for the copies fetched lists will bring, while any list is being fetched. */
  private keepChange(e: CopyChange): void {
    let fetching = false;
    for (const l of this.lists.values()) if (l.fetching) fetching = true;
    if (!fetching) return;
    this.changedMeanwhile.push(e);
    this.changesKept++;
    if (this.changedMeanwhile.length > MAX_CHANGES_KEPT) {
      this.changedMeanwhile.shift();
      this.lastChangeDropped = this.changesKept - MAX_CHANGES_KEPT;
    }
  }

  /** Where the changes kept are when a fetch starts (for changesLostSince). */
  changeMark(): number {
    return this.changesKept;
  }

  /**
   * Whether a change made after `mark` was dropped (more came than are kept): a fetch started
   * there brings copies that may lack it, to be asked again rather than stored.
   */
  changesLostSince(mark: number): boolean {
    return this.lastChangeDropped > mark;
  }

  /** A message's copy with what an event did to it (the same copy when nothing changes). */
  private changeCopy(e: CopyChange, m: StoredMessage): StoredMessage {
    if (e.type === 'submessage') {
      const subs = m.submessages ?? [];
      if (subs.some((x) => x.id === e.submessage_id)) return m;
      const sub = {
        id: e.submessage_id,
        message_id: e.message_id,
        sender_id: e.sender_id,
        msg_type: e.msg_type,
        content: e.content,
      };
      return { ...m, submessages: [...subs, sub].sort((a, b) => a.id - b.id) };
    }
    if (e.type === 'reaction') {
      const same = (r: { user_id: number; emoji_code: string; reaction_type: string }) =>
        r.user_id === e.user_id &&
        r.emoji_code === e.emoji_code &&
        r.reaction_type === e.reaction_type;
      if (e.op === 'add') {
        if (m.reactions.some(same)) return m;
        const r = {
          emoji_name: e.emoji_name,
          emoji_code: e.emoji_code,
          reaction_type: e.reaction_type,
          user_id: e.user_id,
        };
        return { ...m, reactions: [...m.reactions, r] };
      }
      return m.reactions.some(same) ? { ...m, reactions: m.reactions.filter((r) => !same(r)) } : m;
    }
    if (e.type === 'update_message_flags') {
      const op = e.op ?? e.operation;
      const has = m.flags.includes(e.flag);
      if (op === 'add' && !has) return { ...m, flags: [...m.flags, e.flag] };
      if (op === 'remove' && has) return { ...m, flags: m.flags.filter((f) => f !== e.flag) };
      return m;
    }
    let next = m;
    if (e.rendered_content !== undefined && e.message_id === m.id) {
      next = {
        ...next,
        content: e.rendered_content,
        last_edit_timestamp: e.rendering_only ? next.last_edit_timestamp : e.edit_timestamp,
        is_me_message: e.is_me_message ?? next.is_me_message,
        flags: e.flags ?? next.flags,
      };
    }
    if (isMove(e) && e.message_ids.includes(m.id)) {
      next = {
        ...next,
        stream_id: e.new_stream_id ?? next.stream_id,
        display_recipient:
          e.new_stream_id !== undefined
            ? this.channelName(e.new_stream_id)
            : next.display_recipient,
        subject: e.subject ?? e.topic ?? next.subject,
        last_moved_timestamp: e.edit_timestamp,
      };
    }
    return next;
  }

  private touchLists(id: number): void {
    for (const l of this.lists.values()) if (l.has(id)) l.rev.value++;
  }

  /**
   * A user's new name or avatar on the messages they sent (the rows show the message's own
   * sender_full_name and avatar_url), as the reference's web app does.
   */
  private onSenderChange(p: { user_id: number; full_name?: string; avatar_url?: string | null }) {
    const change: Partial<StoredMessage> = {};
    if (p.full_name !== undefined) change.sender_full_name = p.full_name;
    if (p.avatar_url !== undefined) change.avatar_url = p.avatar_url;
    if (Object.keys(change).length === 0) return;
    // The messages that mention a renamed user are drawn again too: the rows show a mention
    // with the name the user has now (message.tsx, decorate).
    const mark = `data-user-id="${p.user_id}"`;
    for (const [id, m] of this.messages) {
      if (m.sender_id === p.user_id) this.replace(id, (old) => ({ ...old, ...change }));
      else if (p.full_name !== undefined && m.content.includes(mark))
        this.replace(id, (old) => ({ ...old }));
    }
  }

  private replace(id: number, change: (m: StoredMessage) => StoredMessage): void {
    const m = this.messages.get(id);
    if (!m) return;
    const next = change(m);
    if (next === m) return;
    this.messages.set(id, next);
    this.touchLists(id);
    this.rev.messages.value++;
  }

  // ---- Local echo ------------------------------------------------------------------------

  /**
   * A message being sent, shown at once at the bottom of the lists it belongs in; replaced when
   * the server's `message` event (carrying our `local_id`) arrives. Returns its local id.
   */
  echo(
    draft:
      | { type: 'stream'; streamId: number; topic: string; content: string; html: string }
      | { type: 'private'; userIds: number[]; content: string; html: string },
  ): string {
    // Unique in the page, not only in this state: a send from before a new registration still
    // comes back with its local id, which must not name one of this state's echoes.
    const localId = `${++pageEchoes}`;
    ++this.localSeq;
    const id = this.maxMessageId + this.localSeq / 1000;
    const base = {
      id,
      local_id: localId,
      sender_id: this.selfId,
      sender_full_name: this.self.full_name,
      sender_email: this.self.email,
      avatar_url: this.self.avatar_url ?? null,
      timestamp: Math.floor(this.clock.now() / 1000),
      content: draft.html,
      // Drawn as the server's copy will be (a me-message: the action after the name).
      is_me_message: isMeMessage(draft.content),
      reactions: [],
      flags: ['read'],
    };
    const m: StoredMessage =
      draft.type === 'stream'
        ? {
            ...base,
            type: 'stream',
            stream_id: draft.streamId,
            subject: draft.topic,
            display_recipient: this.channelName(draft.streamId),
          }
        : {
            ...base,
            type: 'private',
            subject: '',
            display_recipient: [...new Set([...draft.userIds, this.selfId])].map((uid) => ({
              id: uid,
              email: this.users.get(uid)?.email ?? '',
              full_name: this.userName(uid),
            })),
          };
    this.messages.set(id, m);
    this.echoes.set(localId, id);
    for (const l of this.lists.values()) {
      if (matches(l.narrow, m, this.matchContext(m.flags))) l.addLive(id);
    }
    return localId;
  }

  /** Sending failed: the echo stays, marked, for a retry or to be dropped. */
  echoFailed(localId: string): void {
    const id = this.echoes.get(localId);
    if (id !== undefined) this.replace(id, (m) => ({ ...m, local_failed: true }));
  }

  /** A retry of a failed echo: shown as being sent again. */
  /**
   * A failed echo sent again: shown as sending. False when it is not a failed echo (sending
   * already: "Try again" twice before a drawing; or gone), and then nothing is to be sent.
   */
  echoRetrying(localId: string): boolean {
    const id = this.echoes.get(localId);
    if (id === undefined || this.messages.get(id)?.local_failed !== true) return false;
    this.replace(id, (m) => ({ ...m, local_failed: false }));
    return true;
  }

  dropEcho(localId: string): void {
    const id = this.echoes.get(localId);
    if (id === undefined) return;
    this.echoes.delete(localId);
    this.messages.delete(id);
    for (const l of this.lists.values()) l.remove([id]);
  }

  // ---- The reducer -----------------------------------------------------------------------

  /** Applies events in order; returns the new messages worth a notification check. */
  apply(events: readonly ServerEvent[]): StoredMessage[] {
    const arrived: StoredMessage[] = [];
    for (const e of events) {
      const m = this.applyOne(e);
      if (m) arrived.push(m);
    }
    return arrived;
  }

  private applyOne(e: ServerEvent): StoredMessage | null {
    switch (e.type) {
      case 'message':
        return this.onMessage(e.message, e.flags, e.local_message_id);
      case 'update_message':
        this.keepChange(e);
        this.onUpdateMessage(e);
        return null;
      case 'delete_message':
        this.onDelete(e.message_ids ?? (e.message_id !== undefined ? [e.message_id] : []));
        // Its topic may have gone with them (a topic deleted): the channel's topics are asked
        // again, as after a move.
        if (e.message_type === 'stream' && e.stream_id !== undefined) {
          this.outdateTopics(e.stream_id);
          const asked = this.topicsAsked.get(e.stream_id);
          if (asked) asked.moved = true;
          this.rev.topics.value++;
        }
        return null;
      case 'update_message_flags':
        this.keepChange(e);
        this.onFlags(e);
        return null;
      case 'reaction':
      case 'submessage':
        this.keepChange(e);
        this.replace(e.message_id, (m) => this.changeCopy(e, m));
        return null;
      case 'subscription':
        this.members.apply(e);
        this.onSubscription(e);
        return null;
      case 'stream':
        this.members.apply(e);
        if (e.op === 'create') for (const s of e.streams) this.channels.set(s.stream_id, s);
        else if (e.op === 'delete') {
          for (const s of e.streams) {
            this.channels.delete(s.stream_id);
            this.subs.delete(s.stream_id);
          }
        } else if (e.op === 'update' && e.property === 'is_archived') {
          if (e.value === true) this.archiveChannel(e.stream_id);
          else this.unarchiveChannel(e.stream_id);
        } else if (e.op === 'update') {
          // A description comes with its HTML.
          const change =
            e.rendered_description !== undefined
              ? { [e.property]: e.value, rendered_description: e.rendered_description }
              : { [e.property]: e.value };
          const a = this.archived.get(e.stream_id);
          if (a) {
            this.archived.set(e.stream_id, {
              channel: { ...a.channel, ...change },
              sub: a.sub && { ...a.sub, ...change },
            });
          }
          const c = this.channels.get(e.stream_id);
          if (c) this.channels.set(e.stream_id, { ...c, ...change });
          const s = this.subs.get(e.stream_id);
          if (s) {
            const next = { ...s, ...change };
            this.subs.set(e.stream_id, next);
            this.channels.set(e.stream_id, next);
          }
        }
        this.rev.channels.value++;
        return null;
      case 'realm_user':
        if (e.op === 'add') this.users.set(e.person.user_id, e.person);
        else if (e.op === 'remove') {
          const u = this.users.get(e.person.user_id);
          if (u) this.users.set(u.user_id, { ...u, is_active: false });
        } else {
          // A custom profile field's value is one entry of the user's profile_data.
          const { custom_profile_field: field, ...person } = e.person;
          const change = (u: User): User =>
            field
              ? { ...u, ...person, profile_data: withValue(u.profile_data, field) }
              : { ...u, ...person };
          const u = this.users.get(e.person.user_id);
          if (u) this.users.set(u.user_id, change(u));
          if (e.person.user_id === this.selfId) this.self = change(this.self);
          // A deactivation ends the user's sessions: offline, whatever they last reported.
          if (person.is_active === false) {
            this.presence.sessionsEnded(e.person.user_id);
            this.rev.presence.value++;
          }
          this.onSenderChange(person);
        }
        this.rev.users.value++;
        return null;
      case 'typing':
        this.onTyping(e);
        return null;
      case 'user_topic': {
        const key = topicKey(e.stream_id, e.topic_name);
        const before = this.mutedTopic(e.stream_id, e.topic_name, key);
        const itselfBefore = this.topicMutedItself(e.stream_id, e.topic_name);
        this.userTopics.set(key, e.visibility_policy);
        this.userTopicNames.set(key, e.topic_name);
        const after = this.mutedTopic(e.stream_id, e.topic_name, key);
        const itselfAfter = this.topicMutedItself(e.stream_id, e.topic_name);
        this.mutingChanged(
          { muted: !before && after, unmuted: before && !after },
          {
            streamId: e.stream_id,
            muted: !itselfBefore && itselfAfter,
            unmuted: itselfBefore && !itselfAfter,
          },
        );
        this.rev.channels.value++;
        this.rev.unread.value++;
        return null;
      }
      case 'user_settings':
        this.settings = { ...this.settings, [e.property]: e.value };
        this.rev.settings.value++;
        return null;
      case 'realm_emoji':
        this.realm.emoji = e.realm_emoji;
        this.rev.settings.value++;
        return null;
      case 'realm':
        if (e.op === 'update') this.realm.settings[`realm_${e.property}`] = e.value;
        else if (e.op === 'update_dict') {
          for (const [k, v] of Object.entries(e.data)) this.realm.settings[`realm_${k}`] = v;
        }
        this.syncRealm();
        this.rev.settings.value++;
        return null;
      case 'realm_user_settings_defaults': {
        const defaults = this.realm.settings.realm_user_settings_defaults;
        this.realm.settings.realm_user_settings_defaults = {
          ...(typeof defaults === 'object' ? defaults : {}),
          [e.property]: e.value,
        };
        this.rev.settings.value++;
        return null;
      }
      case 'user_group':
        this.onUserGroup(e);
        return null;
      case 'presence':
        this.onPresence(e);
        return null;
      case 'user_status':
        if (this.statuses.apply(e.user_id, e)) this.rev.status.value++;
        return null;
      case 'custom_profile_fields':
        this.profileFields = e.fields;
        this.rev.users.value++;
        return null;
      case 'alert_words':
        this.alertWords = e.alert_words;
        // The messages the server flagged are drawn again: their highlights follow the words the
        // user has now (message.tsx, decorate), a removed word no longer marked.
        for (const [id, m] of this.messages)
          if (m.flags.includes('has_alert_word')) this.replace(id, (old) => ({ ...old }));
        this.rev.extras.value++;
        return null;
      case 'realm_linkifiers':
        this.linkifiers = e.realm_linkifiers;
        this.rev.extras.value++;
        return null;
      case 'realm_playgrounds':
        this.playgrounds = e.realm_playgrounds;
        // The messages with a code block are drawn again: their links to the playgrounds follow
        // (message.tsx, decorate).
        for (const [id, m] of this.messages)
          if (m.content.includes('codehilite')) this.replace(id, (old) => ({ ...old }));
        this.rev.extras.value++;
        return null;
      case 'default_streams':
        this.defaultStreams = e.default_streams;
        this.rev.extras.value++;
        return null;
      case 'attachment':
        // Before the settings fetched the list, nothing to keep (the fetch has it all).
        if (this.uploads) {
          this.uploads = applyAttachmentEvent(this.uploads, e);
          this.rev.extras.value++;
        }
        return null;
      case 'muted_users':
        this.mutedUsers.set(e.muted_users);
        this.rev.muted.value++;
        return null;
      case 'realm_export':
        // The whole list each time: kept even before the panel fetched it.
        this.realmExports = e.exports;
        this.rev.extras.value++;
        return null;
      case 'invites_changed':
        this.rev.invites.value++;
        return null;
      case 'heartbeat':
      case 'restart':
        return null;
      default:
        return null;
    }
  }

  private onMessage(msg: Message, flags: string[], localId: string | undefined): StoredMessage {
    const m: StoredMessage = { ...msg, flags };
    this.learnNames(msg);
    if (localId !== undefined && this.echoes.has(localId)) this.dropEcho(localId);
    this.messages.set(m.id, m);
    if (m.id > this.maxMessageId) this.maxMessageId = m.id;
    const ctx = this.matchContext(flags);
    for (const l of this.lists.values()) {
      if (matches(l.narrow, m, ctx)) l.addLive(m.id);
    }
    if (this.unread.addMessage(m, flags)) this.rev.unread.value++;
    this.recent.add([m]);
    if (m.type === 'stream' && m.stream_id !== undefined)
      this.noteTopic(m.stream_id, m.subject, m.id);
    else if (m.type === 'private') {
      this.dms.set(messageDmIds(m, this.selfId).join(','), m.id);
      this.rev.dms.value++;
    }
    this.typing.stopEverywhere(m.sender_id);
    return m;
  }

  /** A topic's newest message id (topics of an opened channel stay sorted newest first). */
  noteTopic(streamId: number, topic: string, id: number): void {
    const list = this.topics.get(streamId) ?? this.topicsAsked.get(streamId)?.noted;
    if (!list) return;
    const i = list.findIndex((t) => sameTopic(t.name, topic));
    const entry = {
      name: i >= 0 ? list[i]!.name : topic,
      maxId: Math.max(id, i >= 0 ? list[i]!.maxId : 0),
    };
    if (i >= 0) list.splice(i, 1);
    list.push(entry);
    list.sort((a, b) => b.maxId - a.maxId);
    this.rev.topics.value++;
  }

  /** A channel's topics are being fetched: events until the answer are kept for it. */
  askTopics(streamId: number): void {
    this.topicsAsked.set(streamId, { noted: [], moved: false, moves: [] });
  }

  /**
   * Whether the channel's topics are to be fetched: not held yet, or held but out of date (a
   * move or a deletion since; still shown until the answer).
   */
  topicsToFetch(streamId: number): boolean {
    return !this.topics.has(streamId) || this.topicsOutdated.has(streamId);
  }

  private outdateTopics(streamId: number): void {
    if (this.topics.has(streamId)) this.topicsOutdated.add(streamId);
  }

  /**
   * Where a topic went when moved onward (renamed, resolved, moved to another channel), after
   * every later move of it too; undefined when no move of it is known.
   */
  topicWent(streamId: number, topic: string): { streamId: number; topic: string } | undefined {
    let at: { streamId: number; topic: string } | undefined;
    // A bound: moves back and forth (resolved, unresolved) make a loop.
    for (let hop = 0; hop < MOVES_KEPT; hop++) {
      const next = this.topicsMovedTo.get(topicKey(at?.streamId ?? streamId, at?.topic ?? topic));
      if (!next) break;
      at = next;
      if (next.streamId === streamId && sameTopic(next.topic, topic)) break;
    }
    return at;
  }

  /** Whether a fetch of the channel's topics is on its way. */
  topicsPending(streamId: number): boolean {
    return this.topicsAsked.has(streamId);
  }

  /** The fetch of a channel's topics failed. */
  topicsFailed(streamId: number): void {
    this.topicsAsked.delete(streamId);
  }

  /**
   * A channel's topics fetched, with the messages that arrived meanwhile. False when messages
   * moved in or out of the channel meanwhile: the answer may not show it, ask again (the topics
   * are set anyway, to be shown until then).
   */
  setTopics(streamId: number, topics: { name: string; max_id: number }[]): boolean {
    const asked = this.topicsAsked.get(streamId);
    this.topicsAsked.delete(streamId);
    if (asked?.moved) this.topicsOutdated.add(streamId);
    else this.topicsOutdated.delete(streamId);
    const list = topics.map((t) => ({ name: t.name, maxId: t.max_id }));
    // The answer may be from before the moves since: they are applied to it too.
    for (const { mv, newest } of asked?.moves ?? []) moveInList(list, mv, newest, streamId);
    for (const n of asked?.noted ?? []) {
      const i = list.findIndex((t) => sameTopic(t.name, n.name));
      if (i < 0) list.push(n);
      else list[i] = { name: list[i]!.name, maxId: Math.max(list[i]!.maxId, n.maxId) };
    }
    this.topics.set(
      streamId,
      list.sort((a, b) => b.maxId - a.maxId),
    );
    this.rev.topics.value++;
    return !asked?.moved;
  }

  private onUpdateMessage(e: Extract<ServerEvent, { type: 'update_message' }>): void {
    if (e.rendered_content !== undefined) {
      this.replace(e.message_id, (m) => this.changeCopy({ ...e, message_ids: [] }, m));
      if (e.flags && this.unread.has(e.message_id)) {
        this.unread.setMentioned(e.message_id, e.flags);
        this.rev.unread.value++;
      }
    }
    const newTopic = e.subject ?? e.topic;
    if (!isMove(e)) return;
    const ids = e.message_ids;
    const move = { ...e, rendered_content: undefined };
    for (const id of ids) this.replace(id, (m) => this.changeCopy(move, m));
    this.unread.move(ids, e.new_stream_id, newTopic);
    this.recent.move(ids, e.new_stream_id, newTopic);
    this.rev.unread.value++;
    // Lists: drop what no longer belongs; a list the messages now belong in is fetched again.
    for (const l of this.lists.values()) {
      const gone: number[] = [];
      let arrives = false;
      for (const id of ids) {
        const m = this.messages.get(id);
        if (!m) continue;
        const fits = matches(l.narrow, m, this.matchContext(m.flags));
        // A list being fetched is told too: the answer may hold it where it was.
        if ((l.has(id) || l.fetching) && fits === false) gone.push(id);
        if (!l.has(id) && fits) arrives = true;
      }
      if (gone.length) l.remove(gone);
      if (arrives) l.markStale();
    }
    const streamId = e.stream_id;
    if (streamId !== undefined) this.outdateTopics(streamId);
    if (e.new_stream_id !== undefined) this.outdateTopics(e.new_stream_id);
    // Any move, of one message too: the topics' lists follow it at once, as the reference's
    // stream_topic_history (remove_messages and add_moved_message) does; the fetch that follows
    // still settles them.
    const mv = messagesMoved(
      e,
      ids[0] !== undefined ? this.messages.get(ids[0])?.subject : undefined,
    );
    if (mv) {
      this.moveInTopics(mv, ids);
      if (!mv.whole) this.leftBehind(mv.from, ids);
    }
    if (mv?.whole) {
      const from = topicKey(mv.from.streamId, mv.from.topic);
      this.topicsMovedTo.delete(from);
      this.topicsMovedTo.set(from, mv.to);
      if (this.topicsMovedTo.size > MOVES_KEPT)
        this.topicsMovedTo.delete(this.topicsMovedTo.keys().next().value!);
    }
    for (const id of [streamId, e.new_stream_id]) {
      const asked = id !== undefined && this.topicsAsked.get(id);
      if (asked) asked.moved = true;
    }
    this.rev.topics.value++;
  }

  /**
   * Messages moved (a whole topic, or some of its messages), applied at once to the topics held,
   * to those noted for a fetch on its way and, once it answers, to its answer (setTopics): a whole
   * topic's entry goes from where it was (what a partial move leaves behind is leftBehind's), and
   * the topic where the messages went is in its channel's list at their newest, so that
   * the sidebar never shows the old name beside the new one (the notice's message names the new
   * one before the list is fetched again). The fetch that follows still settles the list (what a
   * partial move left behind, a deletion).
   */
  private moveInTopics(mv: TopicMove, ids: readonly number[]): void {
    const newest = ids.reduce((a, b) => Math.max(a, b), 0);
    for (const streamId of new Set([mv.from.streamId, mv.to.streamId])) {
      const held = this.topics.get(streamId);
      if (held) moveInList(held, mv, newest, streamId);
      const asked = this.topicsAsked.get(streamId);
      if (asked) {
        moveInList(asked.noted, mv, newest, streamId);
        asked.moves.push({ mv, newest });
      }
    }
  }

  /**
   * Some of a topic's messages moved away (`ids`), the others left behind: when its entry's
   * newest was among the moved, it is the newest of those left that the app holds, and the topic
   * takes that place in its channel's list (the reference's stream_topic_history.remove_messages
   * takes it from its messages held, too). None held: the entry stays as it is until the fetch
   * that follows answers (the reference asks the server for the topic's newest message then).
   */
  private leftBehind(from: { streamId: number; topic: string }, ids: readonly number[]): void {
    const list = this.topics.get(from.streamId);
    const i = list ? list.findIndex((t) => sameTopic(t.name, from.topic)) : -1;
    if (!list || i < 0) return;
    const newestMoved = ids.reduce((a, b) => Math.max(a, b), 0);
    if (list[i]!.maxId > newestMoved) return;
    let newest = 0;
    // The moved ones are in their new place already (replaced above).
    for (const m of this.messages.values())
      if (
        m.id > newest &&
        m.type === 'stream' &&
        m.stream_id === from.streamId &&
        sameTopic(m.subject, from.topic)
      )
        newest = m.id;
    if (newest === 0) return;
    list[i] = { name: list[i]!.name, maxId: newest };
    list.sort((a, b) => b.maxId - a.maxId);
  }

  private onDelete(ids: readonly number[]): void {
    let unstarred = false;
    for (const id of ids) if (this.starred.delete(id)) unstarred = true;
    if (unstarred) this.rev.starred.value++;
    for (const l of this.lists.values()) l.remove(ids);
    for (const id of ids) this.messages.delete(id);
    this.unread.remove(ids);
    this.recent.remove(ids);
    this.rev.unread.value++;
  }

  private onFlags(e: Extract<ServerEvent, { type: 'update_message_flags' }>): void {
    const op = e.op ?? e.operation;
    if (e.flag === 'read') {
      if (op === 'add') {
        // Usually the echo of what this page marked read already: nothing to draw again then.
        if (e.all) {
          if (this.unread.size > 0) this.rev.unread.value++;
          this.unread.markAllRead();
        } else if (this.unread.markRead(e.messages).length > 0) this.rev.unread.value++;
      } else {
        for (const id of e.messages) {
          const d = e.message_details?.[String(id)];
          if (!d) continue;
          if (d.type === 'stream') {
            this.unread.markUnread(
              id,
              { kind: 'stream', streamId: d.stream_id!, topic: d.topic! },
              d.mentioned ?? false,
            );
          } else {
            const key = conversationIds(d.user_ids ?? [], this.selfId).join(',');
            this.unread.markUnread(id, { kind: 'dm', key }, d.mentioned ?? false);
          }
        }
        this.rev.unread.value++;
      }
    }
    if (e.flag === 'starred') this.onStarred(op, e.all === true ? null : e.messages);
    const ids = e.all ? [...this.messages.keys()] : e.messages;
    for (const id of ids) {
      this.replace(id, (m) => {
        const has = m.flags.includes(e.flag);
        if (op === 'add' && !has) return { ...m, flags: [...m.flags, e.flag] };
        if (op === 'remove' && has) return { ...m, flags: m.flags.filter((f) => f !== e.flag) };
        return m;
      });
    }
  }

  /**
   * Stars added or removed (`ids` null: all of the user's messages, which the server says only of
   * the read flag; all unstarred empties the set, all starred is more than the page can count).
   */
  private onStarred(op: 'add' | 'remove', ids: readonly number[] | null): void {
    const before = this.starred.size;
    if (ids === null) {
      if (op === 'remove') this.starred.clear();
    } else if (op === 'add') for (const id of ids) this.starred.add(id);
    else if (op === 'remove') for (const id of ids) this.starred.delete(id);
    if (this.starred.size !== before) this.rev.starred.value++;
  }

  /** The user read these (optimistically, before the server's event says so). */
  markReadLocally(ids: readonly number[]): number[] {
    const done = this.unread.markRead(ids);
    if (done.length) this.rev.unread.value++;
    return done;
  }

  private onSubscription(e: Extract<ServerEvent, { type: 'subscription' }>): void {
    if (e.op === 'add') {
      for (const s of e.subscriptions) {
        // Joined again: its muting as the server has kept it (as it was when left, see
        // channelMuted), which may differ from what this page knew (a channel left on another
        // device, muted or unmuted meanwhile, or one never known as left).
        const was = this.channelMuted(s.stream_id);
        this.subs.set(s.stream_id, s);
        this.channels.set(s.stream_id, s);
        const now = this.channelMuted(s.stream_id);
        this.mutingChanged({ muted: !was && now, unmuted: was && !now });
      }
    } else if (e.op === 'remove') {
      // Left: the channel keeps its muting (channelMuted), so All messages stays as it is.
      for (const s of e.subscriptions) {
        this.subs.delete(s.stream_id);
        // Left while archived: not subscribed again when unarchived.
        const a = this.archived.get(s.stream_id);
        if (a) this.archived.set(s.stream_id, { ...a, sub: null });
      }
    } else if (e.op === 'update') {
      const s = this.subs.get(e.stream_id);
      if (s) {
        const next: Subscription = { ...s, [e.property]: e.value };
        if (e.property === 'in_home_view') next.is_muted = !e.value;
        this.subs.set(e.stream_id, next);
        this.channels.set(e.stream_id, next);
        const was = s.is_muted ?? false;
        const now = next.is_muted ?? false;
        this.mutingChanged({ muted: !was && now, unmuted: was && !now });
      }
      if (e.property === 'is_muted' || e.property === 'in_home_view') this.rev.unread.value++;
    } else {
      return;
    }
    this.rev.channels.value++;
  }

  private onTyping(e: Extract<ServerEvent, { type: 'typing' }>): void {
    if (e.sender.user_id === this.selfId) return;
    let key: string;
    if (e.message_type === 'stream') {
      if (e.stream_id === undefined || e.topic === undefined) return;
      key = typingKey({ type: 'stream', stream_id: e.stream_id, topic: e.topic });
    } else {
      const ids = conversationIds(
        (e.recipients ?? []).map((r) => r.user_id),
        this.selfId,
      );
      key = typingKey({ type: 'direct', to: ids });
    }
    if (e.op === 'start') this.typing.start(key, e.sender.user_id);
    else this.typing.stop(key, e.sender.user_id);
  }

  private onUserGroup(e: Extract<ServerEvent, { type: 'user_group' }>): void {
    if (e.op === 'add') this.groups.set(e.group.id, e.group);
    else if (e.op === 'remove') this.groups.delete(e.group_id);
    else if (e.op === 'update') {
      const g = this.groups.get(e.group_id);
      if (g) this.groups.set(g.id, { ...g, ...e.data });
    } else if (e.op === 'add_members' || e.op === 'remove_members') {
      const g = this.groups.get(e.group_id);
      if (g) {
        const members =
          e.op === 'add_members'
            ? [...new Set([...g.members, ...e.user_ids])]
            : g.members.filter((id) => !e.user_ids.includes(id));
        this.groups.set(g.id, { ...g, members });
      }
    } else if (e.op === 'add_subgroups' || e.op === 'remove_subgroups') {
      // A group's subgroups: who is in it through them (the permissions, a group's card).
      const g = this.groups.get(e.group_id);
      if (g) {
        const had = g.direct_subgroup_ids ?? [];
        const direct_subgroup_ids =
          e.op === 'add_subgroups'
            ? [...new Set([...had, ...e.direct_subgroup_ids])]
            : had.filter((id) => !e.direct_subgroup_ids.includes(id));
        this.groups.set(g.id, { ...g, direct_subgroup_ids });
      }
    }
    this.rev.users.value++;
  }

  private onPresence(e: Extract<ServerEvent, { type: 'presence' }>): void {
    const at = e.server_timestamp ?? this.clock.now() / 1000;
    if (e.presence) this.presence.fromEvent(e.user_id, e.presence, at);
    else if (e.presences) this.presence.setInfo(e.presences, at, this.presence.lastUpdateId);
    else return;
    this.rev.presence.value++;
  }

  /** The answer to a full presence ping: the presences changed since the last one. */
  setPresences(r: {
    presences?: Record<string, PresenceTimes>;
    server_timestamp?: number;
    presence_last_update_id?: number;
  }): void {
    if (!r.presences || r.server_timestamp === undefined) return;
    this.presence.setInfo(
      r.presences,
      r.server_timestamp,
      r.presence_last_update_id ?? this.presence.lastUpdateId,
    );
    this.rev.presence.value++;
  }

  /**
   * A user's status for the people list and the dots: one's own is active while one shares it
   * (offline in invisible mode), as the reference shows it. With the organization's presence
   * turned off everyone else is offline: the server sends no one's then, and the reference draws
   * its offline circle for them (even for what came before the switch, here).
   */
  presenceOf(id: number): PresenceStatus {
    if (id === this.selfId) return this.settings.presence_enabled === false ? 'offline' : 'active';
    return this.realm.presenceDisabled ? 'offline' : this.presence.status(id);
  }

  /** Users loaded after the first screen (register without realm_user, then GET /users). */
  setUsers(users: readonly User[]): void {
    for (const u of users) this.users.set(u.user_id, { ...this.users.get(u.user_id), ...u });
    this.usersComplete = true;
    this.namesSeen.clear();
    this.rev.users.value++;
  }

  /** The key of the conversation a message is in, as drafts, typing and unread count them. */
  conversationOf(
    m: Message,
  ): { kind: 'stream'; streamId: number; topic: string } | { kind: 'dm'; ids: number[] } {
    return m.type === 'stream'
      ? { kind: 'stream', streamId: m.stream_id!, topic: m.subject }
      : { kind: 'dm', ids: messageDmIds(m, this.selfId) };
  }
}

/**
 * A move (ChatState.moveInTopics) applied to channel `streamId`'s topics, newest first: a whole
 * topic moved away from it is taken out, and its destination in it is at the moved messages'
 * newest (`newest`, or the whole topic's own when it was in this list).
 */
function moveInList(list: TopicInfo[], mv: TopicMove, newest: number, streamId: number): void {
  let top = newest;
  if (mv.whole && mv.from.streamId === streamId) {
    const i = list.findIndex((t) => sameTopic(t.name, mv.from.topic));
    if (i >= 0) {
      top = Math.max(top, list[i]!.maxId);
      list.splice(i, 1);
    }
  }
  if (mv.to.streamId !== streamId || top === 0) return;
  const i = list.findIndex((t) => sameTopic(t.name, mv.to.topic));
  if (i >= 0) list[i] = { name: list[i]!.name, maxId: Math.max(list[i]!.maxId, top) };
  else list.push({ name: mv.to.topic, maxId: top });
  list.sort((a, b) => b.maxId - a.maxId);
}

/** How many whole-topic moves ChatState.topicWent remembers. */
const MOVES_KEPT = 50;

/** Whether an update_message event moves messages (to another topic or channel). */
function isMove(e: Extract<ServerEvent, { type: 'update_message' }>): boolean {
  const newTopic = e.subject ?? e.topic;
  return e.new_stream_id !== undefined || (newTopic !== undefined && e.orig_subject !== undefined);
}

/** Whether an event kept by ChatState.keepChange is about message `id`. */
function changeConcerns(e: CopyChange, id: number): boolean {
  if (e.type === 'reaction' || e.type === 'submessage') return e.message_id === id;
  if (e.type === 'update_message_flags') return e.all === true || e.messages.includes(id);
  return e.message_id === id || e.message_ids.includes(id);
}
