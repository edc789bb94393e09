/**
 * Personal message flags (read, starred, collapsed). Reference: actions/message_flags.py
 * do_update_message_flags.
 *
 * Only real changes count: a message that already has the flag (or lacks it, when removing) is
 * left alone and not counted. A channel message the user can read but never received has no
 * user_messages row; it behaves as read and "historical", and changing another flag on it
 * creates the row. Unread messages must stay in channels the user is subscribed to, so marking
 * messages of other channels unread is skipped (and reported).
 */
import { InvalidMessagesError } from '../lib/errors.js';
import { HISTORICAL_FLAGS, MESSAGE_FLAG_BITS } from '../lib/message-flags.js';
import { hasMessageAccess } from '../queries/messages.js';
import { unreadMessageDetails } from '../queries/unread.js';
import type { MutationContext } from './context.js';

export type UpdateFlagsCommand = {
  user_id: number;
  op: 'add' | 'remove';
  /** The flag's name and bit (checked by the caller: an editable flag). */
  flag: string;
  bit: number;
  messages: readonly number[];
};

export type UpdateFlagsResult = {
  /** How many messages changed. */
  count: number;
  /** Channels whose messages were not marked unread (op remove, flag read). */
  ignored_because_not_subscribed_channels: number[];
};

/** What changes: messages with a row, historical messages that get one, skipped channels. */
export type FlagsPlan = {
  cmd: UpdateFlagsCommand;
  /** Every message whose flag changes, in the order asked. */
  changing: number[];
  /** The historical ones among them (no row yet; readable by the user). */
  historical: number[];
  /** Those with a row. */
  withRows: number[];
  ignored: Set<number>;
};

/** The messages that change; refuses historical messages the user cannot read. */
export function checkUpdateMessageFlags(ctx: MutationContext, cmd: UpdateFlagsCommand): FlagsPlan {
  const { store, realm: view } = ctx;
  const adding = cmd.op === 'add';
  const target = adding ? cmd.bit : 0;
  let ids = [...new Set(cmd.messages)];
  const ignored = new Set<number>();
  if (cmd.bit === MESSAGE_FLAG_BITS.read && !adding) {
    const rows = store.messages.byIds(ids);
    const skip = new Set<number>();
    for (const r of rows) {
      if (r.stream_id !== null && !view.channels.isSubscribed(cmd.user_id, r.stream_id)) {
        skip.add(r.id);
        ignored.add(r.stream_id);
      }
    }
    ids = ids.filter((id) => !skip.has(id));
  }
  const existing = store.messages.userFlagsIn(cmd.user_id, ids);
  const changing = ids.filter(
    (id) => ((existing.get(id) ?? HISTORICAL_FLAGS) & cmd.bit) !== target,
  );
  let historical: number[] = [];
  if ((HISTORICAL_FLAGS & cmd.bit) !== target) {
    // Messages without a row whose flag must change: the user must be able to read them.
    historical = changing.filter((id) => !existing.has(id));
    if (historical.length > 0) {
      const rows = store.messages.byIds(historical);
      const readable = rows.filter((r) =>
        hasMessageAccess(view, cmd.user_id, r, () => false, false),
      );
      if (readable.length !== historical.length) throw new InvalidMessagesError();
    }
  }
  const withRows = changing.filter((id) => existing.has(id));
  return { cmd, changing, historical, withRows, ignored };
}

export function doUpdateMessageFlags(ctx: MutationContext, plan: FlagsPlan): UpdateFlagsResult {
  const { store, realm: view } = ctx;
  const { cmd, changing, historical, withRows, ignored } = plan;
  const adding = cmd.op === 'add';
  if (historical.length > 0) {
    const flags = adding ? HISTORICAL_FLAGS | cmd.bit : HISTORICAL_FLAGS & ~cmd.bit;
    for (const id of historical) store.messages.insertUserMessage(cmd.user_id, id, flags);
  }
  if (withRows.length > 0) {
    if (adding) store.messages.setFlag(cmd.user_id, withRows, cmd.bit);
    else store.messages.clearFlag(cmd.user_id, withRows, cmd.bit);
  }

  const event: Record<string, unknown> = {
    type: 'update_message_flags',
    op: cmd.op,
    operation: cmd.op,
    flag: cmd.flag,
    messages: changing,
    all: false,
  };
  if (cmd.bit === MESSAGE_FLAG_BITS.read && !adding) {
    event.message_details = unreadMessageDetails(store, view, cmd.user_id, changing);
  }
  ctx.emit({ type: 'update_message_flags', ...event }, [cmd.user_id]);
  return {
    count: changing.length,
    ignored_because_not_subscribed_channels: [...ignored].sort((a, b) => a - b),
  };
}
