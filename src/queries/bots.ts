/**
 * Bots as the API shows them to those who administer them (GET /bots, `realm_bot` events,
 * register's `realm_bots`), and who those are. Reference: actions/create_user.py
 * (created_bot_event, bot_owner_user_ids), lib/bot_lib / lib/users.py (get_service_dicts_for_bot,
 * get_owned_bot_dicts), models/users.py (can_admin_user).
 */
import { BotType, Role } from '../lib/roles.js';
import type { ReadStore } from '../storage/store.js';
import type { UserRow } from '../storage/users.js';
import type { RealmView } from './realm-view.js';
import { avatarUrl } from './users.js';

export type ApiBotService =
  | { base_url: string; token: string; interface: number }
  | { service_name: string; config_data: Record<string, string> };

export type ApiBot = {
  user_id: number;
  email: string;
  full_name: string;
  bot_type: number | null;
  is_active: boolean;
  api_key: string;
  default_sending_stream: string | null;
  default_events_register_stream: string | null;
  default_all_public_streams: boolean;
  avatar_url: string | null;
  services: ApiBotService[];
  owner_id?: number | null;
};

/**
 * A bot without an owner is one of the realm's system bots (Notification Bot, Welcome Bot: the
 * reference's cross-realm bots, which no user administers); every bot made through the API has one.
 */
export function isSystemBot(u: Pick<UserRow, 'is_bot' | 'bot_owner_id'>): boolean {
  return u.is_bot === 1 && u.bot_owner_id === null;
}

/** The reference's can_admin_user: the bot's owner, or an administrator. */
export function canAdministerBot(actor: UserRow, bot: UserRow): boolean {
  return bot.bot_owner_id === actor.id || actor.role <= Role.ADMINISTRATOR;
}

/** The channels a bot's defaults name, with whether any is private. */
function defaults(view: RealmView, store: ReadStore, botId: number) {
  const p = store.bots.profile(botId);
  const name = (id: number | null | undefined) =>
    id === null || id === undefined ? null : (view.channels.byId(id) ?? null);
  const sending = name(p?.default_sending_stream_id);
  const register = name(p?.default_events_register_stream_id);
  return {
    sending,
    register,
    allPublic: p?.default_all_public_streams === 1,
    private: (sending?.invite_only ?? 0) === 1 || (register?.invite_only ?? 0) === 1,
  };
}

/**
 * Who administers a bot, so who gets its `realm_bot` events: its owner, and (unless one of its
 * default channels is private) the realm's human administrators.
 */
export function botOwnerUserIds(view: RealmView, store: ReadStore, bot: UserRow): number[] {
  const out = new Set<number>();
  if (bot.bot_owner_id !== null) out.add(bot.bot_owner_id);
  if (!defaults(view, store, bot.id).private) {
    for (const u of view.activeUsers())
      if (!u.is_bot && u.role <= Role.ADMINISTRATOR) out.add(u.id);
  }
  return [...out];
}

export function botServices(store: ReadStore, bot: UserRow): ApiBotService[] {
  if (bot.bot_type === BotType.OUTGOING_WEBHOOK) {
    return store.bots
      .services(bot.id)
      .map((s) => ({ base_url: s.base_url, token: s.token, interface: s.interface }));
  }
  if (bot.bot_type === BotType.INCOMING_WEBHOOK) {
    const config = store.bots.config(bot.id);
    const name = config.integration_id;
    if (name === undefined) return [];
    const { integration_id: _id, ...rest } = config;
    return [{ service_name: name, config_data: rest }];
  }
  return [];
}

/** The Bot object: the API key included (only its administrators ever see it). */
export function formatBot(view: RealmView, store: ReadStore, bot: UserRow): ApiBot {
  const d = defaults(view, store, bot.id);
  const out: ApiBot = {
    user_id: bot.id,
    email: bot.email,
    full_name: bot.full_name,
    bot_type: bot.bot_type,
    is_active: bot.is_active === 1,
    api_key: bot.api_key,
    default_sending_stream: d.sending?.name ?? null,
    default_events_register_stream: d.register?.name ?? null,
    default_all_public_streams: d.allPublic,
    avatar_url: avatarUrl(view, bot, false),
    services: botServices(store, bot),
  };
  if (bot.bot_owner_id !== null) out.owner_id = bot.bot_owner_id;
  return out;
}

/**
 * Register's `realm_bots`: every bot of the realm but the system bots for an administrator, the
 * caller's own otherwise (the reference's get_owned_bot_dicts).
 */
export function ownedBots(view: RealmView, store: ReadStore, user: UserRow): ApiBot[] {
  const admin = user.role <= Role.ADMINISTRATOR;
  const out: ApiBot[] = [];
  for (const id of view.userIdsAscending()) {
    const u = view.user(id)!;
    if (!u.is_bot || isSystemBot(u)) continue;
    if (!admin && u.bot_owner_id !== user.id) continue;
    out.push(formatBot(view, store, u));
  }
  return out;
}
