/**
 * Creating and changing users. Reference: the reference server's actions/create_user.py and
 * views/users.py (create_user_backend).
 */
import { JsonableError } from '../lib/errors.js';
import { generateApiKey, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../lib/password.js';
import { directSystemGroupsForRole, Role, type Role as RoleValue } from '../lib/roles.js';
import { formatUser } from '../queries/users.js';
import type { Store } from '../storage/store.js';
import type { MutationContext } from './context.js';
import { revokeEmailInvitationsFor, revokeInvitationsCreatedBy } from './invitation-cleanup.js';
import { bulkAddSubscriptions } from './subscriptions.js';

export const MAX_FULL_NAME_LENGTH = 100;
export { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH };

const EMAIL_RE = /^[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+\.[^\s@<>()[\],;:"]+$/;

export function isValidEmail(email: string): boolean {
  return email.length <= 254 && EMAIL_RE.test(email);
}

/** The reference's check_full_name: trims, and refuses empty, over-long or control characters. */
export function checkFullName(raw: string): string {
  const name = raw.trim();
  if (name.length > MAX_FULL_NAME_LENGTH) throw new JsonableError('Name too long!');
  if (name.length < 1) throw new JsonableError('Name too short!');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f*`\\>"@]/.test(name)) {
    // Mention syntax (@**Name**) and markdown would be ambiguous with these characters.
    throw new JsonableError('Invalid characters in name!');
  }
  return name;
}

/** Password rules checked before hashing (hashing happens outside the actor). */
export function checkPasswordStrength(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    throw new JsonableError('The password is too weak.');
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
    settings: '{}',
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
};

export type CreateUserResult = { user_id: number; api_key: string; email: string };

/** check_create_user + do_create_user: refuses a duplicate e-mail, then creates and announces. */
export function checkCreateUser(ctx: MutationContext, cmd: CreateUserCommand): CreateUserResult {
  const { store, realm } = ctx;
  if (store.users.byDeliveryEmail(realm.id, cmd.email)) {
    throw new JsonableError(`Email '${cmd.email}' already in use`);
  }
  if (realm.settings.require_unique_names) {
    const lowered = cmd.full_name.toLowerCase();
    for (const u of realm.usersById.values()) {
      if (u.full_name.toLowerCase() === lowered) {
        throw new JsonableError('Unique names required in this organization.');
      }
    }
  }
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
  ctx.afterCommit(() => {
    realm.reloadUser(userId);
    for (const groupId of groupIds) realm.addGroupMembers(groupId, [userId]);
  });
  return { user_id: userId, api_key: apiKey, email: cmd.email };
}

export const ROLE_FOR_NEW_USER: RoleValue = Role.MEMBER;

export type DeactivateUserCommand = { acting_user_id: number; user_id: number };

/**
 * do_deactivate_user: the account can no longer log in or use its API key; it stays listed
 * (is_active false). The last active owner cannot be deactivated, and only owners may deactivate
 * an owner. Reference: views/users.py deactivate_user_backend.
 */
export function checkDeactivateUser(
  ctx: MutationContext,
  cmd: DeactivateUserCommand,
): Record<string, never> {
  const { store, realm } = ctx;
  const target = store.users.byId(cmd.user_id);
  const actor = store.users.byId(cmd.acting_user_id);
  if (!target || target.realm_id !== realm.id || !actor) throw new JsonableError('No such user');
  if (!target.is_active) throw new JsonableError('User is already deactivated');
  if (target.role === Role.OWNER) {
    if (actor.role !== Role.OWNER) throw new JsonableError('Must be an organization owner');
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
  store.users.setActive(target.id, false);
  revokeInvitationsCreatedBy(ctx, target.id);
  ctx.emit(
    { type: 'realm_user', op: 'update', person: { user_id: target.id, is_active: false } },
    realm.activeUsers().map((u) => u.id),
  );
  ctx.afterCommit(() => realm.reloadUser(target.id));
  return {};
}
