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

/** What moveRequest's body is, once it is ready to send. */
export type MoveBody = Extract<ReturnType<typeof moveRequest>, { ok: true }>['body'];

/**
 * The server's refusal of a whole-topic move for the realm's time limit
 * (MOVE_MESSAGES_TIME_LIMIT_EXCEEDED: a member, not a moderator or administrator, with messages in
 * the topic sent longer ago than move_messages_within_stream_limit_seconds, or
 * move_messages_between_streams_limit_seconds for another channel): which messages may still move
 * (the newest `allowed`, from `firstId` on) and how many stay. Null for any other refusal, or one
 * that leaves nothing to move.
 */
export type PartialMove = { firstId: number; allowed: number; remaining: number };

export function partialMove(code: string, body: Record<string, unknown>): PartialMove | null {
  if (code !== 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED') return null;
  const firstId = body.first_message_id_allowed_to_move;
  const allowed = body.total_messages_allowed_to_move;
  const total = body.total_messages_in_topic;
  if (typeof firstId !== 'number' || typeof allowed !== 'number' || typeof total !== 'number')
    return null;
  if (allowed < 1) return null;
  return { firstId, allowed, remaining: Math.max(0, total - allowed) };
}

/**
 * The edit that moves only the messages the user may still move, as the reference's
 * move_topic_containing_message_to_stream does once its "Move some messages?" is confirmed:
 * PATCH /messages/{first_message_id_allowed_to_move} with propagate_mode change_later (that
 * message and the topic's later ones), with the same fields as the refused move: the Move
 * dialog's name, channel and notices, or the edit box's topic alone (its refused request sent no
 * notices, so neither does this one, and the server's defaults apply to both).
 */
export function partialMoveRequest<B extends { propagate_mode: string } = MoveBody>(
  body: B,
  p: PartialMove,
): { id: number; body: Omit<B, 'propagate_mode'> & { propagate_mode: 'change_later' } } {
  return { id: p.firstId, body: { ...body, propagate_mode: 'change_later' } };
}

const count = (n: number, one: string, many: string) => (n === 1 ? one : `${n} ${many}`);

/** The question asked before a partial move, in the reference's words (confirm_moving_messages). */
export function partialMoveQuestion(p: PartialMove): {
  title: string;
  text: string;
  detail: string;
} {
  return {
    title: 'Move some messages?',
    text:
      'You do not have permission to move some of the messages in this topic. Contact a ' +
      'moderator to move all messages.',
    detail:
      `Do you still want to move the latest ${count(p.allowed, 'message', 'messages')}? ` +
      `${count(p.remaining, '1 message', 'messages')} will remain in the current topic.`,
  };
}

/**
 * The link to a topic: its view's address, in the form the message menu's "Copy link" gives
 * (Controller.messageLink): `origin/#narrow/channel/<id>-<name>/topic/<name>`.
 */
export function topicLink(origin: string, streamId: number, topic: string, names: Names): string {
  return `${origin}/${narrowHash(topicNarrow(streamId, topic), names)}`;
}
