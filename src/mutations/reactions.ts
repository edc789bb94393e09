/**
 * Emoji reactions. Reference: actions/reactions.py (check_add_reaction, do_remove_reaction),
 * views/reactions.py, lib/emoji.py (get_emoji_data, check_emoji_request).
 *
 * An emoji is (reaction_type, emoji_code): a Unicode emoji's code is its dash-separated hex
 * codepoints, a custom emoji's its id, the one extra emoji's its name (`zulip`). Reacting with an
 * emoji someone already used on the message is a vote for that reaction: it takes that
 * reaction's name, whatever name was sent.
 */
import { emojiCodeForName, emojiNameForCode } from '../lib/emoji/index.js';
import { JsonableError } from '../lib/errors.js';
import { HISTORICAL_FLAGS } from '../lib/message-flags.js';
import { accessMessage, messageEventAudience } from '../queries/messages.js';
import type { MessageRow } from '../storage/messages.js';
import type { ReactionRow } from '../storage/reactions.js';
import type { MutationContext } from './context.js';
import { followOnParticipation } from './auto-follow.js';

/** The name and type of the extra emoji this server ships besides Unicode ones. */
export const EXTRA_EMOJI_NAME = 'zulip';
export const REACTION_TYPES = ['unicode_emoji', 'realm_emoji', 'service_extra_emoji'] as const;

type EmojiData = { emoji_code: string; reaction_type: string };

/** The emoji a name means now in this realm: an active custom emoji first, then built-in ones. */
export function emojiDataFor(
  ctx: Pick<MutationContext, 'store' | 'realm'>,
  name: string,
): EmojiData {
  const custom = ctx.store.realmEmoji.activeByName(ctx.realm.id, name);
  if (custom) return { emoji_code: String(custom.id), reaction_type: 'realm_emoji' };
  if (name === EXTRA_EMOJI_NAME) return { emoji_code: name, reaction_type: 'service_extra_emoji' };
  const code = emojiCodeForName(name);
  if (code !== undefined) return { emoji_code: code, reaction_type: 'unicode_emoji' };
  throw new JsonableError(`Emoji '${name}' does not exist`);
}

/** Whether (name, code, type) names a valid emoji for a new reaction in this realm. */
export function checkEmojiRequest(
  ctx: Pick<MutationContext, 'store' | 'realm'>,
  name: string,
  code: string,
  type: string,
): void {
  if (type === 'realm_emoji') {
    const row = ctx.store.realmEmoji.byRealm(ctx.realm.id).find((r) => String(r.id) === code);
    if (!row) throw new JsonableError('Invalid custom emoji.');
    if (row.name !== name) throw new JsonableError('Invalid custom emoji name.');
    if (row.deactivated) throw new JsonableError('This custom emoji has been deactivated.');
  } else if (type === 'service_extra_emoji') {
    if (code !== EXTRA_EMOJI_NAME) throw new JsonableError('Invalid emoji code.');
    if (name !== code) throw new JsonableError('Invalid emoji name.');
  } else if (type === 'unicode_emoji') {
    if (emojiNameForCode(code) === undefined) throw new JsonableError('Invalid emoji code.');
    if (emojiCodeForName(name) !== code) throw new JsonableError('Invalid emoji name.');
  } else {
    throw new JsonableError('Invalid emoji type.');
  }
}

function emitReaction(
  ctx: MutationContext,
  op: 'add' | 'remove',
  r: ReactionRow,
  audience: readonly number[],
): void {
  const u = ctx.realm.user(r.user_id)!;
  ctx.emit(
    {
      type: 'reaction',
      op,
      user_id: r.user_id,
      user: { user_id: u.id, email: u.email, full_name: u.full_name },
      message_id: r.message_id,
      emoji_name: r.emoji_name,
      emoji_code: r.emoji_code,
      reaction_type: r.reaction_type,
    },
    audience,
  );
}

export type AddReactionCommand = {
  user_id: number;
  message_id: number;
  emoji_name: string;
  emoji_code?: string | undefined;
  reaction_type?: string | undefined;
};

/** A checked reaction: the message, the reaction row, and whether the user needs the message in their history first. */
export type ReactionPlan = { message: MessageRow; reaction: ReactionRow; historical: boolean };

export function checkAddReaction(ctx: MutationContext, cmd: AddReactionCommand): ReactionPlan {
  const { store, realm: view } = ctx;
  const { row, flags } = accessMessage(store, view, cmd.user_id, cmd.message_id, true);
  let code = cmd.emoji_code;
  let type = cmd.reaction_type;
  if (code === undefined || type === undefined) {
    const data = emojiDataFor(ctx, cmd.emoji_name);
    code ??= data.emoji_code;
    type ??= data.reaction_type;
  }
  if (store.reactions.find(row.id, cmd.user_id, type, code)) {
    throw new JsonableError('Reaction already exists.', { code: 'REACTION_ALREADY_EXISTS' });
  }
  let name = cmd.emoji_name;
  const existing = store.reactions.firstForEmoji(row.id, type, code);
  if (existing) {
    // A vote for a reaction already shown: no validation (its emoji may have been deactivated
    // since), and the name of that reaction.
    name = existing.emoji_name;
  } else {
    checkEmojiRequest(ctx, name, code, type);
  }
  const reaction: ReactionRow = {
    message_id: row.id,
    user_id: cmd.user_id,
    emoji_name: name,
    emoji_code: code,
    reaction_type: type,
  };
  // A channel message the user never received becomes part of their history.
  return { message: row, reaction, historical: flags === undefined };
}

export function doAddReaction(ctx: MutationContext, plan: ReactionPlan): void {
  const { store, realm: view } = ctx;
  const { message, reaction } = plan;
  if (plan.historical)
    store.messages.insertUserMessage(reaction.user_id, message.id, HISTORICAL_FLAGS);
  store.reactions.add(reaction);
  followOnParticipation(ctx, reaction.user_id, message);
  emitReaction(ctx, 'add', reaction, messageEventAudience(store, view, message));
}

export type RemoveReactionCommand = {
  user_id: number;
  message_id: number;
  emoji_name?: string | undefined;
  emoji_code?: string | undefined;
  reaction_type: string;
};

/** The message and the (existing) reaction to remove from it. */
export type ReactionRemoval = { message: MessageRow; reaction: ReactionRow };

export function checkRemoveReaction(
  ctx: MutationContext,
  cmd: RemoveReactionCommand,
): ReactionRemoval {
  const { store, realm: view } = ctx;
  const { row } = accessMessage(store, view, cmd.user_id, cmd.message_id, true);
  let code = cmd.emoji_code;
  if (code === undefined) {
    if (cmd.emoji_name === undefined) {
      throw new JsonableError(
        'At least one of the following arguments must be present: emoji_name, emoji_code',
      );
    }
    code = emojiDataFor(ctx, cmd.emoji_name).emoji_code;
  }
  // No emoji validation: the row exists, so the emoji was valid when the reaction was added.
  const existing = store.reactions.find(row.id, cmd.user_id, cmd.reaction_type, code);
  if (!existing) {
    throw new JsonableError("Reaction doesn't exist.", { code: 'REACTION_DOES_NOT_EXIST' });
  }
  return { message: row, reaction: existing };
}

export function doRemoveReaction(ctx: MutationContext, plan: ReactionRemoval): void {
  const { store, realm: view } = ctx;
  const { message, reaction: r } = plan;
  store.reactions.remove(message.id, r.user_id, r.reaction_type, r.emoji_code);
  emitReaction(ctx, 'remove', r, messageEventAudience(store, view, message));
}
