/**
 * Bots: creating them (POST /bots), changing them (PATCH /bots/{id}), new API keys and
 * deactivation. Reference: views/users.py (add_bot_backend, patch_bot_backend,
 * regenerate_bot_api_key, deactivate_bot_backend), lib/users.py (access_bot_by_id,
 * check_can_create_bot, check_valid_bot_type, check_bot_name_available), actions/bots.py
 * (do_change_bot_owner, do_change_default_*), actions/create_user.py (notify_created_bot).
 *
 * Owners administer their bots, administrators every bot; the realm's system bots (no owner)
 * are no one's to change. Who may create which bot follows `can_create_bots_group` (every kind)
 * and `can_create_write_only_bots_group` (incoming-webhook bots only).
 */
import { botEmail, checkShortName, checkValidInterfaceType } from '../lib/bots.js';
import {
  GuestNotAllowedError,
  HumanUsersOnlyError,
  InsufficientPermissionError,
  JsonableError,
  OrganizationAdministratorRequiredError,
  OrganizationOwnerRequiredError,
} from '../lib/errors.js';
import { generateApiKey } from '../lib/password.js';
import { BotType, directSystemGroupsForRole, Role, type Role as RoleValue } from '../lib/roles.js';
import { checkFullName } from '../lib/user-rules.js';
import {
  botOwnerUserIds,
  botServices,
  canAdministerBot,
  formatBot,
  isSystemBot,
} from '../queries/bots.js';
import type { Channel } from '../queries/channels-view.js';
import { avatarUrl, formatUser } from '../queries/users.js';
import type { UserRow } from '../storage/users.js';
import { actingUser, type MutationContext } from './context.js';
import { checkBotNameAvailable, checkCanCreateBot } from './bot-rules.js';
import { doChangeUserRole } from './user-admin.js';
import { checkUniqueName, doChangeFullName, doDeactivateUser, insertUserRow } from './users.js';

/** The reference's require_member_or_admin. */
function botAdministrator(ctx: MutationContext, userId: number): UserRow {
  const u = actingUser(ctx.realm, userId);
  if (u.role === Role.GUEST) throw new GuestNotAllowedError();
  if (u.is_bot) throw new HumanUsersOnlyError();
  return u;
}

/** access_bot_by_id: a bot of this realm (any state) the caller administers. */
export function accessBotById(ctx: MutationContext, actor: UserRow, botId: number): UserRow {
  const bot = ctx.store.users.byId(botId);
  if (!bot || bot.realm_id !== ctx.realm.id || !bot.is_bot || isSystemBot(bot))
    throw new JsonableError('No such bot');
  if (!canAdministerBot(actor, bot)) throw new InsufficientPermissionError();
  // Creating users through the API is an owner's responsibility.
  if (bot.can_create_users && actor.role !== Role.OWNER) throw new OrganizationOwnerRequiredError();
  return bot;
}

/** access_stream_by_name for a bot's default channel: one the caller may read. */
function accessChannelByName(ctx: MutationContext, actor: UserRow, name: string): Channel {
  const ch = ctx.realm.channels.byName(name);
  if (!ch || ch.deactivated || !ctx.realm.channels.may(actor.id, ch, 'content'))
    throw new JsonableError(`Invalid channel name '${name}'`);
  return ch;
}

export type CreateBotCommand = {
  acting_user_id: number;
  full_name: string;
  short_name: string;
  bot_type: number;
  payload_url: string;
  interface_type: number;
  service_name: string | null;
  config_data: Record<string, string>;
  default_sending_stream: string | null;
  default_events_register_stream: string | null;
  default_all_public_streams: boolean | null;
  /** The realm's bot domain (the external host's name): bots' addresses end with it. */
  bot_domain: string;
};

type CreateBotPlan = {
  actor: UserRow;
  cmd: CreateBotCommand;
  email: string;
  fullName: string;
  serviceName: string;
  sending: Channel | null;
  register: Channel | null;
};

export function checkCreateBot(ctx: MutationContext, cmd: CreateBotCommand): CreateBotPlan {
  const actor = botAdministrator(ctx, cmd.acting_user_id);
  const shortName = checkShortName(cmd.short_name);
  const serviceName =
    cmd.bot_type !== BotType.INCOMING_WEBHOOK
      ? (cmd.service_name ?? shortName)
      : (cmd.service_name ?? '');
  const fullName = checkFullName(cmd.full_name);
  checkUniqueName(ctx.realm, fullName, null);
  const email = botEmail(shortName, cmd.bot_domain);
  if (cmd.bot_type === BotType.EMBEDDED) throw new JsonableError('Embedded bots are not enabled.');
  if (ctx.store.users.byDeliveryEmail(ctx.realm.id, email))
    throw new JsonableError('Username already in use');
  checkBotNameAvailable(ctx, fullName, null, false);
  checkCanCreateBot(ctx, actor, cmd.bot_type);
  checkValidInterfaceType(cmd.interface_type);
  if (cmd.bot_type === BotType.OUTGOING_WEBHOOK && cmd.payload_url === '')
    throw new JsonableError("Missing 'payload_url' argument");
  const sending =
    cmd.default_sending_stream === null
      ? null
      : accessChannelByName(ctx, actor, cmd.default_sending_stream);
  const register =
    cmd.default_events_register_stream === null
      ? null
      : accessChannelByName(ctx, actor, cmd.default_events_register_stream);
  return { actor, cmd, email, fullName, serviceName, sending, register };
}

export type CreateBotResult = {
  user_id: number;
  api_key: string;
  avatar_url: string | null;
  default_sending_stream: string | null;
  default_events_register_stream: string | null;
  default_all_public_streams: boolean;
};

/** do_create_user for a bot, its services and configuration, and notify_created_bot. */
export function doCreateBot(ctx: MutationContext, plan: CreateBotPlan): CreateBotResult {
  const { store, realm } = ctx;
  const { cmd } = plan;
  const apiKey = generateApiKey();
  const botId = insertUserRow(store, realm.id, {
    email: plan.email,
    full_name: plan.fullName,
    password_hash: null,
    api_key: apiKey,
    role: Role.MEMBER,
    is_bot: true,
    bot_type: cmd.bot_type,
    bot_owner_id: plan.actor.id,
    now: ctx.now,
    waitingPeriodDays: realm.settings.waiting_period_threshold,
  });
  store.bots.upsertProfile({
    user_id: botId,
    default_sending_stream_id: plan.sending?.id ?? null,
    default_events_register_stream_id: plan.register?.id ?? null,
    default_all_public_streams: cmd.default_all_public_streams ? 1 : 0,
  });
  if (cmd.bot_type === BotType.OUTGOING_WEBHOOK) {
    store.bots.insertService({
      user_id: botId,
      name: plan.serviceName,
      base_url: cmd.payload_url,
      token: generateApiKey(),
      interface: cmd.interface_type,
    });
  }
  if (cmd.bot_type === BotType.INCOMING_WEBHOOK) {
    if (plan.serviceName !== '') store.bots.putConfig(botId, 'integration_id', plan.serviceName);
    for (const [k, v] of Object.entries(cmd.config_data)) store.bots.putConfig(botId, k, v);
  }

  const row = store.users.byId(botId)!;
  const everyone = realm.activeUsers().map((u) => u.id);
  ctx.emit({ type: 'realm_user', op: 'add', person: formatUser(realm, row, { viewerId: null }) }, [
    ...everyone,
    botId,
  ]);
  const groupIds = directSystemGroupsForRole(
    Role.MEMBER,
    realm.settings.waiting_period_threshold === 0,
  ).map((name) => realm.systemGroupId(name));
  for (const groupId of groupIds) {
    ctx.emit({ type: 'user_group', op: 'add_members', group_id: groupId, user_ids: [botId] }, [
      ...everyone,
      botId,
    ]);
  }
  ctx.emit(
    { type: 'realm_bot', op: 'add', bot: formatBot(realm, store, row) },
    botOwnerUserIds(realm, store, row),
  );
  ctx.afterCommit(() => {
    realm.reloadUser(botId);
    for (const groupId of groupIds) realm.addGroupMembers(groupId, [botId]);
  });
  return {
    user_id: botId,
    api_key: apiKey,
    avatar_url: avatarUrl(realm, row, false),
    default_sending_stream: plan.sending?.name ?? null,
    default_events_register_stream: plan.register?.name ?? null,
    default_all_public_streams: cmd.default_all_public_streams ?? false,
  };
}

export type UpdateBotCommand = {
  acting_user_id: number;
  bot_id: number;
  full_name?: string;
  role?: RoleValue;
  bot_owner_id?: number;
  config_data?: Record<string, string>;
  service_payload_url?: string;
  service_interface: number;
  default_sending_stream?: string;
  default_events_register_stream?: string;
  default_all_public_streams?: boolean;
};

type UpdateBotPlan = {
  actor: UserRow;
  bot: UserRow;
  cmd: UpdateBotCommand;
  fullName?: string;
  owner?: UserRow;
  /** undefined: unchanged; null: none. */
  sending?: Channel | null;
  register?: Channel | null;
};

export function checkUpdateBot(ctx: MutationContext, cmd: UpdateBotCommand): UpdateBotPlan {
  const actor = botAdministrator(ctx, cmd.acting_user_id);
  const bot = accessBotById(ctx, actor, cmd.bot_id);
  const plan: UpdateBotPlan = { actor, bot, cmd };
  if (cmd.full_name !== undefined && cmd.full_name.trim() !== bot.full_name) {
    const name = checkFullName(cmd.full_name);
    checkUniqueName(ctx.realm, name, bot.id);
    checkBotNameAvailable(ctx, name, bot.id, false);
    plan.fullName = name;
  }
  if (cmd.role !== undefined && cmd.role !== bot.role) {
    if ((cmd.role === Role.OWNER || bot.role === Role.OWNER) && actor.role !== Role.OWNER)
      throw new OrganizationOwnerRequiredError();
    if (actor.role > Role.ADMINISTRATOR) throw new OrganizationAdministratorRequiredError();
  }
  if (cmd.bot_owner_id !== undefined) {
    const owner = ctx.store.users.byId(cmd.bot_owner_id);
    if (!owner || owner.realm_id !== ctx.realm.id)
      throw new JsonableError('Failed to change owner, no such user');
    if (!owner.is_active) throw new JsonableError('Failed to change owner, user is deactivated');
    if (owner.is_bot) throw new JsonableError("Failed to change owner, bots can't own other bots");
    if (owner.id !== bot.bot_owner_id) plan.owner = owner;
  }
  if (cmd.default_sending_stream !== undefined)
    plan.sending =
      cmd.default_sending_stream === ''
        ? null
        : accessChannelByName(ctx, actor, cmd.default_sending_stream);
  if (cmd.default_events_register_stream !== undefined)
    plan.register =
      cmd.default_events_register_stream === ''
        ? null
        : accessChannelByName(ctx, actor, cmd.default_events_register_stream);
  if (cmd.service_payload_url !== undefined) checkValidInterfaceType(cmd.service_interface);
  return plan;
}

export type UpdateBotResult = {
  full_name: string;
  avatar_url: string | null;
  service_interface: number;
  service_payload_url: string | null;
  config_data: Record<string, string> | null;
  default_sending_stream: string | null;
  default_events_register_stream: string | null;
  default_all_public_streams: boolean;
  bot_owner?: string;
};

export function doUpdateBot(ctx: MutationContext, plan: UpdateBotPlan): UpdateBotResult {
  const { store, realm } = ctx;
  const { cmd } = plan;
  let bot = plan.bot;
  const refetch = () => (bot = store.users.byId(bot.id)!);
  const botEvent = (fields: Record<string, unknown>) =>
    ctx.emit(
      { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, ...fields } },
      botOwnerUserIds(realm, store, bot),
    );

  if (plan.fullName !== undefined) {
    doChangeFullName(ctx, bot, plan.fullName);
    refetch();
  }
  if (cmd.role !== undefined && cmd.role !== bot.role) {
    doChangeUserRole(ctx, bot, cmd.role);
    refetch();
  }
  if (plan.owner) {
    const previous = bot.bot_owner_id === null ? undefined : store.users.byId(bot.bot_owner_id);
    store.users.setBotOwner(bot.id, plan.owner.id);
    refetch();
    const update = new Set(botOwnerUserIds(realm, store, bot));
    if (previous && previous.role > Role.ADMINISTRATOR) {
      ctx.emit({ type: 'realm_bot', op: 'delete', bot: { user_id: bot.id } }, [previous.id]);
      update.delete(previous.id);
    }
    if (plan.owner.role > Role.ADMINISTRATOR) {
      ctx.emit({ type: 'realm_bot', op: 'add', bot: formatBot(realm, store, bot) }, [
        plan.owner.id,
      ]);
      update.delete(plan.owner.id);
    }
    ctx.emit(
      { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, owner_id: plan.owner.id } },
      [...update],
    );
    ctx.emit(
      {
        type: 'realm_user',
        op: 'update',
        person: { user_id: bot.id, bot_owner_id: plan.owner.id },
      },
      realm.activeUsers().map((u) => u.id),
    );
  }

  const profile = store.bots.profile(bot.id) ?? {
    user_id: bot.id,
    default_sending_stream_id: null,
    default_events_register_stream_id: null,
    default_all_public_streams: 0,
  };
  if (plan.sending !== undefined) {
    profile.default_sending_stream_id = plan.sending?.id ?? null;
    store.bots.upsertProfile(profile);
    botEvent({ default_sending_stream: plan.sending?.name ?? null });
  }
  if (plan.register !== undefined) {
    profile.default_events_register_stream_id = plan.register?.id ?? null;
    store.bots.upsertProfile(profile);
    botEvent({ default_events_register_stream: plan.register?.name ?? null });
  }
  if (cmd.default_all_public_streams !== undefined) {
    profile.default_all_public_streams = cmd.default_all_public_streams ? 1 : 0;
    store.bots.upsertProfile(profile);
    botEvent({ default_all_public_streams: cmd.default_all_public_streams });
  }
  if (cmd.service_payload_url !== undefined && bot.bot_type === BotType.OUTGOING_WEBHOOK) {
    const [service] = store.bots.services(bot.id);
    if (service)
      store.bots.updateService(service.id, cmd.service_payload_url, cmd.service_interface);
    else
      store.bots.insertService({
        user_id: bot.id,
        name: bot.email.split('-bot@')[0] ?? bot.full_name,
        base_url: cmd.service_payload_url,
        token: generateApiKey(),
        interface: cmd.service_interface,
      });
    botEvent({ services: botServices(store, bot) });
  }
  if (cmd.config_data !== undefined && bot.bot_type === BotType.INCOMING_WEBHOOK) {
    for (const [k, v] of Object.entries(cmd.config_data)) store.bots.putConfig(bot.id, k, v);
    botEvent({ services: botServices(store, bot) });
  }
  ctx.afterCommit(() => realm.reloadUser(bot.id));

  const p = store.bots.profile(bot.id);
  const name = (id: number | null | undefined) =>
    id === null || id === undefined ? null : (realm.channels.byId(id)?.name ?? null);
  const sendingName =
    plan.sending !== undefined ? (plan.sending?.name ?? null) : name(p?.default_sending_stream_id);
  const registerName =
    plan.register !== undefined
      ? (plan.register?.name ?? null)
      : name(p?.default_events_register_stream_id);
  const out: UpdateBotResult = {
    full_name: bot.full_name,
    avatar_url: avatarUrl(realm, bot, false),
    service_interface: cmd.service_interface,
    service_payload_url: cmd.service_payload_url ?? null,
    config_data: cmd.config_data ?? null,
    default_sending_stream: sendingName,
    default_events_register_stream: registerName,
    default_all_public_streams: p?.default_all_public_streams === 1,
  };
  if (bot.bot_owner_id !== null) {
    const owner = store.users.byId(bot.bot_owner_id);
    if (owner) out.bot_owner = owner.email;
  }
  return out;
}

type BotCommand = { acting_user_id: number; bot_id: number };

export function checkRegenerateBotApiKey(ctx: MutationContext, cmd: BotCommand): UserRow {
  const actor = botAdministrator(ctx, cmd.acting_user_id);
  return accessBotById(ctx, actor, cmd.bot_id);
}

/** do_regenerate_api_key for a bot: the old key stops working at once. */
export function doRegenerateBotApiKey(ctx: MutationContext, bot: UserRow): { api_key: string } {
  const apiKey = generateApiKey();
  ctx.store.users.setApiKey(bot.id, apiKey);
  ctx.emit(
    { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, api_key: apiKey } },
    botOwnerUserIds(ctx.realm, ctx.store, bot),
  );
  ctx.afterCommit(() => ctx.realm.reloadUser(bot.id));
  return { api_key: apiKey };
}

export function checkDeactivateBot(ctx: MutationContext, cmd: BotCommand): UserRow {
  const actor = botAdministrator(ctx, cmd.acting_user_id);
  const bot = accessBotById(ctx, actor, cmd.bot_id);
  if (!bot.is_active) throw new JsonableError('User is already deactivated');
  return bot;
}

/** DELETE /bots/{id}: do_deactivate_user (which tells the bot's administrators too). */
export function doDeactivateBot(ctx: MutationContext, bot: UserRow): Record<string, never> {
  return doDeactivateUser(ctx, bot);
}
