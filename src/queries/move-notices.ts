/**
 * Which notices an edit of a message may send, and what they name, as the realm is now: what the
 * edit endpoint renders before asking the realm actor (src/lib/notices.ts). The edit decides again
 * inside the transaction and refuses notices prepared for facts that changed in between.
 */
import { JsonableError } from '../lib/errors.js';
import { topicResolution } from '../lib/message-edit.js';
import { noticeKindsFor, type MoveFacts, type MoveNoticeKind } from '../lib/notices.js';
import type { ReadStore } from '../storage/store.js';
import { accessMessage } from './messages.js';
import type { RealmView } from './realm-view.js';

export type MoveNoticeRequest = {
  message_id: number;
  /** The new topic, normalized; and before truncation. */
  topic: string | undefined;
  topic_untruncated: string | undefined;
  stream_id: number | undefined;
  content_edited: boolean;
  send_notification_to_new_thread: boolean;
  send_notification_to_old_thread: boolean;
};

/**
 * The notice kinds the edit may send and the facts they name; null when it sends none (or will be
 * refused: an edit of a message the user may not see, to a channel that does not exist).
 */
export function moveNoticesFor(
  store: ReadStore,
  view: RealmView,
  userId: number,
  req: MoveNoticeRequest,
): { kinds: MoveNoticeKind[]; facts: MoveFacts } | null {
  if (req.topic === undefined && req.stream_id === undefined) return null;
  let row;
  try {
    row = accessMessage(store, view, userId, req.message_id, true).row;
  } catch (err) {
    if (err instanceof JsonableError) return null;
    throw err;
  }
  const user = view.user(userId);
  if (row.stream_id === null || !user) return null;
  const orig = view.channels.byId(row.stream_id);
  const topic = req.topic !== undefined && req.topic !== row.topic ? req.topic : undefined;
  const streamId =
    req.stream_id !== undefined && req.stream_id !== row.stream_id ? req.stream_id : undefined;
  const target = streamId !== undefined ? view.channels.byId(streamId) : orig;
  if (!orig || !target) return null;
  const { resolved, unresolved } =
    topic !== undefined
      ? topicResolution(row.topic, topic, req.topic_untruncated ?? topic)
      : { resolved: false, unresolved: false };
  const kinds = noticeKindsFor({
    topicEdited: topic !== undefined,
    streamEdited: streamId !== undefined,
    contentEdited: req.content_edited,
    resolved,
    unresolved,
    toNewThread: req.send_notification_to_new_thread,
    toOldThread: req.send_notification_to_old_thread,
  });
  if (kinds.length === 0) return null;
  return {
    kinds,
    facts: {
      user: { id: user.id, full_name: user.full_name },
      message_id: row.id,
      orig: { stream_id: orig.id, stream_name: orig.name, topic: row.topic },
      target: { stream_id: target.id, stream_name: target.name, topic: topic ?? row.topic },
    },
  };
}
