/**
 * Bot rules the bot, user and user-administration mutations share (kept apart so that none of
 * them imports another for these). Reference: lib/users.py (check_can_create_bot,
 * check_valid_bot_type, check_bot_name_available), actions/users.py (do_deactivate_user's
 * realm_bot event), actions/create_user.py (do_reactivate_user's).
 */
import { JsonableError, InsufficientPermissionError } from '../lib/errors.js';
import { BotType } from '../lib/roles.js';
import { botOwnerUserIds, isSystemBot } from '../queries/bots.js';
import type { UserRow } from '../storage/users.js';
import type { MutationContext } from './context.js';

/** check_can_create_bot and check_valid_bot_type, in the reference's order. */
export function checkCanCreateBot(ctx: MutationContext, actor: UserRow, botType: number): void {
  const realm = ctx.realm;
  const mayAll = realm.hasRealmPermission(actor.id, 'can_create_bots_group');
  const mayWriteOnly =
    botType === BotType.INCOMING_WEBHOOK &&
    realm.hasRealmPermission(actor.id, 'can_create_write_only_bots_group');
  if (!mayAll && !mayWriteOnly) throw new InsufficientPermissionError();
  if (botType === BotType.DEFAULT && !mayAll) throw new JsonableError('Invalid bot type');
  if (
    botType !== BotType.DEFAULT &&
    botType !== BotType.INCOMING_WEBHOOK &&
    botType !== BotType.OUTGOING_WEBHOOK
  )
    throw new JsonableError('Invalid bot type');
}

/** check_bot_name_available: no active account has that name. */
export function checkBotNameAvailable(
  ctx: MutationContext,
  name: string,
  exceptId: number | null,
  activation: boolean,
): void {
  const wanted = name.trim();
  const taken = ctx.realm.activeUsers().some((u) => u.id !== exceptId && u.full_name === wanted);
  if (!taken) return;
  if (activation)
    throw new JsonableError(
      `There is already an active bot named "${name}" in this organization. To reactivate this bot, you must rename or deactivate the other one first.`,
    );
  throw new JsonableError('Name is already in use.');
}

/** The events a bot's (de)activation sends its administrators (feature level 222). */
export function emitBotActive(ctx: MutationContext, bot: UserRow, active: boolean): void {
  if (!bot.is_bot || isSystemBot(bot)) return;
  ctx.emit(
    { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, is_active: active } },
    botOwnerUserIds(ctx.realm, ctx.store, bot),
  );
}

/** Reactivating a bot: as creating one, its creation policy and a free name. */
export function checkReactivateBot(ctx: MutationContext, actor: UserRow, bot: UserRow): void {
  checkCanCreateBot(ctx, actor, bot.bot_type ?? BotType.DEFAULT);
  checkBotNameAvailable(ctx, bot.full_name, bot.id, true);
}
