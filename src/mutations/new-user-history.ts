/**
 * A new account's first view is not empty: the reference's add_new_user_history
 * (actions/create_user.py), run by doCreateUser (./users.ts) for every human account it creates
 * (POST /users, an accepted invitation, the admin tool's create-user), in the same transaction as
 * the account and its subscriptions. Bots are created elsewhere and get nothing.
 *
 * As the reference: of the channels the account was subscribed to at creation, those whose history
 * it may read (src/lib/channel-permissions.ts hasHistoryAccess: a private channel with protected
 * history is left out), the newest MAX_NUM_ONBOARDING_MESSAGES messages sent in the last
 * ONBOARDING_RECENT_SECONDS get a user_messages row, flagged `historical`; the newest
 * MAX_NUM_ONBOARDING_UNREAD_MESSAGES of them stay unread, the others are also `read`. Older
 * messages get no row (they stay readable in their channel, as history). Direct messages are never
 * copied. The reference's race (a message arriving between the subscription and the copy) cannot
 * happen inside one realm-actor transaction; a message the account already has a row for is still
 * skipped, as there.
 *
 * One INSERT ... SELECT (store.messages.insertHistory) that reads each channel's newest
 * MAX_NUM_ONBOARDING_MESSAGES through its index, however long the channel. So where message dates
 * are out of id order (an imported realm), a recent message behind a channel's newest 1000 is not
 * looked at, where the reference would take it: the price of a bounded read.
 *
 * No event: nobody has a queue of the new account yet; its first register reads the rows.
 */
import { hasHistoryAccess } from '../lib/channel-permissions.js';
import { MESSAGE_FLAG_BITS } from '../lib/message-flags.js';
import type { Channel } from '../queries/channels-view.js';
import type { MutationContext } from './context.js';

export const MAX_NUM_ONBOARDING_MESSAGES = 1000;
export const MAX_NUM_ONBOARDING_UNREAD_MESSAGES = 20;
/** 12 weeks: years-old messages would look like a bug, and are not recent conversation. */
export const ONBOARDING_RECENT_SECONDS = 12 * 7 * 86400;

/**
 * Gives the new account `user` (subscribed to `channels` in this transaction, not yet in the read
 * model) its onboarding history; returns how many messages it got.
 */
export function addNewUserHistory(
  ctx: MutationContext,
  user: { id: number; role: number },
  channels: readonly Channel[],
): number {
  const view = ctx.realm.channels;
  const readable = channels.filter((ch) =>
    hasHistoryAccess({
      ...view.facts(user.id, ch, { subscribed: true }),
      // The read model learns of the account after COMMIT.
      user: { role: user.role, is_active: true },
    }),
  );
  return ctx.store.messages.insertHistory({
    userId: user.id,
    channelIds: readable.map((ch) => ch.id),
    since: ctx.now - ONBOARDING_RECENT_SECONDS,
    limit: MAX_NUM_ONBOARDING_MESSAGES,
    unread: MAX_NUM_ONBOARDING_UNREAD_MESSAGES,
    unreadFlags: MESSAGE_FLAG_BITS.historical,
    readFlags: MESSAGE_FLAG_BITS.historical | MESSAGE_FLAG_BITS.read,
  });
}
