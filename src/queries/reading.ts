/**
 * Reads about who read what: read receipts, and whether a user has messages in a topic. Reference:
 * views/read_receipts.py, views/message_flags.py (mark_topic_as_read).
 */
import type { MessageRow } from '../storage/messages.js';
import type { ReadStore } from '../storage/store.js';
import type { RealmView } from './realm-view.js';

/** Whether the user received any message of the topic (mark_topic_as_read's "No such topic"). */
export function userHasMessageInTopic(
  store: ReadStore,
  userId: number,
  streamId: number,
  topic: string,
): boolean {
  return store.reading.userHasMessageInTopic(userId, streamId, topic);
}

/**
 * Who read a message, as `viewerId` may learn it. Left out: the sender; users who keep their
 * reading private; deactivated users; users the viewer muted and users who muted the viewer (who
 * would otherwise learn of it from the muter reading everything they send at once).
 */
export function readReceipts(
  store: ReadStore,
  view: RealmView,
  viewerId: number,
  row: MessageRow,
): number[] {
  const hidden = new Set([
    row.sender_id,
    ...store.mutedUsers.mutedIdsOf(viewerId),
    ...store.mutedUsers.mutersOf(viewerId),
  ]);
  return store.reading.readers(row.id).filter((id) => {
    if (hidden.has(id)) return false;
    const u = view.user(id);
    return u !== undefined && u.is_active === 1 && view.userSettings(id).send_read_receipts;
  });
}
