/**
 * Bots. Reference: views/users.py (add_bot_backend, get_bots_backend, patch_bot_backend,
 * regenerate_bot_api_key, deactivate_bot_backend); reactivation is POST /users/{id}/reactivate.
 * Parameters are decoded here; who may do what is checked by the realm actor
 * (src/mutations/bots.ts).
 *
 *   POST   /bots                          create (generic, incoming-webhook, outgoing-webhook)
 *   GET    /bots                          the caller's active bots
 *   PATCH  /bots/{bot_id}                 name, role, owner, defaults, outgoing URL, config
 *   DELETE /bots/{bot_id}                 deactivate
 *   POST   /bots/{bot_id}/api_key/regenerate
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import {
  checkBotUrl,
  MAX_BOT_CONFIG_ENTRIES,
  MAX_BOT_CONFIG_LENGTH,
  MAX_SERVICE_NAME_LENGTH,
  BotInterface,
} from '../lib/bots.js';
import { GuestNotAllowedError, HumanUsersOnlyError, JsonableError } from '../lib/errors.js';
import { bool, intValue, json, jsonOrString, ownNulRule, pathInt, str } from '../lib/params.js';
import { BotType, isRole, Role } from '../lib/roles.js';
import { realmHost } from '../lib/urls.js';
import { avatarUrl } from '../queries/users.js';
import type { UserRow } from '../storage/users.js';

const configData = () =>
  json(
    z.record(
      z.string().max(MAX_BOT_CONFIG_LENGTH, { error: 'Invalid {var}' }),
      z.string().max(MAX_BOT_CONFIG_LENGTH, { error: 'Invalid {var}' }),
      { error: '{var} is not a dict' },
    ),
  )
    .refine((d) => Object.keys(d).length <= MAX_BOT_CONFIG_ENTRIES, { error: 'Invalid {var}' })
    .optional();

/** A URL parameter: JSON-encoded as the reference's check_url takes it, or plain. */
const urlParam = () => jsonOrString(z.string({ error: '{var} is not a string' }));

function requireMemberOrAdmin(user: UserRow): void {
  if (user.role === Role.GUEST) throw new GuestNotAllowedError();
  if (user.is_bot) throw new HumanUsersOnlyError();
}

/** POST /api/v1/bots */
export const addBot = endpoint({
  method: 'POST',
  path: '/api/v1/bots',
  params: z.object({
    full_name: ownNulRule(str()), // checkFullName
    short_name: ownNulRule(str()), // "Bad name or username"
    bot_type: json(intValue()).default(BotType.DEFAULT),
    payload_url: urlParam().default(''),
    service_name: str({ max: MAX_SERVICE_NAME_LENGTH }).optional(),
    config_data: configData(),
    interface_type: json(intValue()).default(BotInterface.GENERIC),
    default_sending_stream: str().optional(),
    default_events_register_stream: str().optional(),
    default_all_public_streams: bool().optional(),
  }),
  handle: async ({ server, realm, user }, p) => {
    requireMemberOrAdmin(user);
    const payloadUrl = p.payload_url === '' ? '' : checkBotUrl(p.payload_url, 'payload_url');
    return realm.ask('bot.create', {
      acting_user_id: user.id,
      full_name: p.full_name,
      short_name: p.short_name,
      bot_type: p.bot_type,
      payload_url: payloadUrl,
      interface_type: p.interface_type,
      service_name: p.service_name ?? null,
      config_data: p.config_data ?? {},
      default_sending_stream: p.default_sending_stream ?? null,
      default_events_register_stream: p.default_events_register_stream ?? null,
      default_all_public_streams: p.default_all_public_streams ?? null,
      bot_domain: realmHost(server.config, realm.view.row.string_id).replace(/:\d+$/, ''),
    });
  },
});

/** GET /api/v1/bots — the caller's active bots, oldest first (the reference's fields). */
export const getBots = endpoint({
  method: 'GET',
  path: '/api/v1/bots',
  params: z.object({}),
  handle: ({ server, realm, user }) => {
    requireMemberOrAdmin(user);
    const view = realm.view;
    const bots = [];
    for (const id of view.userIdsAscending()) {
      const bot = view.user(id)!;
      if (!bot.is_bot || !bot.is_active || bot.bot_owner_id !== user.id) continue;
      const p = server.store.bots.profile(bot.id);
      const channel = (cid: number | null | undefined) =>
        cid === null || cid === undefined ? null : (view.channels.byId(cid)?.name ?? null);
      bots.push({
        username: bot.email,
        full_name: bot.full_name,
        api_key: bot.api_key,
        avatar_url: avatarUrl(view, bot, false),
        default_sending_stream: channel(p?.default_sending_stream_id),
        default_events_register_stream: channel(p?.default_events_register_stream_id),
        default_all_public_streams: p?.default_all_public_streams === 1,
        // Beyond the reference's fields: what a client needs to manage the bot.
        user_id: bot.id,
        bot_type: bot.bot_type,
        date_joined: bot.date_joined,
      });
    }
    bots.sort((a, b) => a.date_joined - b.date_joined || a.user_id - b.user_id);
    return { bots: bots.map(({ date_joined: _d, ...b }) => b) };
  },
});

/** PATCH /api/v1/bots/{bot_id} */
export const updateBot = endpoint({
  method: 'PATCH',
  path: '/api/v1/bots/:bot_id',
  params: z.object({
    bot_id: pathInt(),
    full_name: ownNulRule(str()).optional(), // checkFullName
    role: json(intValue().refine(isRole, { error: 'Invalid {var}' })).optional(),
    bot_owner_id: json(intValue()).optional(),
    config_data: configData(),
    service_payload_url: urlParam().optional(),
    service_interface: json(intValue()).default(BotInterface.GENERIC),
    default_sending_stream: str().optional(),
    default_events_register_stream: str().optional(),
    default_all_public_streams: bool().optional(),
  }),
  handle: async ({ realm, user }, p) => {
    requireMemberOrAdmin(user);
    if (p.service_payload_url !== undefined && p.service_payload_url === '')
      throw new JsonableError('service_payload_url is not a URL');
    return realm.ask('bot.update', {
      acting_user_id: user.id,
      bot_id: p.bot_id,
      ...(p.full_name !== undefined ? { full_name: p.full_name } : {}),
      ...(p.role !== undefined ? { role: p.role } : {}),
      ...(p.bot_owner_id !== undefined ? { bot_owner_id: p.bot_owner_id } : {}),
      ...(p.config_data !== undefined ? { config_data: p.config_data } : {}),
      ...(p.service_payload_url !== undefined
        ? { service_payload_url: checkBotUrl(p.service_payload_url, 'service_payload_url') }
        : {}),
      service_interface: p.service_interface,
      ...(p.default_sending_stream !== undefined
        ? { default_sending_stream: p.default_sending_stream }
        : {}),
      ...(p.default_events_register_stream !== undefined
        ? { default_events_register_stream: p.default_events_register_stream }
        : {}),
      ...(p.default_all_public_streams !== undefined
        ? { default_all_public_streams: p.default_all_public_streams }
        : {}),
    });
  },
});

/** DELETE /api/v1/bots/{bot_id} — deactivates the bot. */
export const deactivateBot = endpoint({
  method: 'DELETE',
  path: '/api/v1/bots/:bot_id',
  params: z.object({ bot_id: pathInt() }),
  handle: async ({ realm, user }, p) => {
    requireMemberOrAdmin(user);
    return realm.ask('bot.deactivate', { acting_user_id: user.id, bot_id: p.bot_id });
  },
});

/** POST /api/v1/bots/{bot_id}/api_key/regenerate */
export const regenerateBotApiKey = endpoint({
  method: 'POST',
  path: '/api/v1/bots/:bot_id/api_key/regenerate',
  params: z.object({ bot_id: pathInt() }),
  handle: async ({ realm, user }, p) => {
    requireMemberOrAdmin(user);
    return realm.ask('bot.api_key.regenerate', { acting_user_id: user.id, bot_id: p.bot_id });
  },
});
