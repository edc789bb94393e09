/**
 * Archiving a channel (DELETE /streams/{stream_id}), the realm's default channels, and channel
 * folders. Reference: views/streams.py (deactivate_stream_backend), actions/streams.py,
 * actions/channel_folders.py.
 */
import { isAdmin } from '../lib/channel-permissions.js';
import {
  InvalidChannelIdError,
  JsonableError,
  OrganizationAdministratorRequiredError,
} from '../lib/errors.js';
import { streamDeleteEvent, streamUpdateEvent } from './channel-events.js';
import type { Channel } from '../queries/channels-view.js';
import { actingUser, type MutationContext } from './context.js';
import { accessChannelForAdministration, emitDefaultStreams } from './channel-access.js';

// ---- DELETE /streams/{stream_id} ------------------------------------------------------------

export type ArchiveChannelCommand = { acting_user_id: number; stream_id: number };

/**
 * Archiving keeps the channel, its messages and subscriptions; it leaves the default channels.
 * Clients that know archived channels get `stream update is_archived`; the others get
 * `stream delete` marked `for_archiving` (the event queues pick one by client capability).
 */
export function checkArchiveChannel(ctx: MutationContext, cmd: ArchiveChannelCommand): Channel {
  const { realm } = ctx;
  actingUser(realm, cmd.acting_user_id);
  const ch = accessChannelForAdministration(realm, cmd.acting_user_id, cmd.stream_id);
  if (ch.deactivated) throw new JsonableError('Channel is already deactivated');
  return ch;
}

export function doArchiveChannel(ctx: MutationContext, ch: Channel): Record<string, never> {
  const { realm, store } = ctx;
  const audience = realm.channels.metadataAudience(ch);
  store.channels.update(ch.id, 'deactivated', 1);
  ctx.emit(streamDeleteEvent([ch.id], true), audience);
  ctx.emit(streamUpdateEvent(ch, 'is_archived', true), audience);
  if (realm.channels.isDefault(ch.id)) {
    store.channels.removeDefaultStream(realm.id, ch.id);
    emitDefaultStreams(ctx);
  }
  ctx.afterCommit(() => realm.channels.reloadChannel(ch.id));
  return {};
}

// ---- default channels -----------------------------------------------------------------------

export type DefaultStreamCommand = { acting_user_id: number; stream_id: number; add: boolean };

/** The default-channel change to make, or null when the channel already is (or is not) one. */
export type DefaultStreamChange = { stream_id: number; add: boolean } | null;

export function checkChangeDefaultStream(
  ctx: MutationContext,
  cmd: DefaultStreamCommand,
): DefaultStreamChange {
  const { realm } = ctx;
  const user = actingUser(realm, cmd.acting_user_id);
  if (!isAdmin(user)) throw new OrganizationAdministratorRequiredError();
  const ch = realm.channels.byId(cmd.stream_id);
  const visible =
    ch &&
    (cmd.add
      ? realm.channels.may(user.id, ch, 'content')
      : realm.channels.may(user.id, ch, 'metadata'));
  if (!ch || !visible || (cmd.add && ch.deactivated)) throw new InvalidChannelIdError();
  if (cmd.add) {
    if (ch.invite_only) throw new JsonableError('Private channels cannot be made default.');
    if (realm.channels.isDefault(ch.id)) return null;
  } else {
    if (!realm.channels.isDefault(ch.id)) return null;
  }
  return { stream_id: ch.id, add: cmd.add };
}

export function doChangeDefaultStream(
  ctx: MutationContext,
  change: DefaultStreamChange,
): Record<string, never> {
  const { realm, store } = ctx;
  if (change === null) return {};
  if (change.add) store.channels.addDefaultStream(realm.id, change.stream_id);
  else store.channels.removeDefaultStream(realm.id, change.stream_id);
  emitDefaultStreams(ctx);
  return {};
}

// ---- channel folders ------------------------------------------------------------------------

export type CreateFolderCommand = {
  acting_user_id: number;
  name: string;
  description: string;
  rendered_description: string;
};

/** A checked new channel folder. */
export type NewChannelFolder = {
  name: string;
  description: string;
  rendered_description: string;
  creator_id: number;
};

export function checkCreateChannelFolder(
  ctx: MutationContext,
  cmd: CreateFolderCommand,
): NewChannelFolder {
  const { realm } = ctx;
  const user = actingUser(realm, cmd.acting_user_id);
  if (!isAdmin(user)) throw new OrganizationAdministratorRequiredError();
  const name = cmd.name.trim();
  if (name === '') throw new JsonableError("Channel folder name can't be empty.");
  if (realm.channels.allFolders().some((f) => f.name.toLowerCase() === name.toLowerCase()))
    throw new JsonableError(`Channel folder '${name}' already exists`);
  return {
    name,
    description: cmd.description,
    rendered_description: cmd.rendered_description,
    creator_id: user.id,
  };
}

export function doCreateChannelFolder(
  ctx: MutationContext,
  folder: NewChannelFolder,
): { channel_folder_id: number } {
  const { realm, store } = ctx;
  const { name } = folder;
  const id = store.channels.insertFolder({ realm_id: realm.id, ...folder, date_created: ctx.now });
  ctx.emit(
    {
      type: 'channel_folder',
      op: 'add',
      channel_folder: {
        id,
        name,
        description: folder.description,
        rendered_description: folder.rendered_description,
        creator_id: folder.creator_id,
        date_created: ctx.now,
        is_archived: false,
      },
    },
    realm.activeUsers().map((u) => u.id),
  );
  ctx.afterCommit(() => realm.channels.reloadFolders());
  return { channel_folder_id: id };
}
