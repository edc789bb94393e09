/**
 * Scheduled messages: schedule, edit, delete, and deliver. Reference: actions/scheduled_messages.py
 * (check_schedule_message, edit_scheduled_message, delete_scheduled_message,
 * send_scheduled_message, try_deliver_one_scheduled_message), views/scheduled_messages.py.
 *
 * A scheduled message is checked exactly as a message being sent (checkMessage, the reference's
 * check_message) when it is scheduled, when its addressing or content is edited, and again when it
 * is delivered — permissions may have changed in between. Delivery sends it through the send path
 * (doSendMessage), so the delivered message is a sent message with all its events and flags.
 * Every change sends a `scheduled_messages` event to the sender only.
 */
import { JsonableError, UserDeactivatedError } from '../lib/errors.js';
import {
  defaultReadBySender,
  normalizeTopic,
  type MessageDestination,
  type PreparedContent,
  type RenderedMessage,
} from '../lib/message-content.js';
import {
  LATE_CUTOFF_SECONDS,
  parseScheduledChannelTo,
  parseScheduledDirectTo,
  ScheduledMessageDoesNotExistError,
  SEND_LATER,
  TOO_LATE_MESSAGE,
} from '../lib/scheduled-messages.js';
import { directRecipientIds, formatScheduledMessage } from '../queries/scheduled-messages.js';
import type {
  ScheduledMessageRow,
  ScheduledMessageType,
  ScheduledMessageValues,
} from '../storage/scheduled-messages.js';
import type { MutationContext } from './context.js';
import { sendInternalMessage } from './internal-send.js';
import { checkMessage, doSendMessage, type CheckedMessage } from './messages.js';

/** The addressing a scheduled message stores, from what checkMessage resolved. */
function addressing(
  checked: CheckedMessage,
): Pick<ScheduledMessageValues, 'type' | 'stream_id' | 'user_ids' | 'topic'> {
  if (checked.channel !== null) {
    return { type: 'stream', stream_id: checked.channel.id, user_ids: '', topic: checked.topic };
  }
  const senderId = checked.sender.id;
  const others = checked.dm!.memberIds.filter((id) => id !== senderId);
  return {
    type: 'private',
    stream_id: null,
    user_ids: (others.length === 0 ? [senderId] : others).join(','),
    topic: '',
  };
}

function notify(ctx: MutationContext, senderId: number, row: ScheduledMessageRow): void {
  ctx.emit(
    { type: 'scheduled_messages', op: 'update', scheduled_message: formatScheduledMessage(row) },
    [senderId],
  );
}

/** The sender's own scheduled message (not a reminder), or "does not exist". */
export function accessScheduledMessage(
  ctx: Pick<MutationContext, 'store' | 'realm'>,
  userId: number,
  id: number,
): ScheduledMessageRow {
  const row = ctx.store.scheduledMessages.byId(id);
  if (
    !row ||
    row.realm_id !== ctx.realm.id ||
    row.sender_id !== userId ||
    row.delivery_type !== SEND_LATER
  ) {
    throw new ScheduledMessageDoesNotExistError();
  }
  return row;
}

export type ScheduleMessageCommand = {
  sender_id: number;
  /** Channel by id, or direct by user ids (the endpoint parsed `to`). */
  to: MessageDestination;
  /** Normalized content, and its rendering. */
  content: string;
  rendered: RenderedMessage;
  client: string;
  /** Absent: the reference's guess (read for interactive clients, unless a note to self). */
  read_by_sender?: boolean | undefined;
  /** UNIX seconds; the endpoint checked that it is in the future. */
  deliver_at: number;
};

/** POST /scheduled_messages. */
export function doScheduleMessage(
  ctx: MutationContext,
  cmd: ScheduleMessageCommand,
): { scheduled_message_id: number } {
  const checked = checkMessage(ctx, cmd);
  const where = addressing(checked);
  const toSelf = where.type === 'private' && where.user_ids === String(cmd.sender_id);
  const readBySender = cmd.read_by_sender ?? (defaultReadBySender(cmd.client) && !toSelf);
  const values: ScheduledMessageValues = {
    ...where,
    content: cmd.content,
    rendered_content: cmd.rendered.rendered_content,
    scheduled_timestamp: cmd.deliver_at,
    read_by_sender: readBySender ? 1 : 0,
    sending_client: cmd.client,
  };
  const id = ctx.store.scheduledMessages.insert(ctx.realm.id, cmd.sender_id, SEND_LATER, values);
  const row = ctx.store.scheduledMessages.byId(id)!;
  ctx.emit(
    {
      type: 'scheduled_messages',
      op: 'add',
      scheduled_messages: [formatScheduledMessage(row)],
    },
    [cmd.sender_id],
  );
  return { scheduled_message_id: id };
}

export type EditScheduledMessageCommand = {
  sender_id: number;
  scheduled_message_id: number;
  /** The new type (the endpoint made sure `to` comes with it, and `topic` with 'stream'). */
  type?: ScheduledMessageType | undefined;
  /** The raw `to` parameter: parsed here, as the type it goes with may be the stored one. */
  to?: string | undefined;
  topic?: string | undefined;
  /** New content (normalized). */
  content?: string | undefined;
  /**
   * The rendering of the content the message will have: the new content, or — when only the
   * addressing changes — the stored content, for checkMessage's mention checks.
   */
  rendered?: RenderedMessage | undefined;
  deliver_at?: number | undefined;
  client: string;
};

/** PATCH /scheduled_messages/{id}. */
/** A checked edit of a scheduled message: its new stored values. */
export type ScheduledMessageEdit = {
  id: number;
  sender_id: number;
  values: ScheduledMessageValues;
};

export function checkEditScheduledMessage(
  ctx: MutationContext,
  cmd: EditScheduledMessageCommand,
): ScheduledMessageEdit {
  const row = accessScheduledMessage(ctx, cmd.sender_id, cmd.scheduled_message_id);
  if (row.delivered) throw new JsonableError('Scheduled message was already sent');
  if (row.failed && cmd.deliver_at === undefined) {
    throw new JsonableError('Scheduled delivery time must be in the future.');
  }
  const values: ScheduledMessageValues = {
    type: row.type,
    stream_id: row.stream_id,
    user_ids: row.user_ids,
    topic: row.topic,
    content: row.content,
    rendered_content: row.rendered_content,
    scheduled_timestamp: cmd.deliver_at ?? row.scheduled_timestamp,
    read_by_sender: row.read_by_sender,
    sending_client: cmd.client,
  };

  if (cmd.type !== undefined || cmd.to !== undefined || cmd.content !== undefined) {
    // Check the message again, as it will be: new addressing and content over the stored ones.
    const type = cmd.type ?? row.type;
    let to: MessageDestination;
    if (type === 'stream') {
      const streamId = cmd.to !== undefined ? parseScheduledChannelTo(cmd.to) : row.stream_id;
      const topic = cmd.topic !== undefined ? normalizeTopic(cmd.topic) : row.topic;
      // A direct message becoming a channel message without a new channel cannot happen: the
      // endpoint requires `to` with `type`.
      to = { kind: 'channel', channel: streamId!, topic };
    } else {
      const ids = cmd.to !== undefined ? parseScheduledDirectTo(cmd.to) : directRecipientIds(row);
      to = { kind: 'direct', ids };
    }
    if (cmd.rendered === undefined)
      throw new Error('edit of a scheduled message without rendering');
    const checked = checkMessage(ctx, { sender_id: cmd.sender_id, to, rendered: cmd.rendered });
    if (cmd.type !== undefined || cmd.to !== undefined) Object.assign(values, addressing(checked));
    else if (cmd.topic !== undefined && row.type === 'stream') values.topic = checked.topic;
    if (cmd.content !== undefined) {
      values.content = cmd.content;
      values.rendered_content = cmd.rendered.rendered_content;
    }
  } else if (cmd.topic !== undefined && row.type === 'stream') {
    // Only the topic: checked as a topic (a direct message's topic is ignored).
    values.topic = normalizeTopic(cmd.topic);
  }
  return { id: row.id, sender_id: cmd.sender_id, values };
}

export function doEditScheduledMessage(
  ctx: MutationContext,
  edit: ScheduledMessageEdit,
): Record<string, never> {
  ctx.store.scheduledMessages.update(edit.id, edit.values);
  notify(ctx, edit.sender_id, ctx.store.scheduledMessages.byId(edit.id)!);
  return {};
}

/** DELETE /scheduled_messages/{id}. */
export function doDeleteScheduledMessage(
  ctx: MutationContext,
  cmd: { sender_id: number; scheduled_message_id: number },
): Record<string, never> {
  const row = accessScheduledMessage(ctx, cmd.sender_id, cmd.scheduled_message_id);
  ctx.store.scheduledMessages.remove(row.id);
  ctx.emit({ type: 'scheduled_messages', op: 'remove', scheduled_message_id: row.id }, [
    cmd.sender_id,
  ]);
  return {};
}

export type DeliverScheduledMessageCommand = {
  scheduled_message_id: number;
  /** The content the rendering below is of; a message edited since is left for the next turn. */
  content: string;
  rendered: RenderedMessage;
  search_text: string;
};

export type DeliveryOutcome =
  | { outcome: 'sent'; message_id: number }
  /** `tell`: the sender is to be told (reportScheduledFailure), unless deactivated. */
  | { outcome: 'failed'; failure_message: string; tell: boolean }
  /** Deleted, edited, rescheduled or already handled since the scheduler looked. */
  | { outcome: 'skipped' };

/**
 * Delivers one due scheduled message (the reference's send_scheduled_message and the failure
 * handling of try_deliver_one_scheduled_message). Sent: the row is marked delivered and a
 * `remove` event goes to the sender. Refused (the sender lost permission to post, the channel was
 * archived, the recipient was deactivated, or the delivery is more than 10 minutes late): the row
 * is marked failed and an `update` event shows `failed: true`; the scheduler then has the
 * notification bot tell the sender (doReportScheduledFailure) — except when the sender's account
 * is deactivated, when nobody is told of anything.
 */
export function doDeliverScheduledMessage(
  ctx: MutationContext,
  cmd: DeliverScheduledMessageCommand,
): DeliveryOutcome {
  const { store } = ctx;
  const row = store.scheduledMessages.byId(cmd.scheduled_message_id);
  if (
    !row ||
    row.realm_id !== ctx.realm.id ||
    row.delivered ||
    row.failed ||
    row.scheduled_timestamp > ctx.now ||
    row.content !== cmd.content
  ) {
    return { outcome: 'skipped' };
  }
  const fail = (message: string, tell: boolean): DeliveryOutcome => {
    markFailed(ctx, row, message, tell);
    return { outcome: 'failed', failure_message: message, tell };
  };

  const sender = ctx.realm.user(row.sender_id);
  if (!sender || !sender.is_active) return fail(new UserDeactivatedError().message, false);
  if (ctx.now > row.scheduled_timestamp + LATE_CUTOFF_SECONDS) return fail(TOO_LATE_MESSAGE, true);

  const to: MessageDestination =
    row.type === 'stream'
      ? { kind: 'channel', channel: row.stream_id!, topic: row.topic }
      : { kind: 'direct', ids: directRecipientIds(row) };
  const send = {
    sender_id: row.sender_id,
    to,
    content: row.content,
    rendered: cmd.rendered,
    search_text: cmd.search_text,
    client: row.sending_client,
    read_by_sender: row.read_by_sender === 1,
  };
  let checked: CheckedMessage;
  try {
    checked = checkMessage(ctx, send);
  } catch (err) {
    if (err instanceof JsonableError) return fail(err.message, true);
    throw err;
  }
  const { id } = doSendMessage(ctx, { cmd: send, checked });
  store.scheduledMessages.markDelivered(row.id, id);
  ctx.emit({ type: 'scheduled_messages', op: 'remove', scheduled_message_id: row.id }, [
    row.sender_id,
  ]);
  return { outcome: 'sent', message_id: id };
}

/** Marks a message failed; `tell`: the sender sees it (an `update` event with `failed: true`). */
function markFailed(
  ctx: MutationContext,
  row: ScheduledMessageRow,
  message: string,
  tell: boolean,
): void {
  ctx.store.scheduledMessages.markFailed(row.id, message);
  if (tell) notify(ctx, row.sender_id, ctx.store.scheduledMessages.byId(row.id)!);
}

/**
 * Marks a due scheduled message failed after its delivery broke unexpectedly (a bug, not a
 * refusal): the reference stores "Internal server error" (and the sender is told, as for a
 * refusal). Returns whether it was marked.
 */
export function doFailScheduledMessage(
  ctx: MutationContext,
  cmd: { scheduled_message_id: number; failure_message: string },
): { failed: boolean } {
  const row = ctx.store.scheduledMessages.byId(cmd.scheduled_message_id);
  if (!row || row.realm_id !== ctx.realm.id || row.delivered || row.failed)
    return { failed: false };
  markFailed(ctx, row, cmd.failure_message, true);
  return { failed: true };
}

/**
 * The notification bot tells the sender that a scheduled message was not sent, and why
 * (send_failed_scheduled_message_notification): a direct message whose text
 * (scheduledFailureText) the scheduler rendered after the failure. Nothing is sent when the
 * message is no longer failed with that reason (revived by a new time in between).
 */
export function doReportScheduledFailure(
  ctx: MutationContext,
  cmd: { scheduled_message_id: number; failure_message: string; notice: PreparedContent },
): { sent: boolean } {
  const row = ctx.store.scheduledMessages.byId(cmd.scheduled_message_id);
  if (
    !row ||
    row.realm_id !== ctx.realm.id ||
    !row.failed ||
    row.failure_message !== cmd.failure_message
  ) {
    return { sent: false };
  }
  sendInternalMessage(ctx, { ...cmd.notice, to: { kind: 'direct', ids: [row.sender_id] } });
  return { sent: true };
}
