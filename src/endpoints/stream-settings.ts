/**
 * Channels, changed. Reference: views/streams.py. A channel's properties (name, description,
 * permissions, group settings, folder, …), archiving, the realm's default channels, and channel
 * folders; descriptions are rendered first, then the realm actor is asked.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { TOPICS_POLICIES, normalizeDescription, parseRetentionDays } from '../lib/channel-rules.js';
import { MAX_CHANNEL_DESCRIPTION_LENGTH, MAX_CHANNEL_FOLDER_NAME_LENGTH } from '../lib/limits.js';
import {
  CHANNEL_GROUP_SETTING_NAMES,
  type ChannelGroupSettingName,
} from '../lib/group-settings.js';
import {
  bool,
  groupSettingChange,
  int,
  intValue,
  json,
  jsonOrString,
  oneOf,
  ownNulRule,
  pathInt,
  str,
} from '../lib/params.js';
import { renderDescription } from '../queries/render-context.js';
import type { GroupSettingChange } from '../mutations/channels.js';

const updateSettings = Object.fromEntries(
  CHANNEL_GROUP_SETTING_NAMES.map((n) => [n, groupSettingChange().optional()]),
) as Record<ChannelGroupSettingName, z.ZodOptional<ReturnType<typeof groupSettingChange>>>;

/** PATCH /api/v1/streams/{stream_id} */
export const updateStream = endpoint({
  method: 'PATCH',
  path: '/api/v1/streams/:stream_id',
  params: z.object({
    stream_id: pathInt(),
    description: str({ max: MAX_CHANNEL_DESCRIPTION_LENGTH }).optional(),
    new_name: ownNulRule(str()).optional(), // checkChannelName
    is_private: bool().optional(),
    is_web_public: bool().optional(),
    history_public_to_subscribers: bool().optional(),
    is_default_stream: bool().optional(),
    message_retention_days: jsonOrString(z.union([z.string(), intValue()])).optional(),
    is_archived: bool().optional(),
    folder_id: json(
      z.union([intValue(), z.null()], { error: '{var} is not an integer' }),
    ).optional(),
    topics_policy: jsonOrString(oneOf(TOPICS_POLICIES)).optional(),
    ...updateSettings,
  }),
  handle: ({ server, realm, user }, p) => {
    const settings: Partial<Record<ChannelGroupSettingName, GroupSettingChange>> = {};
    for (const n of CHANNEL_GROUP_SETTING_NAMES) {
      const c = p[n];
      if (c !== undefined)
        settings[n] = c.old === undefined ? { new: c.new } : { new: c.new, old: c.old };
    }
    let description: { text: string; rendered: string } | undefined;
    if (p.description !== undefined) {
      const text = normalizeDescription(p.description);
      description = {
        text,
        rendered: renderDescription(server.config, server.store, realm.view, text, user.id),
      };
    }
    return realm.ask('channel.update', {
      acting_user_id: user.id,
      stream_id: p.stream_id,
      ...(description ? { description } : {}),
      ...(p.new_name !== undefined ? { new_name: p.new_name } : {}),
      ...(p.is_private !== undefined ? { is_private: p.is_private } : {}),
      ...(p.is_web_public !== undefined ? { is_web_public: p.is_web_public } : {}),
      ...(p.history_public_to_subscribers !== undefined
        ? { history_public_to_subscribers: p.history_public_to_subscribers }
        : {}),
      ...(p.is_default_stream !== undefined ? { is_default_stream: p.is_default_stream } : {}),
      ...(p.message_retention_days !== undefined
        ? { message_retention_days: parseRetentionDays(p.message_retention_days) }
        : {}),
      ...(p.is_archived !== undefined ? { is_archived: p.is_archived } : {}),
      ...(p.folder_id !== undefined ? { folder_id: p.folder_id } : {}),
      ...(p.topics_policy !== undefined ? { topics_policy: p.topics_policy } : {}),
      settings,
    });
  },
});

/** DELETE /api/v1/streams/{stream_id} — archive. */
export const archiveStream = endpoint({
  method: 'DELETE',
  path: '/api/v1/streams/:stream_id',
  params: z.object({ stream_id: pathInt() }),
  handle: ({ realm, user }, p) =>
    realm.ask('channel.archive', { acting_user_id: user.id, stream_id: p.stream_id }),
});

/** POST /api/v1/default_streams */
export const addDefaultStream = endpoint({
  method: 'POST',
  path: '/api/v1/default_streams',
  params: z.object({ stream_id: int() }),
  handle: ({ realm, user }, p) =>
    realm.ask('channel.default', { acting_user_id: user.id, stream_id: p.stream_id, add: true }),
});

/** DELETE /api/v1/default_streams */
export const removeDefaultStream = endpoint({
  method: 'DELETE',
  path: '/api/v1/default_streams',
  params: z.object({ stream_id: int() }),
  handle: ({ realm, user }, p) =>
    realm.ask('channel.default', { acting_user_id: user.id, stream_id: p.stream_id, add: false }),
});

/** POST /api/v1/channel_folders/create (administrators) */
export const createChannelFolder = endpoint({
  method: 'POST',
  path: '/api/v1/channel_folders/create',
  params: z.object({
    name: str({ max: MAX_CHANNEL_FOLDER_NAME_LENGTH }),
    description: str({ max: MAX_CHANNEL_DESCRIPTION_LENGTH }).default(''),
  }),
  handle: ({ server, realm, user }, p) => {
    const description = normalizeDescription(p.description);
    return realm.ask('channel_folder.create', {
      acting_user_id: user.id,
      name: p.name,
      description,
      rendered_description: renderDescription(
        server.config,
        server.store,
        realm.view,
        description,
        user.id,
      ),
    });
  },
});
