/**
 * Scheduled messages: GET/POST /scheduled_messages, PATCH/DELETE /scheduled_messages/{id}.
 * Reference: views/scheduled_messages.py. The parameters are checked here in the reference's
 * order; the content is rendered here (as for sending) before the realm actor checks the message
 * against the realm and stores it. Delivery: actors/scheduled-delivery.ts.
 */
import { z } from 'zod';
import { endpoint, type AuthedCtx } from '../http/endpoint.js';
import { JsonableError, MissingTopicError } from '../lib/errors.js';
import {
  clientNameFromUserAgent,
  normalizeContent,
  normalizeTopic,
  renderedMessage,
  type MessageDestination,
  type RenderedMessage,
} from '../lib/message-content.js';
import { bool, int, oneOf, ownNulRule, pathInt, str } from '../lib/params.js';
import {
  DeliveryTimeNotInFutureError,
  parseScheduledChannelTo,
  parseScheduledDirectTo,
  scheduledMessageType,
} from '../lib/scheduled-messages.js';
import { renderContextFor, renderOptionsFor } from '../queries/render-context.js';
import { ownScheduledMessage, scheduledMessagesOf } from '../queries/scheduled-messages.js';

const TYPES = ['direct', 'channel', 'stream', 'private'] as const;

/** Renders content as the user's message would be rendered now. */
async function render(
  { server, realm, user }: AuthedCtx,
  content: string,
): Promise<RenderedMessage> {
  const context = renderContextFor(server.config, server.store, realm.view);
  const r = await server.renderer.render(
    content,
    context,
    renderOptionsFor(server.store, realm.view, user.id, content),
  );
  return renderedMessage(r);
}

function checkInFuture({ server }: AuthedCtx, timestamp: number): void {
  if (timestamp * 1000 <= server.config.clock()) throw new DeliveryTimeNotInFutureError();
}

/** GET /api/v1/scheduled_messages — the user's undelivered ones (failed included), soonest first. */
export const getScheduledMessages = endpoint({
  method: 'GET',
  path: '/api/v1/scheduled_messages',
  params: z.object({}),
  handle: ({ server, user }) => ({
    scheduled_messages: scheduledMessagesOf(server.store, user.id),
  }),
});

/** POST /api/v1/scheduled_messages — answers `scheduled_message_id`. */
export const createScheduledMessage = endpoint({
  method: 'POST',
  path: '/api/v1/scheduled_messages',
  aliases: { subject: 'topic' },
  params: z.object({
    type: oneOf(TYPES),
    to: str(),
    content: ownNulRule(str()), // normalizeContent
    topic: ownNulRule(str()).optional(), // normalizeTopic
    scheduled_delivery_timestamp: int(),
    read_by_sender: bool().optional(),
  }),
  handle: async (ctx, p) => {
    checkInFuture(ctx, p.scheduled_delivery_timestamp);
    let to: MessageDestination;
    if (scheduledMessageType(p.type) === 'stream') {
      const channel = parseScheduledChannelTo(p.to);
      if (p.topic === undefined) throw new MissingTopicError();
      to = { kind: 'channel', channel, topic: normalizeTopic(p.topic) };
    } else {
      to = { kind: 'direct', ids: parseScheduledDirectTo(p.to) };
    }
    const content = normalizeContent(p.content);
    const rendered = await render(ctx, content);
    const result = await ctx.realm.ask('scheduled_message.create', {
      sender_id: ctx.user.id,
      to,
      content,
      rendered,
      client: clientNameFromUserAgent(ctx.req.userAgent),
      read_by_sender: p.read_by_sender,
      deliver_at: p.scheduled_delivery_timestamp,
    });
    ctx.server.scheduler.noteScheduled(p.scheduled_delivery_timestamp);
    return result;
  },
});

/** PATCH /api/v1/scheduled_messages/{scheduled_message_id} */
export const editScheduledMessage = endpoint({
  method: 'PATCH',
  path: '/api/v1/scheduled_messages/:scheduled_message_id',
  aliases: { subject: 'topic' },
  params: z.object({
    scheduled_message_id: pathInt(),
    type: oneOf(TYPES).optional(),
    to: str().optional(),
    topic: ownNulRule(str()).optional(), // normalizeTopic
    content: ownNulRule(str()).optional(), // normalizeContent
    scheduled_delivery_timestamp: int().optional(),
  }),
  handle: async (ctx, p) => {
    if (
      p.type === undefined &&
      p.to === undefined &&
      p.topic === undefined &&
      p.content === undefined &&
      p.scheduled_delivery_timestamp === undefined
    ) {
      throw new JsonableError('Nothing to change');
    }
    const type = p.type === undefined ? undefined : scheduledMessageType(p.type);
    if (type !== undefined && p.to === undefined) {
      throw new JsonableError('Recipient required when updating type of scheduled message.');
    }
    if (type === 'stream' && p.topic === undefined) {
      throw new JsonableError('Topic required when updating scheduled message type to channel.');
    }
    if (p.scheduled_delivery_timestamp !== undefined) {
      checkInFuture(ctx, p.scheduled_delivery_timestamp);
    }
    const content = p.content === undefined ? undefined : normalizeContent(p.content);
    let rendered: RenderedMessage | undefined;
    if (content !== undefined) {
      rendered = await render(ctx, content);
    } else if (p.type !== undefined || p.to !== undefined) {
      // The addressing changes: the stored content is checked again (mentions) for it.
      const row = ownScheduledMessage(ctx.server.store, ctx.user.id, p.scheduled_message_id);
      if (row) rendered = await render(ctx, row.content);
    }
    await ctx.realm.ask('scheduled_message.edit', {
      sender_id: ctx.user.id,
      scheduled_message_id: p.scheduled_message_id,
      type,
      to: p.to,
      topic: p.topic,
      content,
      rendered,
      deliver_at: p.scheduled_delivery_timestamp,
      client: clientNameFromUserAgent(ctx.req.userAgent),
    });
    if (p.scheduled_delivery_timestamp !== undefined) {
      ctx.server.scheduler.noteScheduled(p.scheduled_delivery_timestamp);
    }
    return {};
  },
});

/** DELETE /api/v1/scheduled_messages/{scheduled_message_id} */
export const deleteScheduledMessage = endpoint({
  method: 'DELETE',
  path: '/api/v1/scheduled_messages/:scheduled_message_id',
  params: z.object({ scheduled_message_id: pathInt() }),
  handle: async ({ realm, user }, p) =>
    realm.ask('scheduled_message.delete', {
      sender_id: user.id,
      scheduled_message_id: p.scheduled_message_id,
    }),
});
