/**
 * Creating and changing users. Reference: the reference server's actions/create_user.py and
 * views/users.py (create_user_backend).
 */
import crypto from 'node:crypto';
import { emailInvalidReason } from '../lib/email-validation.js';
import {
  CannotDeactivateLastUserError,
  JsonableError,
  NoSuchUserError,
  OrganizationOwnerRequiredError,
  UserDeactivatedError,
} from '../lib/errors.js';
import { generateApiKey } from '../lib/password.js';
import { directSystemGroupsForRole, Role, type Role as RoleValue } from '../lib/roles.js';
import type { RealmView } from '../queries/realm-view.js';
import { formatUser } from '../queries/users.js';
import { canAccessDeliveryEmail, EmailVisibility } from '../lib/user-settings.js';
import type { Store } from '../storage/store.js';
import type { UserRow } from '../storage/users.js';
import { checkCanCreateUsers, checkRealmAdministrator } from '../lib/user-rules.js';
import type { MutationContext } from './context.js';
import { presenceSessionsEnded } from './presence.js';
import { endLoginSessions } from './sessions.js';
import { revokeEmailInvitationsFor, revokeInvitationsCreatedBy } from './invitation-cleanup.js';
import { bulkAddSubscriptions } from './subscriptions.js';
import { addNewUserHistory } from './new-user-history.js';
import { announceNewUser, sendWelcomeMessage } from './welcome.js';
import type { PreparedWelcome } from '../lib/welcome.js';
import { deactivationMail, welcomeMail } from '../lib/mail.js';
import { enqueueMail, mailRealm } from './mail.js';
import { emitBotActive } from './bot-rules.js';
import { botOwnerUserIds, isSystemBot } from '../queries/bots.js';
import { externalAvatarUrl, mediumAvatarUrl } from '../lib/avatars.js';

function normalizedName(name: string): string {
  return name.normalize('NFKC').toLowerCase();
}

/** With `require_unique_names`, no other user of the realm may have the same name (any case). */
export function checkUniqueName(realm: RealmView, name: string, exceptUserId: number | null): void {
  if (!realm.settings.require_unique_names) return;
  const wanted = normalizedName(name);
  for (const u of realm.usersById.values()) {
    if (u.id !== exceptUserId && normalizedName(u.full_name) === wanted) {
      throw new JsonableError('Unique names required in this organization.');
    }
  }
}

type InsertUser = {
  email: string;
  full_name: string;
  password_hash: string | null;
  api_key: string;
  role: RoleValue;
  can_create_users?: boolean;
  is_bot?: boolean;
  bot_type?: number | null;
  bot_owner_id?: number | null;
  timezone?: string;
  now: number;
  waitingPeriodDays: number;
};

/** Writes the user row and its system-group memberships. Caller holds the transaction. */
export function insertUserRow(store: Store, realmId: number, u: InsertUser): number {
  const userId = store.users.insert({
    realm_id: realmId,
    email: u.email,
    delivery_email: u.email,
    full_name: u.full_name,
    password_hash: u.password_hash,
    api_key: u.api_key,
    role: u.role,
    is_active: 1,
    is_bot: u.is_bot ? 1 : 0,
    bot_type: u.bot_type ?? null,
    bot_owner_id: u.bot_owner_id ?? null,
    is_billing_admin: 0,
    can_create_users: u.can_create_users ? 1 : 0,
    date_joined: u.now,
    timezone: u.timezone ?? '',
    avatar_source: 'G',
    avatar_version: 1,
    // The realm's defaults for new users (PATCH /realm/user_settings_defaults).
    settings: store.realmUserDefaults.get(realmId),
  });
  // A brand-new account is a full member only when the realm has no waiting period.
  for (const name of directSystemGroupsForRole(u.role, u.waitingPeriodDays === 0)) {
    const group = store.groups.byName(realmId, name);
    if (!group) throw new Error(`realm ${realmId} lacks system group ${name}`);
    store.groups.addMember(group.id, userId);
  }
  return userId;
}

export type CreateUserCommand = {
  acting_user_id: number | null; // null: the admin command line
  email: string;
  full_name: string;
  password_hash: string | null;
  role: RoleValue;
  /** Whether the new account may itself create users through the API (admins only). */
  can_create_users?: boolean;
  /** The channels the account joins (an accepted invitation's); default: the default channels. */
  channel_ids?: readonly number[];
  /**
   * The Welcome Bot's message to the account, rendered before the actor runs
   * (src/queries/welcome.ts); null: none (the test fixture's accounts, which stand for accounts
   * that existed before the test).
   */
  welcome: PreparedWelcome | null;
};

export type CreateUserResult = { user_id: number; api_key: string; email: string };

/**
 * check_create_user: through the API, only administrators allowed to create users; refuses a
 * duplicate e-mail and (with `require_unique_names`) a taken name. The command is the plan.
 */
export function checkCreateUser(ctx: MutationContext, cmd: CreateUserCommand): CreateUserCommand {
  const { store, realm } = ctx;
  if (cmd.acting_user_id !== null) checkCanCreateUsers(realm.user(cmd.acting_user_id));
  if (store.users.byDeliveryEmail(realm.id, cmd.email)) {
    throw new JsonableError(`Email '${cmd.email}' already in use`);
  }
  checkUniqueName(realm, cmd.full_name, null);
  return cmd;
}

/** do_create_user: creates the account (checked by checkCreateUser) and announces it. */
export function doCreateUser(ctx: MutationContext, cmd: CreateUserCommand): CreateUserResult {
  const { store, realm } = ctx;
  const apiKey = generateApiKey();
  const userId = insertUserRow(store, realm.id, {
    email: cmd.email,
    full_name: cmd.full_name,
    password_hash: cmd.password_hash,
    api_key: apiKey,
    role: cmd.role,
    can_create_users: cmd.can_create_users ?? false,
    now: ctx.now,
    waitingPeriodDays: realm.settings.waiting_period_threshold,
  });

  const everyone = realm.activeUsers().map((u) => u.id);
  const recipients = [...everyone, userId];
  const row = store.users.byId(userId)!;
  ctx.emit(
    { type: 'realm_user', op: 'add', person: formatUser(realm, row, { viewerId: null }) },
    recipients,
  );
  const groupIds = directSystemGroupsForRole(
    cmd.role,
    realm.settings.waiting_period_threshold === 0,
  ).map((name) => realm.systemGroupId(name));
  for (const groupId of groupIds) {
    ctx.emit(
      { type: 'user_group', op: 'add_members', group_id: groupId, user_ids: [userId] },
      recipients,
    );
  }
  revokeEmailInvitationsFor(ctx, cmd.email);
  // New users join the realm's default channels (archived ones are never default), or the
  // channels of the invitation they accepted.
  const defaults = (cmd.channel_ids ?? realm.channels.defaultChannelIds())
    .map((id) => realm.channels.byId(id))
    .filter((ch) => ch !== undefined && !ch.deactivated)
    .map((ch) => ({ ch: ch!, created: false }));
  if (defaults.length > 0) bulkAddSubscriptions(ctx, defaults, [row]);
  // Recent messages of those channels, so that the account's first view is not empty.
  addNewUserHistory(
    ctx,
    { id: userId, role: cmd.role },
    defaults.map((d) => d.ch),
  );
  // The Welcome Bot's direct message, unread and starred (process_new_human_user).
  // And the signup notice in the announcements channel (notify_new_user).
  if (cmd.welcome !== null) {
    sendWelcomeMessage(ctx, { id: userId, role: cmd.role }, cmd.welcome);
    announceNewUser(
      ctx,
      row,
      defaults.map((d) => d.ch.id),
    );
  }
  ctx.afterCommit(() => {
    realm.reloadUser(userId);
    for (const groupId of groupIds) realm.addGroupMembers(groupId, [userId]);
  });
  // The welcome mail (the reference's account_registered), with the new account.
  if (ctx.mail) {
    enqueueMail(
      ctx,
      'welcome',
      cmd.email,
      welcomeMail({ realm: mailRealm(ctx), fullName: cmd.full_name, email: cmd.email }),
    );
  }
  return { user_id: userId, api_key: apiKey, email: cmd.email };
}

export type DeactivateUserCommand = {
  acting_user_id: number;
  user_id: number;
  /**
   * `deactivation_notification_comment`: not null, the person is told by mail (with this text
   * from the administrators, when not empty).
   */
  notification_comment?: string | null;
};

/** What checkDeactivateUser found: the account, and the mail to tell its owner (or null). */
export type DeactivateUserPlan = { target: UserRow; notificationComment: string | null };

/**
 * do_deactivate_user: administrators only; the account can no longer log in or use its API key;
 * it stays listed (is_active false). The last active owner cannot be deactivated, and only owners
 * may deactivate an owner. Reference: views/users.py deactivate_user_backend.
 */
export function checkDeactivateUser(
  ctx: MutationContext,
  cmd: DeactivateUserCommand,
): DeactivateUserPlan {
  const { store, realm } = ctx;
  const actor = realm.user(cmd.acting_user_id);
  checkRealmAdministrator(actor);
  const target = store.users.byId(cmd.user_id);
  // The system bots are nobody's to change (the reference's live outside every realm).
  if (!target || target.realm_id !== realm.id || isSystemBot(target)) throw new NoSuchUserError();
  if (!target.is_active) throw new JsonableError('User is already deactivated');
  if (target.role === Role.OWNER) {
    if (actor.role !== Role.OWNER) throw new OrganizationOwnerRequiredError();
    const otherOwners = realm
      .activeUsers()
      .filter((u) => u.role === Role.OWNER && u.id !== target.id && !u.is_bot);
    if (otherOwners.length === 0) {
      throw new JsonableError('Cannot deactivate the only organization owner', {
        code: 'CANNOT_DEACTIVATE_LAST_USER',
        extra: { is_last_owner: true, entity: 'organization owner' },
      });
    }
  }
  return { target, notificationComment: cmd.notification_comment ?? null };
}

/**
 * An administrator's deactivation (checkDeactivateUser): doDeactivateUser, then, when asked, the
 * mail telling the person (the reference's deactivate e-mail; not to a bot's address; none when
 * the server sends no mail).
 */
export function doDeactivateUserByAdmin(
  ctx: MutationContext,
  plan: DeactivateUserPlan,
): Record<string, never> {
  const { target, notificationComment } = plan;
  doDeactivateUser(ctx, target);
  if (notificationComment !== null && ctx.mail && !target.is_bot) {
    enqueueMail(
      ctx,
      'deactivation',
      target.delivery_email,
      deactivationMail({ realm: mailRealm(ctx), comment: notificationComment }),
    );
  }
  return {};
}

/**
 * DELETE /users/me (deactivate_user_own_backend): anyone may leave, except the realm's only
 * active account and its only human owner.
 */
export function checkDeactivateOwnAccount(ctx: MutationContext, cmd: { user_id: number }): UserRow {
  const { store, realm } = ctx;
  const me = store.users.byId(cmd.user_id);
  if (!me || me.realm_id !== realm.id || !me.is_active) throw new JsonableError('No such user');
  // The system bots (Notification Bot, Welcome Bot) do not count: the reference's live outside
  // the realm.
  const active = realm.activeUsers().filter((u) => !isSystemBot(u));
  if (active.length === 1) throw new CannotDeactivateLastUserError(false);
  if (
    me.role === Role.OWNER &&
    !me.is_bot &&
    !active.some((u) => u.id !== me.id && u.role === Role.OWNER && !u.is_bot)
  ) {
    throw new CannotDeactivateLastUserError(true);
  }
  return me;
}

/**
 * do_deactivate_user: the account (checked by checkDeactivateUser or checkDeactivateOwnAccount)
 * stops working; everyone who may know learns of it.
 */
export function doDeactivateUser(ctx: MutationContext, target: UserRow): Record<string, never> {
  const { realm } = ctx;
  // A person's bots stop with them (the reference's _cascade).
  if (!target.is_bot) {
    for (const bot of realm.activeUsers())
      if (bot.is_bot && bot.bot_owner_id === target.id) deactivateOne(ctx, bot);
  }
  deactivateOne(ctx, target);
  return {};
}

function deactivateOne(ctx: MutationContext, target: UserRow): void {
  const { store, realm } = ctx;
  store.users.setActive(target.id, false);
  // As the reference's send_events_for_user_deactivation: those who may see the subscribers of a
  // channel the user was subscribed to (archived ones included) learn they left it, then
  // everyone learns the account is deactivated.
  const view = realm.channels;
  for (const [channelId, sub] of view.subscriptionsOf(target.id)) {
    const ch = view.byId(channelId);
    if (!sub.active || !ch) continue;
    const peers = view.metadataAudience(ch).filter((id) => id !== target.id);
    if (peers.length > 0)
      ctx.emit(
        { type: 'subscription', op: 'peer_remove', stream_ids: [ch.id], user_ids: [target.id] },
        peers,
      );
  }
  revokeInvitationsCreatedBy(ctx, target.id);
  ctx.emit(
    { type: 'realm_user', op: 'update', person: { user_id: target.id, is_active: false } },
    realm
      .activeUsers()
      .map((u) => u.id)
      .filter((id) => id !== target.id),
  );
  endLoginSessions(ctx, [target.id]);
  presenceSessionsEnded(ctx, target);
  emitBotActive(ctx, target, false);
  ctx.afterCommit(() => realm.reloadUser(target.id));
  ctx.endSessions([target.id]);
}

// ---- changes shared by PATCH /settings, PATCH /users/{id} and the e-mail confirmation -------

/** do_change_full_name: everyone learns the new name (a bot's owner also as a bot change). */
export function doChangeFullName(ctx: MutationContext, user: UserRow, fullName: string): void {
  const { store, realm } = ctx;
  store.users.setFullName(user.id, fullName);
  const person = { user_id: user.id, full_name: fullName };
  ctx.emit(
    { type: 'realm_user', op: 'update', person },
    realm.activeUsers().map((u) => u.id),
  );
  if (user.is_bot && !isSystemBot(user)) {
    ctx.emit({ type: 'realm_bot', op: 'update', bot: person }, botOwnerUserIds(realm, store, user));
  }
  ctx.afterCommit(() => realm.reloadUser(user.id));
}

/**
 * validate_email_change_request: may `user` take `newEmail` as their address? Refused when the
 * realm disables address changes (administrators excepted), when the address is invalid or not
 * allowed in the realm, and when another account has it.
 */
export function validateEmailChangeRequest(
  ctx: MutationContext,
  user: UserRow,
  newEmail: string,
): void {
  const { store, realm } = ctx;
  if (!user.is_active) throw new UserDeactivatedError();
  if (realm.settings.email_changes_disabled && user.role > Role.ADMINISTRATOR) {
    throw new JsonableError('Email address changes are disabled in this organization.');
  }
  const reason = emailInvalidReason(newEmail, realm.settings);
  if (reason !== null) throw new JsonableError(reason);
  const existing = store.users.byDeliveryEmail(realm.id, newEmail);
  if (existing) {
    throw new JsonableError(
      existing.is_active ? 'Already has an account.' : 'Account has been deactivated.',
    );
  }
}

/** The avatar fields clients replace when a user's avatar URL changes. */
export function avatarFields(
  u: Pick<UserRow, 'id' | 'realm_id' | 'avatar_source' | 'avatar_version'>,
  deliveryEmail: string,
) {
  const hash = crypto.createHash('md5').update(deliveryEmail.trim().toLowerCase()).digest('hex');
  const url =
    u.avatar_source === 'U'
      ? `/user_avatars/${u.realm_id}/${u.id}.png?version=${u.avatar_version}`
      : externalAvatarUrl(hash, u.avatar_version);
  return {
    avatar_source: u.avatar_source,
    avatar_url: url,
    avatar_url_medium: mediumAvatarUrl(url),
    avatar_version: u.avatar_version,
    user_id: u.id,
  };
}

/**
 * do_change_user_delivery_email: the new address becomes the account's (login, mail); those who
 * may see it learn it; an external-host avatar follows the address; when the address is public
 * (email_address_visibility "everyone") the visible `email` changes too and everyone learns it.
 */
export function doChangeDeliveryEmail(ctx: MutationContext, user: UserRow, newEmail: string): void {
  const { store, realm } = ctx;
  const visibility = realm.userSettings(user.id).email_address_visibility;
  store.users.setDeliveryEmail(user.id, newEmail);
  const isPublic = visibility === EmailVisibility.EVERYONE;
  if (isPublic) store.users.setEmail(user.id, newEmail);
  const active = realm.activeUsers();
  ctx.emit(
    { type: 'realm_user', op: 'update', person: { user_id: user.id, delivery_email: newEmail } },
    active
      .filter((v) => v.id === user.id || canAccessDeliveryEmail(v.role, visibility))
      .map((v) => v.id),
  );
  const everyone = active.map((v) => v.id);
  // An external-host avatar follows the address (the server's default image does not).
  if (user.avatar_source === 'G' && realm.settings.external_avatars) {
    ctx.emit({ type: 'realm_user', op: 'update', person: avatarFields(user, newEmail) }, everyone);
  }
  if (isPublic) {
    ctx.emit(
      { type: 'realm_user', op: 'update', person: { user_id: user.id, new_email: newEmail } },
      everyone,
    );
  }
  ctx.afterCommit(() => realm.reloadUser(user.id));
}
