/**
 * Validating an edit of a message (PATCH /messages/{message_id}) into an edit plan: every refusal
 * of an edit is here, checked against the state the edit commits against, and nothing is written.
 * Reference: actions/message_edit.py (check_update_message, validate_message_edit_payload,
 * validate_user_can_edit_message, build_message_edit_request,
 * check_time_limit_for_change_all_propagate_mode).
 */
import { createHash } from 'node:crypto';
import { effectiveTopicsPolicy } from '../lib/channel-rules.js';
import { InvalidChannelIdError, JsonableError, NoPostPermissionError } from '../lib/errors.js';
import type { PreparedContent } from '../lib/message-content.js';
import {
  EDIT_LIMIT_BUFFER,
  resolvesEmptyTopic,
  topicResolution,
  type PropagateMode,
} from '../lib/message-edit.js';
import type { PreparedNotices } from '../lib/notices.js';
import { Role } from '../lib/roles.js';
import type { Channel } from '../queries/channels-view.js';
import { accessMessage, checkMayEditContent } from '../queries/messages.js';
import type { TopicMessageRow } from '../storage/message-edits.js';
import type { MessageRow } from '../storage/messages.js';
import type { UserRow } from '../storage/users.js';
import { actingUser, type MutationContext } from './context.js';
import { checkMentionPermissions } from './messages.js';

export type UpdateMessageCommand = {
  acting_user_id: number;
  message_id: number;
  /** The new topic, normalized (trimmed, '' for the empty topic, truncated). */
  topic?: string | undefined;
  /** The new topic before truncation (resolving compares the whole name). */
  topic_untruncated?: string | undefined;
  stream_id?: number | undefined;
  propagate_mode: PropagateMode;
  send_notification_to_old_thread: boolean;
  send_notification_to_new_thread: boolean;
  /** The new content, normalized and rendered by the endpoint. */
  content?: PreparedContent | undefined;
  prev_content_sha256?: string | undefined;
  /** The notices a move may send, rendered by the endpoint (src/lib/notices.ts). */
  notices?: PreparedNotices | undefined;
};

/** A content edit of a direct message: the only edit a direct message takes. */
export type DirectEditPlan = {
  kind: 'direct';
  message: MessageRow;
  content: PreparedContent;
};

/** An edit of a channel message: new content, and/or a move to another topic and/or channel. */
export type ChannelEditPlan = {
  kind: 'channel';
  user: UserRow;
  message: MessageRow;
  content: PreparedContent | undefined;
  origStream: Channel;
  origTopic: string;
  targetStream: Channel;
  targetTopic: string;
  topicEdited: boolean;
  streamEdited: boolean;
  /** The rename only adds or removes the resolved prefix. */
  resolved: boolean;
  unresolved: boolean;
  moved: boolean;
  propagateMode: PropagateMode;
  /** The topic's messages the user can see, from `fromId` on (protected history: received). */
  visibleInTopic: (fromId: number) => TopicMessageRow[];
};

export type EditPlan = DirectEditPlan | ChannelEditPlan;

export class MessageMoveError extends JsonableError {
  constructor(first: number | null, total: number, allowed: number) {
    super(
      `You only have permission to move the ${allowed}/${total} most recent messages in this topic.`,
      {
        code: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
        extra: {
          first_message_id_allowed_to_move: first,
          total_messages_in_topic: total,
          total_messages_allowed_to_move: allowed,
        },
      },
    );
  }
}

const isModerator = (role: number) => role <= Role.MODERATOR;

function sha256Hex(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex');
}

/** Checks an edit against the realm's state and the user's permissions; writes nothing. */
export function checkMessageEdit(ctx: MutationContext, cmd: UpdateMessageCommand): EditPlan {
  const { store, realm: view } = ctx;
  const user = actingUser(view, cmd.acting_user_id);
  const { row: message } = accessMessage(store, view, user.id, cmd.message_id, true);
  const settings = view.settings;

  const content = cmd.content;
  if (content !== undefined) {
    checkMayEditContent(view, user.id, message, ctx.now, EDIT_LIMIT_BUFFER);
  }

  const isChannel = message.stream_id !== null;
  let topic = cmd.topic;
  if (topic !== undefined && topic === message.topic) topic = undefined;
  let streamId = cmd.stream_id;
  if (streamId !== undefined && streamId === message.stream_id) streamId = undefined;

  // validate_message_edit_payload
  if (topic === undefined && content === undefined && streamId === undefined) {
    throw new JsonableError('Nothing to change');
  }
  if (!isChannel) {
    if (streamId !== undefined)
      throw new JsonableError('Direct messages cannot be moved to channels.');
    if (topic !== undefined) throw new JsonableError('Direct messages cannot have topics.');
  }
  if (cmd.propagate_mode !== 'change_one' && topic === undefined && streamId === undefined) {
    throw new JsonableError('Invalid propagate_mode without topic edit');
  }
  if (topic !== undefined && resolvesEmptyTopic(topic)) {
    throw new JsonableError('General chat cannot be marked as resolved');
  }
  if (streamId !== undefined && content !== undefined) {
    throw new JsonableError('Cannot change message content while changing channel');
  }
  if (content !== undefined && store.submessages.widget(message.id) !== undefined) {
    throw new JsonableError('Widgets cannot be edited.');
  }
  if (
    cmd.prev_content_sha256 !== undefined &&
    cmd.prev_content_sha256 !== sha256Hex(message.content)
  ) {
    throw new JsonableError("'prev_content_sha256' value does not match the expected value.", {
      code: 'EXPECTATION_MISMATCH',
    });
  }

  if (!isChannel) return { kind: 'direct', message, content: content! };

  // build_message_edit_request
  const origStream = view.channels.byId(message.stream_id!)!;
  const origTopic = message.topic;
  const targetTopic = topic ?? origTopic;
  const { resolved, unresolved } =
    topic !== undefined
      ? topicResolution(origTopic, topic, cmd.topic_untruncated ?? topic)
      : { resolved: false, unresolved: false };
  let targetStream = origStream;
  if (streamId !== undefined) {
    const ch = view.channels.byId(streamId);
    if (!ch || ch.deactivated || !view.channels.may(user.id, ch, 'content')) {
      throw new InvalidChannelIdError();
    }
    targetStream = ch;
  }
  const policy = effectiveTopicsPolicy(targetStream.topics_policy, settings.topics_policy);
  const targetEmpty = targetTopic === '';
  if (targetEmpty && (topic !== undefined || streamId !== undefined)) {
    if (policy === 'disable_empty_topic') {
      throw new JsonableError(
        'Sending messages to the general chat is not allowed in this channel.',
      );
    }
  }
  if (policy === 'empty_topic_only' && !targetEmpty) {
    throw new JsonableError('Only the general chat topic is allowed in this channel.');
  }
  const isResolveOnly = resolved || unresolved;

  // Topic permissions.
  if (topic !== undefined) {
    if (isResolveOnly) {
      if (!view.hasRealmPermission(user.id, 'can_resolve_topics_group')) {
        throw new JsonableError("You don't have permission to resolve topics in this channel.");
      }
    } else {
      if (!view.hasRealmPermission(user.id, 'can_move_messages_between_topics_group')) {
        throw new JsonableError("You don't have permission to edit this message");
      }
      const limit = settings.move_messages_within_stream_limit_seconds;
      if (
        limit !== null &&
        !isModerator(user.role) &&
        ctx.now - message.date_sent > limit + EDIT_LIMIT_BUFFER
      ) {
        throw new JsonableError("The time limit for editing this message's topic has passed.");
      }
    }
  }

  // Content: mention permissions, as when sending.
  if (content !== undefined) {
    const participants = content.rendered.mentions_topic_wildcard
      ? store.messages.topicParticipants(origStream.id, message.topic)
      : null;
    checkMentionPermissions(ctx, user, content.rendered, origStream, participants);
  }

  // Channel permissions.
  if (streamId !== undefined) {
    if (!view.hasRealmPermission(user.id, 'can_move_messages_between_channels_group')) {
      throw new JsonableError("You don't have permission to move this message");
    }
    if (view.channels.sendMessageDecision(user.id, targetStream) === 'not_allowed') {
      throw new NoPostPermissionError();
    }
    const limit = settings.move_messages_between_streams_limit_seconds;
    if (
      limit !== null &&
      !isModerator(user.role) &&
      ctx.now - message.date_sent > limit + EDIT_LIMIT_BUFFER
    ) {
      throw new JsonableError("The time limit for editing this message's channel has passed");
    }
  }

  const moved = topic !== undefined || streamId !== undefined;
  const historyAccess = view.channels.may(user.id, origStream, 'history');
  const visibleInTopic = (fromId: number) =>
    historyAccess
      ? store.messageEdits.topicMessages(origStream.id, origTopic, fromId)
      : store.messageEdits.receivedTopicMessages(user.id, origStream.id, origTopic, fromId);

  if (cmd.propagate_mode === 'change_all' && moved && !isModerator(user.role) && !isResolveOnly) {
    checkChangeAllTimeLimit(ctx, topic !== undefined, streamId !== undefined, visibleInTopic(0));
  }
  return {
    kind: 'channel',
    user,
    message,
    content,
    origStream,
    origTopic,
    targetStream,
    targetTopic,
    topicEdited: topic !== undefined,
    streamEdited: streamId !== undefined,
    resolved,
    unresolved,
    moved,
    propagateMode: cmd.propagate_mode,
    visibleInTopic,
  };
}

/**
 * check_time_limit_for_change_all_propagate_mode: a non-moderator moving a whole topic must be
 * within the time limit for every message of it they can see.
 */
function checkChangeAllTimeLimit(
  ctx: MutationContext,
  topicEdited: boolean,
  streamEdited: boolean,
  visible: readonly { id: number; date_sent: number }[],
): void {
  const s = ctx.realm.settings;
  const limits: number[] = [];
  if (topicEdited && s.move_messages_within_stream_limit_seconds !== null)
    limits.push(s.move_messages_within_stream_limit_seconds + EDIT_LIMIT_BUFFER);
  if (streamEdited && s.move_messages_between_streams_limit_seconds !== null)
    limits.push(s.move_messages_between_streams_limit_seconds + EDIT_LIMIT_BUFFER);
  if (limits.length === 0) return;
  const oldest = ctx.now - Math.min(...limits);
  const allowed = visible.filter((m) => m.date_sent > oldest);
  if (allowed.length === visible.length) return;
  throw new MessageMoveError(allowed[0]?.id ?? null, visible.length, allowed.length);
}
