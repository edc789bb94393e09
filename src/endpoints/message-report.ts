/**
 * POST /api/v1/messages/{message_id}/report — report a message to the realm's moderators
 * (feature level 382). Reference: views/message_report.py, lib/message_report.py. The notice is
 * built and rendered here (it quotes the message, so it can be long: rendered off the actor like
 * any message), then posted by the notification bot (src/mutations/message-report.ts).
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { JsonableError } from '../lib/errors.js';
import { normalizeContent, normalizeTopic, renderedMessage } from '../lib/message-content.js';
import {
  MAX_REPORT_DESCRIPTION_LENGTH,
  REPORT_TYPES,
  reportContent,
  reportTopic,
  REPORTING_DISABLED,
  type ReportedMessage,
} from '../lib/message-report.js';
import { oneOf, pathInt, str } from '../lib/params.js';
import { htmlToText } from '../lib/search.js';
import { accessMessage, dmGroupMembers } from '../queries/messages.js';
import { renderContextFor } from '../queries/render-context.js';

export const reportMessage = endpoint({
  method: 'POST',
  path: '/api/v1/messages/:message_id/report',
  params: z.object({
    message_id: pathInt(),
    report_type: oneOf(REPORT_TYPES),
    description: str({ max: MAX_REPORT_DESCRIPTION_LENGTH }).default(''),
  }),
  handle: async ({ server, realm, user }, p) => {
    if (p.report_type === 'other' && p.description === '') {
      throw new JsonableError('An explanation is required.');
    }
    const view = realm.view;
    if (view.settings.moderation_request_channel_id === -1) {
      throw new JsonableError(REPORTING_DISABLED);
    }
    const { row } = accessMessage(server.store, view, user.id, p.message_id, false);
    const person = (id: number) => ({ id, full_name: view.user(id)?.full_name ?? '' });
    const sender = person(row.sender_id);
    const reported: ReportedMessage =
      row.stream_id !== null
        ? {
            id: row.id,
            sender,
            content: row.content,
            kind: 'channel',
            channel_name: view.channels.byId(row.stream_id)?.name ?? '',
            topic: row.topic,
          }
        : {
            id: row.id,
            sender,
            content: row.content,
            kind: 'direct',
            members: [...dmGroupMembers(server.store, row.dm_group_id!)]
              .sort((a, b) => a - b)
              .map(person),
          };
    const content = normalizeContent(
      reportContent(person(user.id), reported, p.report_type, p.description),
    );
    const r = await server.renderer.render(
      content,
      renderContextFor(server.config, server.store, view),
      {},
    );
    const command = {
      reporter_id: user.id,
      topic: normalizeTopic(reportTopic(sender)),
      content,
      rendered: renderedMessage(r),
      search_text: htmlToText(r.rendered_content),
    };
    await realm.ask('message.report', command);
    return {};
  },
});
