/**
 * Sending, fetching and deleting messages: POST /messages, GET /messages,
 * GET /messages/{message_id}, DELETE /messages/{message_id}. Reference: views/message_send.py,
 * views/message_fetch.py, views/message_edit.py (json_fetch_raw_message,
 * delete_message_backend).
 */
import { z } from 'zod';
import { endpoint, requestDialect, type AuthedCtx } from '../http/endpoint.js';
import { JsonableError, MissingTopicError } from '../lib/errors.js';
import {
  clientNameFromUserAgent,
  defaultReadBySender,
  normalizeContent,
  normalizeTopic,
  parseChannelTo,
  parseDirectTo,
  preparedContent,
  type MessageDestination,
} from '../lib/message-content.js';
import { apiFlagNames, HISTORICAL_FLAGS } from '../lib/message-flags.js';
import { parseNarrowParam } from '../lib/narrow.js';
import {
  bool,
  intList,
  json,
  nonNegativeInt,
  oneOf,
  ownNulRule,
  pathInt,
  str,
} from '../lib/params.js';
import {
  fetchRange,
  firstUnreadAnchor,
  FetchedMessages,
  MAX_MESSAGES_PER_FETCH,
  messageQuery,
  parseAnchor,
  resolveNarrow,
} from '../queries/message-fetch.js';
import {
  accessMessage,
  formatMessage,
  reactionsByMessage,
  submessagesByMessage,
} from '../queries/messages.js';
import { renderContextFor, renderOptionsFor } from '../queries/render-context.js';
import { prepareWelcomeReply } from '../queries/welcome.js';
import { log } from '../observability/log.js';
import { MAX_SUBMESSAGE_CONTENT_LENGTH, parseWidgetContent } from '../lib/widgets.js';

/**
 * POST /api/v1/messages — sends a channel or direct message. The content is normalized and
 * rendered here (short content inline, long content in a worker), then the realm actor checks
 * the destination and permissions and stores it.
 */
export const sendMessage = endpoint({
  method: 'POST',
  path: '/api/v1/messages',
  aliases: { subject: 'topic' },
  incomingWebhookBots: true,
  params: z.object({
    type: oneOf(['direct', 'private', 'stream', 'channel']),
    to: ownNulRule(str()).optional(), // a channel's name: checkChannelName
    // Their own rules refuse a NUL with the reference's words (normalizeContent, normalizeTopic).
    content: ownNulRule(str()),
    topic: ownNulRule(str()).optional(),
    queue_id: str().optional(),
    local_id: str().optional(),
    read_by_sender: bool().optional(),
    widget_content: str({ max: MAX_SUBMESSAGE_CONTENT_LENGTH }).optional(),
  }),
  handle: async ({ server, realm, user, req }, p) => {
    const widget =
      p.widget_content === undefined ? undefined : parseWidgetContent(p.widget_content);
    let to: MessageDestination;
    if (p.type === 'stream' || p.type === 'channel') {
      if (p.to === undefined) throw new JsonableError('Missing channel');
      const channel = parseChannelTo(p.to);
      if (p.topic === undefined) throw new MissingTopicError();
      to = { kind: 'channel', channel, topic: normalizeTopic(p.topic) };
    } else {
      const recipients = p.to === undefined ? { emails: [] } : parseDirectTo(p.to);
      to = { kind: 'direct', ...recipients };
    }
    const content = normalizeContent(p.content);
    const client = clientNameFromUserAgent(req.userAgent);
    // Local echo: the local id goes back only to the sender's own queue (the event fan-out checks
    // the queue is the sender's: in a cluster it may be on another node).
    const localEcho = p.queue_id !== undefined && p.local_id !== undefined;
    const context = renderContextFor(server.config, server.store, realm.view);
    const r = await server.renderer.render(
      content,
      context,
      renderOptionsFor(server.store, realm.view, user.id, content),
    );
    const { welcome_bot_answers: answer, ...sent } = await realm.ask('message.send', {
      sender_id: user.id,
      to,
      ...preparedContent(content, r),
      client,
      read_by_sender: p.read_by_sender ?? defaultReadBySender(client),
      queue_id: localEcho ? p.queue_id : undefined,
      local_id: localEcho ? p.local_id : undefined,
      widget_content: widget,
    });
    // Not awaited, and begun only after this turn (a short answer renders on this thread): the
    // send is answered now, whatever becomes of the bot's answer.
    if (answer) {
      setImmediate(() => void answerWelcomeBotMessage(server, realm, user.id, sent.id, content));
    }
    return sent;
  },
});

/**
 * The Welcome Bot's answer to a direct message sent to it (the reference's
 * send_welcome_bot_response, from do_send_messages): rendered, then sent by the realm actor as a
 * command of its own, after the user's message is committed (so its id comes after), through the
 * send path (events, unread for the user). It never fails the user's send: a failure is logged.
 */
async function answerWelcomeBotMessage(
  server: AuthedCtx['server'],
  realm: AuthedCtx['realm'],
  userId: number,
  messageId: number,
  content: string,
): Promise<void> {
  try {
    const reply = await prepareWelcomeReply(server, realm.view, content);
    await realm.ask('user.welcome.reply', { user_id: userId, message_id: messageId, reply });
  } catch (err) {
    log.warn({ err, realmId: realm.id, userId, messageId }, 'the Welcome Bot did not answer');
  }
}

const narrowParam = () => json(z.unknown());

/**
 * GET /api/v1/messages — messages of a narrow around an anchor, or by id (`message_ids`).
 * Reads answer from the store at once (no realm actor); see src/queries/message-fetch.ts.
 */
export const getMessages = endpoint({
  method: 'GET',
  path: '/api/v1/messages',
  compressAnswer: true,
  params: z.object({
    anchor: str().optional(),
    include_anchor: bool().default(true),
    num_before: nonNegativeInt().default(0),
    num_after: nonNegativeInt().default(0),
    narrow: narrowParam().optional(),
    client_extavatar: bool().default(true),
    apply_markdown: bool().default(true),
    use_first_unread_anchor: bool().default(false),
    message_ids: intList().optional(),
    allow_empty_topic_name: bool().default(false),
  }),
  handle: (ctx, p) => {
    const { server, realm, user } = ctx;
    const { store } = server;
    const view = realm.view;
    const byIds = p.message_ids !== undefined;
    if (
      byIds &&
      (p.num_before > 0 || p.num_after > 0 || p.anchor !== undefined || p.use_first_unread_anchor)
    ) {
      throw new JsonableError(
        'Unsupported parameter combination: num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor',
      );
    }
    const anchorValue = byIds ? 0 : parseAnchor(p.anchor, p.use_first_unread_anchor);
    const narrow = p.narrow === undefined || p.narrow === null ? [] : parseNarrowParam(p.narrow);
    const requested = byIds ? p.message_ids!.length : p.num_before + p.num_after;
    if (requested > MAX_MESSAGES_PER_FETCH) {
      throw new JsonableError(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
    }
    if (!byIds && p.num_before > 0 && p.num_after > 0 && !p.include_anchor) {
      throw new JsonableError('The anchor can only be excluded at an end of the range');
    }
    const resolved = resolveNarrow(view, store, user, narrow);
    const q = messageQuery(view, user, resolved);
    const format = {
      applyMarkdown: p.apply_markdown,
      clientExtAvatar: p.client_extavatar,
      allowEmptyTopicName: p.allow_empty_topic_name,
      dialect: requestDialect(ctx),
    };
    if (byIds) {
      const rows = store.messageSearch.messages(q, { dir: 'ids', ids: p.message_ids! });
      return {
        messages: new FetchedMessages(store, view, rows, format, resolved.search),
        found_anchor: false,
        found_oldest: false,
        found_newest: false,
        history_limited: false,
      };
    }
    const anchor = anchorValue ?? firstUnreadAnchor(store, view, user, resolved);
    const result = fetchRange(
      (range) => store.messageSearch.messages(q, range),
      anchor,
      p.num_before,
      p.num_after,
      p.include_anchor,
    );
    return {
      messages: new FetchedMessages(store, view, result.rows, format, resolved.search),
      anchor,
      found_anchor: result.found_anchor,
      found_oldest: result.found_oldest,
      found_newest: result.found_newest,
      history_limited: result.history_limited,
    };
  },
});

/** GET /api/v1/messages/{message_id} — one message the user may read, and its markdown. */
export const getMessage = endpoint({
  method: 'GET',
  path: '/api/v1/messages/:message_id',
  params: z.object({
    message_id: pathInt(),
    apply_markdown: bool().default(true),
    allow_empty_topic_name: bool().default(false),
  }),
  handle: (ctx, p) => {
    const { server, realm, user } = ctx;
    const { store } = server;
    const { row, flags } = accessMessage(store, realm.view, user.id, p.message_id, false);
    const message = formatMessage(
      store,
      realm.view,
      row,
      {
        applyMarkdown: p.apply_markdown,
        clientExtAvatar: true,
        allowEmptyTopicName: p.allow_empty_topic_name,
        dialect: requestDialect(ctx),
      },
      reactionsByMessage(store, [row.id]).get(row.id) ?? [],
      submessagesByMessage(store, [row.id]).get(row.id) ?? [],
      apiFlagNames(flags ?? HISTORICAL_FLAGS),
    );
    return { raw_content: row.content, message };
  },
});

/** DELETE /api/v1/messages/{message_id} — deletes a message for everyone. */
export const deleteMessage = endpoint({
  method: 'DELETE',
  path: '/api/v1/messages/:message_id',
  params: z.object({ message_id: pathInt() }),
  handle: async ({ realm, user }, p) => {
    await realm.ask('message.delete', { acting_user_id: user.id, message_id: p.message_id });
    return {};
  },
});
