/**
 * Reporting a message (POST /messages/{id}/report): the realm's notification bot posts the report
 * in the moderation-request channel, as the reference's send_message_report does with
 * internal_send_stream_message: no posting permission is asked of the bot, the channel's
 * subscribers receive it. The endpoint checked the reporter's access to the message and built
 * and rendered the notice (src/lib/message-report.ts); this re-checks what may have changed since.
 */
import { JsonableError } from '../lib/errors.js';
import type { MutationContext } from './context.js';
import { NOTIFICATION_BOT_EMAIL, NotificationBotNeeded } from './message-edit.js';
import { doSendMessage, type RenderedMessage } from './messages.js';

export type ReportMessageCommand = {
  reporter_id: number;
  topic: string;
  content: string;
  rendered: RenderedMessage;
  search_text: string;
};

export const REPORTING_DISABLED = 'Message reporting is not enabled in this organization.';

export function doReportMessage(
  ctx: MutationContext,
  cmd: ReportMessageCommand,
): { message_id: number } {
  const view = ctx.realm;
  const channelId = view.settings.moderation_request_channel_id;
  const channel = channelId === -1 ? undefined : view.channels.byId(channelId);
  if (!channel || channel.deactivated === 1) throw new JsonableError(REPORTING_DISABLED);
  const bot = view.userByEmail(NOTIFICATION_BOT_EMAIL);
  // Rolled back; the endpoint creates the bot and asks again.
  if (!bot) throw new NotificationBotNeeded();
  const send = {
    sender_id: bot.id,
    to: { kind: 'channel' as const, channel: channel.id, topic: cmd.topic },
    content: cmd.content,
    rendered: cmd.rendered,
    search_text: cmd.search_text,
    client: 'Internal',
    read_by_sender: true,
  };
  const { id } = doSendMessage(ctx, send, {
    sender: bot,
    channel,
    topic: cmd.topic,
    dm: null,
    recipients: view.channels.subscriberIds(channel.id),
    topicParticipants: null,
  });
  return { message_id: id };
}
