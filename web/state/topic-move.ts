/**
 * What a topic's Move dialog and its Mark as resolved (or unresolved) send, and its link (web/app/move-topic.tsx,
 * loaded with the dialogs: none of this is in the first load).
 *
 * Resolving renames the topic with the "✔ " prefix (the server's RESOLVED_TOPIC_PREFIX,
 * src/lib/message-edit.ts); unresolving takes off every "✔" and space it starts with, which is
 * what the server takes for an unresolve (topicResolution) and the reference's unresolve_name.
 */
import { narrowHash, topicNarrow, type Names } from './narrow.js';
import { isResolved, RESOLVED_PREFIX } from './topic-actions.js';

/** The prefix as it may have been doubled ("✔ ✔✔ "): all of it goes when unresolving. */
const RESOLVED_PREFIX_RE = /^✔ [ ✔]*/;

export function resolveName(topic: string): string {
  return RESOLVED_PREFIX + topic;
}

export function unresolveName(topic: string): string {
  return topic.replace(RESOLVED_PREFIX_RE, '');
}

/** The name a topic gets from "Mark as resolved" or "Mark as unresolved". */
export function toggledResolved(topic: string): string {
  return isResolved(topic) ? unresolveName(topic) : resolveName(topic);
}

/**
 * What the move dialog sends (PATCH /messages/{id}, the topic's newest message, with
 * propagate_mode change_all), or why it cannot yet: the name and channel as they are now are
 * left out (the server reads a field not sent as unchanged), and a request changing nothing is
 * none. `topic` is trimmed as the server does.
 */
export function moveRequest(
  from: { streamId: number; topic: string },
  to: { streamId: number; topic: string },
  notify: { newThread: boolean; oldThread: boolean },
  opts: { emptyTopicAllowed: boolean },
):
  | {
      ok: true;
      body: {
        topic?: string;
        stream_id?: number;
        propagate_mode: 'change_all';
        send_notification_to_new_thread: boolean;
        send_notification_to_old_thread: boolean;
      };
    }
  | { ok: false; why: string } {
  const topic = to.topic.trim();
  const renamed = topic !== from.topic;
  const moved = to.streamId !== from.streamId;
  if (!renamed && !moved) return { ok: false, why: 'Nothing to change.' };
  if (topic === '' && !opts.emptyTopicAllowed)
    return { ok: false, why: 'Topics are required in this organization.' };
  return {
    ok: true,
    body: {
      ...(renamed ? { topic } : {}),
      ...(moved ? { stream_id: to.streamId } : {}),
      propagate_mode: 'change_all',
      send_notification_to_new_thread: notify.newThread,
      send_notification_to_old_thread: notify.oldThread,
    },
  };
}

/**
 * The link to a topic: its view's address, in the form the message menu's "Copy link" gives
 * (Controller.messageLink): `origin/#narrow/channel/<id>-<name>/topic/<name>`.
 */
export function topicLink(origin: string, streamId: number, topic: string, names: Names): string {
  return `${origin}/${narrowHash(topicNarrow(streamId, topic), names)}`;
}
