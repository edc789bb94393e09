/**
 * Mutations the admin tool runs (src/admin/commands.ts) through a realm's actor, like every other
 * change: system bots, a password or API key set by the operator, deactivating a realm.
 * Reference: the management commands of the reference server (change_password, ...,
 * deactivate_realm) and the actions they call.
 */
import { emailInvalidReason } from '../lib/email-validation.js';
import { JsonableError } from '../lib/errors.js';
import { generateApiKey } from '../lib/password.js';
import { directSystemGroupsForRole, Role } from '../lib/roles.js';
import { formatUser } from '../queries/users.js';
import type { MutationContext } from './context.js';
import { endLoginSessions } from './sessions.js';
import { doDeactivateRealm } from './realm-deactivate.js';
import { doChangeDeliveryEmail, insertUserRow } from './users.js';

/** The reference's bot_type for a generic bot. */
const DEFAULT_BOT = 1;

/**
 * A realm's system bot (Welcome Bot, Notification Bot): created on first use, announced to the
 * realm's users like any new account.
 */
export function ensureSystemBot(
  ctx: MutationContext,
  bot: { email: string; full_name: string },
): { user_id: number } {
  const { store, realm } = ctx;
  const existing = realm.userByEmail(bot.email);
  if (existing) return { user_id: existing.id };
  const userId = insertUserRow(store, realm.id, {
    email: bot.email,
    full_name: bot.full_name,
    password_hash: null,
    api_key: generateApiKey(),
    role: Role.MEMBER,
    is_bot: true,
    bot_type: DEFAULT_BOT,
    now: ctx.now,
    waitingPeriodDays: 0,
  });
  const row = store.users.byId(userId)!;
  const everyone = realm.activeUsers().map((u) => u.id);
  ctx.emit(
    { type: 'realm_user', op: 'add', person: formatUser(realm, row, { viewerId: null }) },
    everyone,
  );
  // insertUserRow made the bot a member of its role's system groups: the read model and the
  // clients learn it as for any new account.
  const groupIds = directSystemGroupsForRole(Role.MEMBER, true).map((n) => realm.systemGroupId(n));
  for (const groupId of groupIds) {
    ctx.emit(
      { type: 'user_group', op: 'add_members', group_id: groupId, user_ids: [userId] },
      everyone,
    );
  }
  ctx.afterCommit(() => {
    realm.reloadUser(userId);
    for (const groupId of groupIds) realm.addGroupMembers(groupId, [userId]);
  });
  return { user_id: userId };
}

/** The admin tool's commands name a user of this realm (any state). */
function checkUserOfRealm(ctx: MutationContext, userId: number): void {
  const u = ctx.store.users.byId(userId);
  if (!u || u.realm_id !== ctx.realm.id) throw new JsonableError('No such user');
}

type SetPasswordHashCommand = { user_id: number; password_hash: string | null };

export function checkSetPasswordHash(
  ctx: MutationContext,
  cmd: SetPasswordHashCommand,
): SetPasswordHashCommand {
  checkUserOfRealm(ctx, cmd.user_id);
  return cmd;
}

/** `keep_session`: the browser session that asked (its token hash) stays logged in. */
type RegenerateApiKeyCommand = { user_id: number; keep_session?: string | null };

export function checkRegenerateApiKey(
  ctx: MutationContext,
  cmd: RegenerateApiKeyCommand,
): RegenerateApiKeyCommand {
  checkUserOfRealm(ctx, cmd.user_id);
  return cmd;
}

/** `manage reset-password`: the new hash (computed before the command), or null for none. */
export function doSetPasswordHash(
  ctx: MutationContext,
  cmd: SetPasswordHashCommand,
): Record<string, never> {
  const user = { id: cmd.user_id };
  ctx.store.users.setPasswordHash(user.id, cmd.password_hash);
  endLoginSessions(ctx, [user.id]);
  ctx.afterCommit(() => ctx.realm.reloadUser(user.id));
  return {};
}

/**
 * `manage regenerate-api-key`, and POST /users/me/api_key/regenerate: the old key stops working
 * at once (the auth cache is per user), and the user's browser sessions end (but the one that
 * asked, `keep_session`).
 */
export function doRegenerateApiKey(
  ctx: MutationContext,
  cmd: RegenerateApiKeyCommand,
): { api_key: string } {
  const user = { id: cmd.user_id };
  const apiKey = generateApiKey();
  ctx.store.users.setApiKey(user.id, apiKey);
  endLoginSessions(ctx, [user.id], cmd.keep_session ?? null);
  ctx.afterCommit(() => ctx.realm.reloadUser(user.id));
  return { api_key: apiKey };
}

/**
 * The command line's do_deactivate_realm (doDeactivateRealm, as POST /realm/deactivate, without
 * its permission check); deactivating a deactivated realm changes nothing.
 */
export function doDeactivateRealmByAdmin(
  ctx: MutationContext,
  _cmd: Record<string, never>,
): { already: boolean } {
  if (ctx.realm.deactivated) return { already: true };
  doDeactivateRealm(ctx);
  return { already: false };
}

type SetEmailCommand = { user_id: number; email: string };

/**
 * `manage change-email`: the reference's change_user_email, without a confirmation link (the
 * operator vouches for the address). The address must be valid, allowed in the realm and free;
 * the realm's "address changes disabled" setting does not apply to the operator.
 */
export function checkSetEmail(ctx: MutationContext, cmd: SetEmailCommand): SetEmailCommand {
  checkUserOfRealm(ctx, cmd.user_id);
  const user = ctx.store.users.byId(cmd.user_id)!;
  if (!user.is_active) throw new JsonableError('The user is deactivated');
  const reason = emailInvalidReason(cmd.email, ctx.realm.settings);
  if (reason !== null) throw new JsonableError(reason);
  const existing = ctx.store.users.byDeliveryEmail(ctx.realm.id, cmd.email);
  if (existing && existing.id !== user.id) throw new JsonableError('Already has an account.');
  return cmd;
}

export function doSetEmail(
  ctx: MutationContext,
  cmd: SetEmailCommand,
): { user_id: number; old_email: string; new_email: string } {
  const user = ctx.store.users.byId(cmd.user_id)!;
  if (user.delivery_email !== cmd.email) doChangeDeliveryEmail(ctx, user, cmd.email);
  return { user_id: user.id, old_email: user.delivery_email, new_email: cmd.email };
}

/**
 * `manage logout-everywhere`: every session of the user ends — browser sessions, event queues
 * (held polls answered, sockets closed); clients must log in or register again — and with
 * `api_key`, a new API key too, so that clients holding the old one are logged out as well.
 */
export function doEndUserSessions(
  ctx: MutationContext,
  cmd: { user_id: number; api_key: boolean },
): { api_key: string | null } {
  checkUserOfRealm(ctx, cmd.user_id);
  endLoginSessions(ctx, [cmd.user_id]);
  ctx.endSessions([cmd.user_id]);
  return {
    api_key: cmd.api_key ? doRegenerateApiKey(ctx, { user_id: cmd.user_id }).api_key : null,
  };
}
