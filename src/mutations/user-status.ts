/**
 * User status: a short text and an emoji shown next to a user's name. Reference:
 * views/user_status.py (update_user_status_backend), actions/user_status.py
 * (do_update_user_status), lib/user_status.py (format_user_status, get_all_users_status_dict).
 *
 * Only what the request names changes. `away` is the deprecated face of the `presence_enabled`
 * setting (away = not presence_enabled): it changes that setting, with its own events.
 */
import type { WireEvent } from '../lib/events.js';
import type { UserStatusRow } from '../storage/user-status.js';
import type { MutationContext } from './context.js';
import { checkEmojiRequest, emojiDataFor } from './reactions.js';
import { checkChangeSettings, doChangeSettings } from './user-settings.js';

export type UpdateUserStatusCommand = {
  user_id: number;
  away?: boolean | undefined;
  status_text?: string | undefined;
  emoji_name?: string | undefined;
  emoji_code?: string | undefined;
  reaction_type?: string | undefined;
};

export function doUpdateUserStatus(
  ctx: MutationContext,
  cmd: UpdateUserStatusCommand,
): Record<string, never> {
  const { store, realm } = ctx;
  let emojiCode = cmd.emoji_code;
  let reactionType = cmd.reaction_type;
  if (cmd.emoji_name === '') {
    // Clearing the emoji clears its code and type too.
    emojiCode = '';
    reactionType = 'unicode_emoji';
  } else if (cmd.emoji_name !== undefined) {
    if (emojiCode === undefined || reactionType === undefined) {
      const data = emojiDataFor(ctx, cmd.emoji_name);
      emojiCode ??= data.emoji_code;
      reactionType ??= data.reaction_type;
    }
    checkEmojiRequest(ctx, cmd.emoji_name, emojiCode, reactionType);
  }

  if (cmd.away !== undefined) {
    const change = checkChangeSettings(ctx, {
      user_id: cmd.user_id,
      settings: { presence_enabled: !cmd.away },
      fake_email_domain: '',
    });
    doChangeSettings(ctx, change);
  }

  if (cmd.status_text !== undefined || cmd.emoji_name !== undefined) {
    const prev: UserStatusRow = store.userStatus.byUser(cmd.user_id) ?? {
      user_id: cmd.user_id,
      status_text: '',
      emoji_name: '',
      emoji_code: '',
      reaction_type: 'unicode_emoji',
    };
    const next: UserStatusRow = { ...prev };
    if (cmd.status_text !== undefined) next.status_text = cmd.status_text;
    if (cmd.emoji_name !== undefined) {
      next.emoji_name = cmd.emoji_name;
      next.emoji_code = emojiCode!;
      next.reaction_type = reactionType!;
    }
    store.userStatus.put(realm.id, next, ctx.now);
  }

  const event: WireEvent = { type: 'user_status', user_id: cmd.user_id };
  if (cmd.away !== undefined) event.away = cmd.away;
  if (cmd.status_text !== undefined) event.status_text = cmd.status_text;
  if (cmd.emoji_name !== undefined) {
    event.emoji_name = cmd.emoji_name;
    event.emoji_code = emojiCode;
    event.reaction_type = reactionType;
  }
  ctx.emit(
    event,
    realm.activeUsers().map((u) => u.id),
  );
  return {};
}
