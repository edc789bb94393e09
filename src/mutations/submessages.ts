/**
 * Submessages: the widget a message is (written with it) and the events of that widget (POST
 * /submessage). Reference: lib/widget.py do_widget_post_save_actions, views/submessage.py
 * process_submessage, actions/submessage.py (verify_submessage_sender, do_add_submessage).
 */
import { JsonableError } from '../lib/errors.js';
import { parseJson } from '../lib/json.js';
import {
  checkWidgetEvent,
  MAX_SUBMESSAGES_PER_MESSAGE,
  SUBMESSAGE_MSG_TYPE,
  widgetTypeOf,
  type WidgetContent,
} from '../lib/widgets.js';
import { accessMessage, messageEventAudience, type ApiSubmessage } from '../queries/messages.js';
import type { MessageRow } from '../storage/messages.js';
import type { Store } from '../storage/store.js';
import type { MutationContext } from './context.js';
import { followOnParticipation } from './auto-follow.js';

/**
 * Writes a new message's widget, its first submessage (msg_type `widget`, by the message's
 * sender); what the message object then carries.
 */
export function writeWidget(
  store: Store,
  messageId: number,
  senderId: number,
  widget: WidgetContent,
): ApiSubmessage[] {
  const row = {
    message_id: messageId,
    sender_id: senderId,
    msg_type: SUBMESSAGE_MSG_TYPE,
    content: JSON.stringify({ widget_type: widget.widget_type, extra_data: widget.extra_data }),
  };
  const id = store.submessages.add(row);
  return [{ id, ...row }];
}

export type AddSubmessageCommand = {
  user_id: number;
  message_id: number;
  msg_type: string;
  /** The JSON text as sent (stored and passed on as it is). */
  content: string;
};

export type SubmessagePlan = { message: MessageRow; cmd: AddSubmessageCommand };

export function checkAddSubmessage(
  ctx: MutationContext,
  cmd: AddSubmessageCommand,
): SubmessagePlan {
  const { store, realm: view } = ctx;
  const { row } = accessMessage(store, view, cmd.user_id, cmd.message_id, true);
  // Only a widget takes submessages: its first is the sender's description of it (the reference
  // lets a sender attach the first; here a message becomes a widget only when sent as one).
  const widget = store.submessages.widget(row.id);
  if (!widget) throw new JsonableError('You cannot attach a submessage to this message.');
  if (cmd.msg_type !== SUBMESSAGE_MSG_TYPE) throw new JsonableError('Invalid msg_type');
  let data: unknown;
  try {
    data = parseJson(cmd.content);
  } catch {
    throw new JsonableError('Invalid json for submessage');
  }
  const widgetType = widgetTypeOf(widget.content);
  if (widgetType !== null) checkWidgetEvent(widgetType, data, row.sender_id === cmd.user_id);
  if (store.submessages.count(row.id) >= MAX_SUBMESSAGES_PER_MESSAGE) {
    throw new JsonableError(
      `This message has too many submessages (limit: ${MAX_SUBMESSAGES_PER_MESSAGE})`,
    );
  }
  return { message: row, cmd };
}

export function doAddSubmessage(ctx: MutationContext, plan: SubmessagePlan): void {
  const { store, realm: view } = ctx;
  const { message, cmd } = plan;
  const id = store.submessages.add({
    message_id: message.id,
    sender_id: cmd.user_id,
    msg_type: cmd.msg_type,
    content: cmd.content,
  });
  followOnParticipation(ctx, cmd.user_id, message);
  ctx.emit(
    {
      type: 'submessage',
      msg_type: cmd.msg_type,
      message_id: message.id,
      submessage_id: id,
      sender_id: cmd.user_id,
      content: cmd.content,
    },
    messageEventAudience(store, view, message),
  );
}
