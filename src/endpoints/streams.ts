/**
 * Channels, read. Reference: views/streams.py. Reads answer from the realm's read model
 * (realm.view.channels): the channels a user may know, one channel, its subscribers, its e-mail
 * address, a channel's id by name, the channel folders. Changes are in stream-settings.ts,
 * subscribing (and creating channels) in subscriptions.ts.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { nowSeconds } from '../config.js';
import {
  InsufficientPermissionError,
  InvalidChannelIdError,
  JsonableError,
  UserNotAuthorizedForQueryError,
} from '../lib/errors.js';
import { bool, nonNegativeInt, pathInt, str } from '../lib/params.js';
import { Role } from '../lib/roles.js';
import type { Channel } from '../queries/channels-view.js';
import type { RealmView } from '../queries/realm-view.js';
import { byName, formatChannel } from '../queries/channels.js';

/** GET /api/v1/streams — the channels the user may know, by the flags of the spec's table. */
export const listStreams = endpoint({
  method: 'GET',
  path: '/api/v1/streams',
  compressAnswer: true,
  params: z.object({
    include_public: bool().default(true),
    include_web_public: bool().default(false),
    include_subscribed: bool().default(true),
    exclude_archived: bool().default(true),
    include_all: bool().default(false),
    include_all_active: bool().default(false),
    include_default: bool().default(false),
    include_owner_subscribed: bool().default(false),
    include_can_access_content: bool().default(false),
  }),
  handle: ({ server, realm, user }, p) => {
    const view = realm.view.channels;
    // The deprecated alias is for administrators only (spec/API.md).
    if (p.include_all_active && user.role > Role.ADMINISTRATOR)
      throw new UserNotAuthorizedForQueryError();
    const includeAll = p.include_all || p.include_all_active;
    const includePublic = p.include_public && user.role !== Role.GUEST;
    const owner =
      p.include_owner_subscribed && user.is_bot && user.bot_owner_id !== null
        ? user.bot_owner_id
        : null;
    const picked: Channel[] = [];
    for (const ch of view.all()) {
      if (p.exclude_archived && ch.deactivated) continue;
      let take: boolean;
      if (includeAll) {
        take = view.may(user.id, ch, 'metadata');
      } else if (p.include_can_access_content) {
        take =
          view.may(user.id, ch, 'content') || (owner !== null && view.isSubscribed(owner, ch.id));
      } else {
        take =
          (p.include_subscribed && view.isSubscribed(user.id, ch.id)) ||
          (includePublic && ch.invite_only === 0) ||
          (p.include_web_public && ch.is_web_public === 1 && !ch.deactivated) ||
          (owner !== null && view.isSubscribed(owner, ch.id));
      }
      if (take) picked.push(ch);
    }
    const now = nowSeconds(server.config);
    const streams = picked.map((ch) => {
      const o = formatChannel(realm.view, ch, now);
      if (p.include_default) o.is_default = view.isDefault(ch.id);
      return o;
    });
    return { streams: streams.sort(byName) };
  },
});

/** A channel the user may know (archived ones are invalid here, as in the reference). */
function accessChannelMetadata(view: RealmView, userId: number, channelId: number): Channel {
  const ch = view.channels.byId(channelId);
  if (!ch || ch.deactivated || !view.channels.may(userId, ch, 'metadata'))
    throw new InvalidChannelIdError();
  return ch;
}

/** GET /api/v1/streams/{stream_id} */
export const getStream = endpoint({
  method: 'GET',
  path: '/api/v1/streams/:stream_id',
  params: z.object({ stream_id: pathInt() }),
  handle: ({ server, realm, user }, p) => {
    const ch = accessChannelMetadata(realm.view, user.id, p.stream_id);
    return { stream: formatChannel(realm.view, ch, nowSeconds(server.config)) };
  },
});

/** GET /api/v1/streams/{stream_id}/members */
export const getSubscribers = endpoint({
  method: 'GET',
  path: '/api/v1/streams/:stream_id/members',
  params: z.object({ stream_id: pathInt() }),
  handle: ({ realm, user }, p) => {
    const ch = accessChannelMetadata(realm.view, user.id, p.stream_id);
    return { subscribers: realm.view.channels.subscriberIds(ch.id) };
  },
});

/**
 * GET /api/v1/streams/{stream_id}/email_address: the address that posts to the channel by e-mail.
 * Confab runs no e-mail gateway, so the address is empty, as the reference answers when its
 * gateway is not configured; access to the channel and to the sender are checked all the same.
 */
export const getStreamEmailAddress = endpoint({
  method: 'GET',
  path: '/api/v1/streams/:stream_id/email_address',
  params: z.object({ stream_id: pathInt(), sender_id: nonNegativeInt().optional() }),
  handle: ({ realm, user }, p) => {
    const view = realm.view;
    const ch = view.channels.byId(p.stream_id);
    if (!ch || ch.deactivated || !view.channels.may(user.id, ch, 'content')) {
      throw new InvalidChannelIdError();
    }
    if (p.sender_id !== undefined && p.sender_id !== user.id) {
      // Another sender must be a bot the requester may administer.
      const bot = view.user(p.sender_id);
      if (!bot || !bot.is_bot) throw new JsonableError('No such bot');
      if (bot.bot_owner_id !== user.id && user.role > Role.ADMINISTRATOR) {
        throw new InsufficientPermissionError();
      }
    }
    return { email: '' };
  },
});

/** GET /api/v1/get_stream_id?stream=<name> */
export const getStreamId = endpoint({
  method: 'GET',
  path: '/api/v1/get_stream_id',
  params: z.object({ stream: str() }),
  handle: ({ realm, user }, p) => {
    const view = realm.view.channels;
    const ch = view.byName(p.stream);
    if (!ch || ch.deactivated || !view.may(user.id, ch, 'content'))
      throw new JsonableError(`Invalid channel name '${p.stream}'`);
    return { stream_id: ch.id };
  },
});

/** GET /api/v1/channel_folders */
export const listChannelFolders = endpoint({
  method: 'GET',
  path: '/api/v1/channel_folders',
  params: z.object({ include_archived: bool().default(false) }),
  handle: ({ realm }, p) => ({
    channel_folders: realm.view.channels
      .allFolders()
      .filter((f) => p.include_archived || !f.is_archived)
      .map((f) => ({
        id: f.id,
        name: f.name,
        description: f.description,
        rendered_description: f.rendered_description,
        creator_id: f.creator_id,
        date_created: f.date_created,
        is_archived: f.is_archived === 1,
      })),
  }),
});
