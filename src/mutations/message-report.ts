/**
 * Reporting a message (POST /messages/{id}/report): the realm's notification bot posts the report
 * in the moderation-request channel, as the reference's send_message_report does with
 * internal_send_stream_message: no posting permission is asked of the bot, the channel's
 * subscribers receive it. The endpoint checked the reporter's access to the message and built
 * and rendered the notice (src/lib/message-report.ts); this re-checks what may have changed since.
 */
import { JsonableError } from '../lib/errors.js';
import { REPORTING_DISABLED } from '../lib/message-report.js';
import type { MutationContext } from './context.js';
import { sendInternalMessage } from './internal-send.js';
import type { RenderedMessage } from '../lib/message-content.js';

export type ReportMessageCommand = {
  reporter_id: number;
  topic: string;
  content: string;
  rendered: RenderedMessage;
  search_text: string;
};

type Report = ReportMessageCommand & { channel_id: number };

/** The moderation-request channel the report goes to (reporting may have been turned off). */
export function checkReportMessage(ctx: MutationContext, cmd: ReportMessageCommand): Report {
  const view = ctx.realm;
  const channelId = view.settings.moderation_request_channel_id;
  const channel = channelId === -1 ? undefined : view.channels.byId(channelId);
  if (!channel || channel.deactivated === 1) throw new JsonableError(REPORTING_DISABLED);
  return { ...cmd, channel_id: channel.id };
}

export function doReportMessage(ctx: MutationContext, cmd: Report): { message_id: number } {
  const { id } = sendInternalMessage(ctx, {
    to: { kind: 'channel', channel: cmd.channel_id, topic: cmd.topic },
    content: cmd.content,
    rendered: cmd.rendered,
    search_text: cmd.search_text,
  });
  return { message_id: id };
}
