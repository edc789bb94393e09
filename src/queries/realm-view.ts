/**
 * The in-memory read model of one realm: its settings, users and user groups, kept equal to the
 * last committed state. Endpoints answer reads from it without touching SQL; the realm actor
 * refreshes the parts a mutation changed after the mutation commits (see MutationContext.afterCommit).
 *
 * Rule: inside a mutation, read anything the same mutation has written from the ReadStore, not from
 * here; this view changes only after COMMIT.
 */
import {
  REALM_GROUP_SETTING_DEFAULTS,
  REALM_SETTING_DEFAULTS,
  type GroupSettingValue,
  type RealmGroupSettingName,
  type RealmSettings,
  type StoredRealmSettings,
} from '../lib/realm-settings.js';
import { resolveUserSettings, type UserSettings } from '../lib/user-settings.js';
import type { SystemGroupName } from '../lib/roles.js';
import type { RealmRow } from '../storage/realms.js';
import type { ReadStore } from '../storage/store.js';
import type { UserGroupRow } from '../storage/groups.js';
import type { CustomProfileFieldRow, UserRow } from '../storage/users.js';
import crypto from 'node:crypto';
import { ChannelsView } from './channels-view.js';
import { RealmCaches } from './realm-caches.js';

export type ProfileData = Record<string, { value: string; rendered_value?: string }>;

/** Per-user values derived from the row and costly enough to keep (formatting is on hot paths). */
export type UserDerived = { dateJoinedIso: string; emailHash: string };

/**
 * How many whole-realm user lists (RealmView.overAllUsers) are kept: one per viewer role and avatar
 * choice in use (12 possible), each about 350 bytes per user.
 */
const USER_LIST_FORMS = 6;

/** Custom profile field types whose values are rendered (short text, long text). */
const RENDERED_FIELD_TYPES = new Set([1, 2]);

export class RealmView {
  readonly id: number;
  /**
   * Bumped whenever the realm row, a user or the groups are reloaded: caches derived from them
   * (the markdown render context) compare it to know they are stale. Not by group membership
   * changes (add/removeGroupMembers, add/removeSubgroups): see groupsVersion.
   */
  version = 0;
  /**
   * Bumped on every change to the groups, their members and subgroups included: with `version`,
   * what caches of the serialized groups (the register's realm_user_groups) compare.
   */
  groupsVersion = 0;
  row!: RealmRow;
  storedSettings!: StoredRealmSettings;
  settings!: RealmSettings;

  readonly usersById = new Map<number, UserRow>();
  /** Lower-cased delivery e-mail → user id. */
  private readonly userIdByEmail = new Map<string, number>();
  private readonly userSettingsCache = new Map<number, UserSettings>();
  private readonly userDerivedCache = new Map<number, UserDerived>();
  /** Authorization header → user, for headers that authenticated; cleared on any user change. */
  private readonly authCache = new Map<string, UserRow>();
  private profileFieldsCache: CustomProfileFieldRow[] | null = null;
  private readonly profileDataCache = new Map<number, ProfileData>();
  /**
   * user id → its serialized forms by variant (userJson); dropped with the user's other caches,
   * and all of them when the realm's row changes (reloadRealm).
   */
  private readonly userJsonCache = new Map<number, Map<number, string>>();
  /**
   * user id → GET /users/me's answer (ownProfileJson) and the newest message id it holds; dropped
   * with the user's other caches, and on any change to the realm's row (avatar URLs follow its
   * settings).
   */
  private readonly ownProfileCache = new Map<number, { maxMessageId: number; json: string }>();
  /** overAllUsers's values by key; cleared whenever a user changes. */
  private readonly userListCache = new Map<string, unknown>();
  /** The user ids in ascending order; null after a user is added. */
  private sortedIds: number[] | null = null;

  readonly groupsById = new Map<number, UserGroupRow>();
  readonly systemGroupIds = new Map<SystemGroupName, number>();
  /** group id → direct member user ids */
  readonly directMembers = new Map<number, Set<number>>();
  /** group id → direct subgroup ids */
  readonly directSubgroups = new Map<number, Set<number>>();
  /** group id → the groups it is a direct subgroup of (the reverse of directSubgroups) */
  private readonly directSupergroups = new Map<number, Set<number>>();
  /**
   * group id → every member, through subgroups; computed on demand and kept up to date by the
   * incremental updates below (grown in place on additions, dropped on removals).
   */
  private readonly recursiveMembersCache = new Map<number, Set<number>>();

  /** Channels, subscriptions, default channels and channel access (see channels-view.ts). */
  readonly channels: ChannelsView;
  /** Values derived from this realm (linkifiers, custom emoji, alert words, render context, presence). */
  readonly caches = new RealmCaches();

  constructor(
    private readonly store: ReadStore,
    realmId: number,
  ) {
    this.id = realmId;
    this.reloadRealm();
    for (const u of store.users.byRealm(realmId)) this.putUser(u);
    this.reloadGroups();
    this.channels = new ChannelsView(store, this);
  }

  // ---- realm -------------------------------------------------------------------------------

  reloadRealm(): void {
    this.version++;
    const row = this.store.realms.byId(this.id);
    if (!row) throw new Error(`realm ${this.id} vanished`);
    this.row = row;
    this.storedSettings = JSON.parse(row.settings) as StoredRealmSettings;
    this.settings = { ...REALM_SETTING_DEFAULTS, ...pickPlain(this.storedSettings) };
    // Users' serialized forms show the realm's settings too (avatar URLs: external_avatars).
    this.userJsonCache.clear();
    this.userListCache.clear();
    this.ownProfileCache.clear();
  }

  get deactivated(): boolean {
    return this.row.deactivated !== 0;
  }

  /** The value of a realm permission setting: an explicit override, else its system-group default. */
  groupSetting(name: RealmGroupSettingName): GroupSettingValue {
    const stored = this.storedSettings[name];
    if (stored !== undefined) return stored;
    return this.systemGroupId(REALM_GROUP_SETTING_DEFAULTS[name]);
  }

  // ---- users -------------------------------------------------------------------------------

  private putUser(u: UserRow): void {
    this.version++;
    const previous = this.usersById.get(u.id);
    if (previous) this.userIdByEmail.delete(previous.delivery_email.toLowerCase());
    else this.sortedIds = null;
    this.userJsonCache.delete(u.id);
    this.ownProfileCache.delete(u.id);
    this.userListCache.clear();
    this.usersById.set(u.id, u);
    this.userIdByEmail.set(u.delivery_email.toLowerCase(), u.id);
    this.userSettingsCache.delete(u.id);
    this.userDerivedCache.delete(u.id);
    this.authCache.clear();
  }

  /** The user a previously successful Authorization header belongs to, if nothing changed since. */
  cachedAuth(header: string): UserRow | undefined {
    return this.authCache.get(header);
  }

  rememberAuth(header: string, u: UserRow): void {
    if (this.authCache.size >= 10_000) this.authCache.clear();
    this.authCache.set(header, u);
  }

  /**
   * Reads the user's row again; a user whose row is gone (a cluster node's own batch taken back
   * from its copy: src/cluster/refresh.ts) leaves the view and every cache of it.
   */
  reloadUser(userId: number): void {
    const u = this.store.users.byId(userId);
    if (u && u.realm_id === this.id) this.putUser(u);
    else if (this.usersById.has(userId)) this.dropUser(userId);
  }

  private dropUser(userId: number): void {
    const previous = this.usersById.get(userId)!;
    this.version++;
    this.usersById.delete(userId);
    this.userIdByEmail.delete(previous.delivery_email.toLowerCase());
    this.sortedIds = null;
    this.userJsonCache.delete(userId);
    this.ownProfileCache.delete(userId);
    this.userListCache.clear();
    this.userSettingsCache.delete(userId);
    this.userDerivedCache.delete(userId);
    this.profileDataCache.delete(userId);
    this.authCache.clear();
  }

  user(userId: number): UserRow | undefined {
    return this.usersById.get(userId);
  }

  userByEmail(email: string): UserRow | undefined {
    const id = this.userIdByEmail.get(email.toLowerCase());
    return id === undefined ? undefined : this.usersById.get(id);
  }

  userSettings(userId: number): UserSettings {
    let s = this.userSettingsCache.get(userId);
    if (!s) {
      const u = this.usersById.get(userId);
      s = resolveUserSettings(u ? (JSON.parse(u.settings) as Partial<UserSettings>) : {});
      this.userSettingsCache.set(userId, s);
    }
    return s;
  }

  /** Every user id of the realm (active or not), ascending. */
  userIdsAscending(): readonly number[] {
    this.sortedIds ??= [...this.usersById.keys()].sort((a, b) => a - b);
    return this.sortedIds;
  }

  /**
   * A serialized form of user `u`: `variant` names everything besides the user's own data that the
   * form depends on (a small number, bounded by the caller), and `make` builds it. Kept until the
   * user, their settings or their profile data change.
   */
  userJson(u: UserRow, variant: number, make: () => string): string {
    let forms = this.userJsonCache.get(u.id);
    if (!forms) this.userJsonCache.set(u.id, (forms = new Map<number, string>()));
    let json = forms.get(variant);
    if (json === undefined) forms.set(variant, (json = make()));
    return json;
  }

  /**
   * GET /users/me's answer for user `u`, made by `make` when there is none, or when the one kept
   * was made with another newest message id than `maxMessageId` (it says which): kept until the
   * user, their profile data or the realm's row change, as userJson's forms. Its serialization was
   * the largest cost of the request (docs/benchmarks.md, issue 31 row 1).
   */
  ownProfileJson(u: UserRow, maxMessageId: number, make: () => string): string {
    const kept = this.ownProfileCache.get(u.id);
    if (kept !== undefined && kept.maxMessageId === maxMessageId) return kept.json;
    const json = make();
    this.ownProfileCache.set(u.id, { maxMessageId, json });
    return json;
  }

  /**
   * A value built from every user (the register snapshot's serialized user lists), kept until any
   * user, user setting or profile value, or the realm's row, changes; at most USER_LIST_FORMS of them at once. A large
   * realm's register then costs a copy of its lists, not a serialization of every user.
   */
  overAllUsers<T>(key: string, build: () => T): T {
    let v = this.userListCache.get(key) as T | undefined;
    if (v === undefined) {
      if (this.userListCache.size >= USER_LIST_FORMS) this.userListCache.clear();
      this.userListCache.set(key, (v = build()));
    }
    return v;
  }

  derived(u: UserRow): UserDerived {
    let d = this.userDerivedCache.get(u.id);
    if (!d) {
      d = {
        dateJoinedIso: new Date(u.date_joined * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00'),
        emailHash: crypto
          .createHash('md5')
          .update(u.delivery_email.trim().toLowerCase())
          .digest('hex'),
      };
      this.userDerivedCache.set(u.id, d);
    }
    return d;
  }

  // ---- custom profile fields ---------------------------------------------------------------

  profileFields(): readonly CustomProfileFieldRow[] {
    this.profileFieldsCache ??= this.store.users.profileFieldsByRealm(this.id);
    return this.profileFieldsCache;
  }

  /** A user's profile_data, keyed by field id, with rendered_value for text fields. */
  profileData(userId: number): ProfileData {
    let data = this.profileDataCache.get(userId);
    if (!data) {
      const types = new Map(this.profileFields().map((f) => [f.id, f.type]));
      data = {};
      for (const v of this.store.users.profileValuesByUser(userId)) {
        const type = types.get(v.field_id);
        data[String(v.field_id)] =
          type !== undefined && RENDERED_FIELD_TYPES.has(type) && v.rendered_value !== null
            ? { value: v.value, rendered_value: v.rendered_value }
            : { value: v.value };
      }
      this.profileDataCache.set(userId, data);
    }
    return data;
  }

  /** After a change to fields (no argument) or to one user's values. */
  invalidateProfiles(userId?: number): void {
    if (userId === undefined) {
      this.profileFieldsCache = null;
      this.profileDataCache.clear();
      this.userJsonCache.clear();
      this.ownProfileCache.clear();
    } else {
      this.profileDataCache.delete(userId);
      this.userJsonCache.delete(userId);
      this.ownProfileCache.delete(userId);
    }
    this.userListCache.clear();
  }

  activeUsers(): UserRow[] {
    const out: UserRow[] = [];
    for (const u of this.usersById.values()) if (u.is_active) out.push(u);
    return out;
  }

  private activeCount = { version: -1, count: 0 };

  /** How many users are active: counted once per change to the users (putUser bumps version). */
  activeUserCount(): number {
    if (this.activeCount.version !== this.version) {
      let count = 0;
      for (const u of this.usersById.values()) if (u.is_active) count++;
      this.activeCount = { version: this.version, count };
    }
    return this.activeCount.count;
  }

  // ---- groups ------------------------------------------------------------------------------
  //
  // Mutations that know what they changed refresh only that, after COMMIT: reloadGroup (a group
  // row created or changed), add/removeGroupMembers, add/removeSubgroups. reloadGroups re-reads
  // everything (at construction; a mutation that cannot say what it changed). Either way the
  // view ends equal to a fresh one (test/unit/realm-view-groups.test.ts).

  reloadGroups(): void {
    this.version++;
    this.groupsVersion++;
    this.groupsById.clear();
    this.systemGroupIds.clear();
    this.directMembers.clear();
    this.directSubgroups.clear();
    this.directSupergroups.clear();
    this.recursiveMembersCache.clear();
    for (const g of this.store.groups.byRealm(this.id)) this.putGroup(g);
    for (const m of this.store.groups.membersByRealm(this.id))
      this.directMembers.get(m.group_id)?.add(m.user_id);
    for (const s of this.store.groups.subgroupsByRealm(this.id)) this.linkSubgroup(s);
  }

  private putGroup(g: UserGroupRow): void {
    this.groupsById.set(g.id, g);
    if (!this.directMembers.has(g.id)) this.directMembers.set(g.id, new Set());
    if (!this.directSubgroups.has(g.id)) this.directSubgroups.set(g.id, new Set());
    if (g.is_system_group) this.systemGroupIds.set(g.name as SystemGroupName, g.id);
  }

  private linkSubgroup(s: { group_id: number; subgroup_id: number }): void {
    const subs = this.directSubgroups.get(s.group_id);
    if (!subs) return;
    subs.add(s.subgroup_id);
    let sup = this.directSupergroups.get(s.subgroup_id);
    if (!sup) this.directSupergroups.set(s.subgroup_id, (sup = new Set()));
    sup.add(s.group_id);
  }

  /** After a group was created, or its row (name, description, settings, deactivation) changed. */
  reloadGroup(groupId: number): void {
    const g = this.store.groups.byId(groupId);
    if (!g || g.realm_id !== this.id) return;
    this.version++;
    this.groupsVersion++;
    this.putGroup(g);
  }

  /** The group and every group that contains it, at any depth. */
  private selfAndSupergroups(groupId: number): Set<number> {
    const out = new Set<number>([groupId]);
    const stack = [groupId];
    while (stack.length > 0) {
      for (const sup of this.directSupergroups.get(stack.pop()!) ?? []) {
        if (!out.has(sup)) {
          out.add(sup);
          stack.push(sup);
        }
      }
    }
    return out;
  }

  /** After users became direct members of a group. */
  addGroupMembers(groupId: number, userIds: Iterable<number>): void {
    this.groupsVersion++;
    const direct = this.directMembers.get(groupId);
    if (!direct) return;
    const ids = [...userIds];
    for (const u of ids) direct.add(u);
    // Every cached recursive membership that includes this group gains them.
    for (const g of this.selfAndSupergroups(groupId)) {
      const cached = this.recursiveMembersCache.get(g);
      if (cached) for (const u of ids) cached.add(u);
    }
  }

  /** After users stopped being direct members of a group. */
  removeGroupMembers(groupId: number, userIds: Iterable<number>): void {
    this.groupsVersion++;
    const direct = this.directMembers.get(groupId);
    if (!direct) return;
    for (const u of userIds) direct.delete(u);
    // They may still belong to a containing group another way: recompute those when asked.
    for (const g of this.selfAndSupergroups(groupId)) this.recursiveMembersCache.delete(g);
  }

  /** After groups became direct subgroups of a group. */
  addSubgroups(groupId: number, subgroupIds: Iterable<number>): void {
    this.groupsVersion++;
    if (!this.directSubgroups.has(groupId)) return;
    const ids = [...subgroupIds];
    for (const sub of ids) this.linkSubgroup({ group_id: groupId, subgroup_id: sub });
    for (const g of this.selfAndSupergroups(groupId)) {
      const cached = this.recursiveMembersCache.get(g);
      if (!cached) continue;
      for (const sub of ids) for (const u of this.recursiveMembers(sub)) cached.add(u);
    }
  }

  /** After groups stopped being direct subgroups of a group. */
  removeSubgroups(groupId: number, subgroupIds: Iterable<number>): void {
    this.groupsVersion++;
    const subs = this.directSubgroups.get(groupId);
    if (!subs) return;
    for (const sub of subgroupIds) {
      subs.delete(sub);
      this.directSupergroups.get(sub)?.delete(groupId);
    }
    for (const g of this.selfAndSupergroups(groupId)) this.recursiveMembersCache.delete(g);
  }

  group(id: number): UserGroupRow | undefined {
    return this.groupsById.get(id);
  }

  systemGroupId(name: SystemGroupName): number {
    const id = this.systemGroupIds.get(name);
    if (id === undefined) throw new Error(`realm ${this.id} has no system group ${name}`);
    return id;
  }

  /**
   * Every user in the group, directly or through any depth of subgroups. The set is the view's
   * own (kept current across commits): read it, do not keep it.
   */
  recursiveMembers(groupId: number): ReadonlySet<number> {
    const cached = this.recursiveMembersCache.get(groupId);
    if (cached) return cached;
    const members = new Set<number>();
    const seen = new Set<number>();
    const stack = [groupId];
    while (stack.length > 0) {
      const g = stack.pop()!;
      if (seen.has(g)) continue;
      seen.add(g);
      for (const u of this.directMembers.get(g) ?? []) members.add(u);
      for (const sub of this.directSubgroups.get(g) ?? []) stack.push(sub);
    }
    this.recursiveMembersCache.set(groupId, members);
    return members;
  }

  /** Whether an active user belongs to a group-setting value (a group id or an anonymous group). */
  isUserInGroupSetting(userId: number, value: GroupSettingValue): boolean {
    const u = this.usersById.get(userId);
    if (!u || !u.is_active) return false;
    if (typeof value === 'number') return this.recursiveMembers(value).has(userId);
    if (value.direct_members.includes(userId)) return true;
    return value.direct_subgroups.some((g) => this.recursiveMembers(g).has(userId));
  }

  /** Every active user in a group-setting value. */
  usersInGroupSetting(value: GroupSettingValue): Set<number> {
    const out = new Set<number>();
    const add = (id: number) => {
      if (this.usersById.get(id)?.is_active) out.add(id);
    };
    if (typeof value === 'number') {
      for (const id of this.recursiveMembers(value)) add(id);
    } else {
      for (const id of value.direct_members) add(id);
      for (const g of value.direct_subgroups) for (const id of this.recursiveMembers(g)) add(id);
    }
    return out;
  }

  hasRealmPermission(userId: number, name: RealmGroupSettingName): boolean {
    return this.isUserInGroupSetting(userId, this.groupSetting(name));
  }
}

/** The plain (non-group) settings among the stored overrides. */
function pickPlain(stored: StoredRealmSettings): Partial<RealmSettings> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(stored)) {
    if (Object.hasOwn(REALM_SETTING_DEFAULTS, k)) out[k] = v;
  }
  return out;
}
