/**
 * Custom emoji: adding (the image is already stored by the endpoint under a fresh name) and
 * deactivating. Reference: views/realm_emoji.py, actions/realm_emoji.py, lib/emoji.py
 * check_remove_custom_emoji. Every change sends the whole set to everyone (`realm_emoji`).
 */
import { emojiCodeForName } from '../lib/emoji/index.js';
import { GuestNotAllowedError, JsonableError } from '../lib/errors.js';
import { Role } from '../lib/roles.js';
import { noteRealmEmojiChanged, realmEmojiDict } from '../queries/realm-emoji.js';
import type { RealmEmojiRow } from '../storage/realm-emoji.js';
import type { MutationContext } from './context.js';

function emitRealmEmoji(ctx: MutationContext): void {
  const { store, realm } = ctx;
  ctx.emit(
    {
      type: 'realm_emoji',
      op: 'update',
      realm_emoji: realmEmojiDict(store.realmEmoji.byRealm(realm.id)),
    },
    realm.activeUsers().map((u) => u.id),
  );
  ctx.afterCommit(() => noteRealmEmojiChanged(realm));
}

function isAdmin(role: number): boolean {
  return role <= Role.ADMINISTRATOR;
}

export type AddRealmEmojiCommand = {
  user_id: number;
  /** Validated name (lowercase letters, digits, `-`, `_`). */
  name: string;
  /** The stored image's file name (under DATA_DIR/emoji/<realm id>/). */
  file_name: string;
  is_animated: boolean;
};

export function checkAddRealmEmoji(
  ctx: MutationContext,
  cmd: AddRealmEmojiCommand,
): AddRealmEmojiCommand {
  const { store, realm } = ctx;
  const user = realm.user(cmd.user_id)!;
  if (user.role === Role.GUEST) throw new GuestNotAllowedError();
  if (!realm.hasRealmPermission(user.id, 'can_add_custom_emoji_group')) {
    throw new JsonableError('Insufficient permission');
  }
  if (store.realmEmoji.activeByName(realm.id, cmd.name)) {
    throw new JsonableError('A custom emoji with this name already exists.');
  }
  if (emojiCodeForName(cmd.name) !== undefined && !isAdmin(user.role)) {
    throw new JsonableError('Only administrators can override built-in emoji.');
  }
  return cmd;
}

/** Stores the (checked) emoji; everyone learns the realm's new emoji set. */
export function doAddRealmEmoji(ctx: MutationContext, cmd: AddRealmEmojiCommand): { id: number } {
  const { store, realm } = ctx;
  const id = store.realmEmoji.insert(realm.id, cmd.name, cmd.user_id, cmd.is_animated);
  store.realmEmoji.setFileName(id, cmd.file_name);
  emitRealmEmoji(ctx);
  return { id };
}

export type RemoveRealmEmojiCommand = { user_id: number; name: string };

/** Deactivates an emoji: its author or an administrator. The image stays for old messages. */
export function checkRemoveRealmEmoji(
  ctx: MutationContext,
  cmd: RemoveRealmEmojiCommand,
): RealmEmojiRow {
  const { store, realm } = ctx;
  const row = store.realmEmoji.activeByName(realm.id, cmd.name);
  if (!row) {
    // 404 since feature level 190, with the code BAD_REQUEST the reference keeps.
    throw new JsonableError(`Emoji '${cmd.name}' does not exist`, { status: 404 });
  }
  const user = realm.user(cmd.user_id)!;
  if (!isAdmin(user.role) && row.author_id !== user.id) {
    throw new JsonableError('Must be an organization administrator or emoji author');
  }
  return row;
}

/** Deactivates the (checked) emoji; everyone learns the realm's new emoji set. */
export function doRemoveRealmEmoji(ctx: MutationContext, row: RealmEmojiRow): void {
  ctx.store.realmEmoji.deactivate(row.id);
  emitRealmEmoji(ctx);
}
