/**
 * Editing messages and reading their edit history: PATCH /messages/{message_id},
 * GET /messages/{message_id}/history. Reference: views/message_edit.py (update_message_backend,
 * get_message_edit_history, fill_edit_history_entries).
 *
 * The new content, and the notices a move may send, are normalized and rendered here (inline when
 * short, in a worker otherwise), before the realm actor checks permissions and writes; the
 * history's HTML diffs are computed in the worker pool.
 */
import { z } from 'zod';
import { endpoint, type AuthedCtx } from '../http/endpoint.js';
import { canonicalTopic, EMPTY_TOPIC_DISPLAY_NAME } from '../lib/channel-rules.js';
import { JsonableError, StaleNoticesError } from '../lib/errors.js';
import { normalizeContent, normalizeTopic, preparedContent } from '../lib/message-content.js';
import { PROPAGATE_MODES } from '../lib/message-edit.js';
import { moveFactsKey, moveNoticeText, type PreparedNotices } from '../lib/notices.js';
import { bool, int, oneOf, ownNulRule, pathInt, str } from '../lib/params.js';
import { accessMessage } from '../queries/messages.js';
import { moveNoticesFor, type MoveNoticeRequest } from '../queries/move-notices.js';
import { renderContextFor, renderOptionsFor } from '../queries/render-context.js';

/** How many times an edit is prepared again when its notices went stale in between. */
const NOTICE_ATTEMPTS = 3;

/** PATCH /api/v1/messages/{message_id} — edit content, move to a topic and/or channel. */
export const updateMessage = endpoint({
  method: 'PATCH',
  path: '/api/v1/messages/:message_id',
  aliases: { subject: 'topic' },
  params: z.object({
    message_id: pathInt(),
    topic: ownNulRule(str()).optional(), // normalizeTopic
    propagate_mode: oneOf(PROPAGATE_MODES).default('change_one'),
    send_notification_to_old_thread: bool().default(false),
    send_notification_to_new_thread: bool().default(true),
    content: ownNulRule(str()).optional(), // normalizeContent
    prev_content_sha256: str().optional(),
    stream_id: int().optional(),
  }),
  handle: async (ctx, p) => {
    const { server, realm, user } = ctx;
    const context = renderContextFor(server.config, server.store, realm.view);
    let content;
    if (p.content !== undefined) {
      // An edit to nothing leaves "(deleted)", as the reference's.
      const text = p.content.trim() === '' ? '(deleted)' : normalizeContent(p.content);
      const r = await server.renderer.render(
        text,
        context,
        renderOptionsFor(server.store, realm.view, user.id, text),
      );
      content = preparedContent(text, r);
    }
    let topic: string | undefined;
    let topicUntruncated: string | undefined;
    if (p.topic !== undefined) {
      topic = normalizeTopic(p.topic);
      topicUntruncated = canonicalTopic(p.topic);
      if (topicUntruncated === '(no topic)') topicUntruncated = '';
    }
    const command = {
      acting_user_id: user.id,
      message_id: p.message_id,
      topic,
      topic_untruncated: topicUntruncated,
      stream_id: p.stream_id,
      propagate_mode: p.propagate_mode,
      send_notification_to_old_thread: p.send_notification_to_old_thread,
      send_notification_to_new_thread: p.send_notification_to_new_thread,
      content,
      prev_content_sha256: p.prev_content_sha256,
    };
    for (let attempt = 1; ; attempt++) {
      const notices = await prepareNotices(ctx, {
        message_id: p.message_id,
        topic,
        topic_untruncated: topicUntruncated,
        stream_id: p.stream_id,
        content_edited: content !== undefined,
        send_notification_to_new_thread: p.send_notification_to_new_thread,
        send_notification_to_old_thread: p.send_notification_to_old_thread,
      });
      try {
        const r = await realm.ask('message.update', { ...command, notices });
        return { detached_uploads: r.detached_uploads };
      } catch (err) {
        if (!(err instanceof StaleNoticesError) || attempt >= NOTICE_ATTEMPTS) throw err;
      }
    }
  },
});

/**
 * The notification bot's notices the edit may send, rendered now, before the realm actor runs
 * the edit (src/lib/notices.ts); undefined when it sends none.
 */
async function prepareNotices(
  { server, realm, user }: AuthedCtx,
  req: MoveNoticeRequest,
): Promise<PreparedNotices | undefined> {
  const plan = moveNoticesFor(server.store, realm.view, user.id, req);
  if (!plan) return undefined;
  const context = renderContextFor(server.config, server.store, realm.view);
  const texts = plan.kinds.map((kind) => moveNoticeText(context.realm_url, kind, plan.facts));
  const rendered = await server.renderer.renderBatch(
    texts.map((content) => ({ content })),
    context,
  );
  const notices: PreparedNotices['notices'] = {};
  plan.kinds.forEach((kind, i) => (notices[kind] = preparedContent(texts[i]!, rendered[i]!)));
  return { facts_key: moveFactsKey(plan.facts), notices };
}

type HistoryEntry = {
  user_id: number | null;
  timestamp: number;
  topic?: string;
  prev_topic?: string;
  stream?: number;
  prev_stream?: number;
  content?: string;
  rendered_content?: string;
  prev_content?: string;
  prev_rendered_content?: string;
  prev_rendered_content_version?: number;
  content_html_diff?: string;
};

/**
 * GET /api/v1/messages/{message_id}/history — every version of a message, oldest first. With
 * the realm's edit history visibility at `moves`, only moves are listed (content edits are
 * folded away); at `none`, the history is refused.
 */
export const getMessageHistory = endpoint({
  method: 'GET',
  path: '/api/v1/messages/:message_id/history',
  params: z.object({
    message_id: pathInt(),
    allow_empty_topic_name: bool().default(false),
  }),
  handle: async ({ server, realm, user }, p) => {
    const view = realm.view;
    const policy = view.settings.message_edit_history_visibility_policy;
    if (policy === 'none') {
      throw new JsonableError('Message edit history is disabled in this organization');
    }
    const { row } = accessMessage(server.store, view, user.id, p.message_id, false);
    let entries = (row.edit_history ? JSON.parse(row.edit_history) : []) as HistoryEntry[];
    const movesOnly = policy === 'moves';
    let content = row.content;
    let rendered = row.rendered_content;
    let topic = row.topic;
    let stream = row.stream_id;
    const diffs: [number, string, string][] = [];
    entries = entries.map((e, i) => {
      const out: HistoryEntry = { ...e, topic };
      if (e.prev_topic !== undefined) topic = e.prev_topic;
      if (e.prev_stream !== undefined) {
        out.stream = stream ?? e.stream!;
        stream = e.prev_stream;
      }
      delete out.prev_rendered_content_version;
      if (movesOnly) {
        delete out.prev_content;
        delete out.prev_rendered_content;
        return out;
      }
      out.content = content;
      out.rendered_content = rendered;
      if (e.prev_content !== undefined) {
        content = e.prev_content;
        rendered = e.prev_rendered_content ?? '';
        diffs.push([i, rendered, out.rendered_content]);
      }
      return out;
    });
    if (movesOnly) {
      entries = entries.filter((e) => e.prev_topic !== undefined || e.prev_stream !== undefined);
    }
    const htmlDiffs = await server.renderer.diffHtml(diffs.map(([, a, b]) => [a, b] as const));
    diffs.forEach(([i], k) => (entries[i]!.content_html_diff = htmlDiffs[k]!));
    entries.push({
      topic,
      content,
      rendered_content: rendered,
      timestamp: row.date_sent,
      user_id: row.sender_id,
    });
    if (row.stream_id !== null && !p.allow_empty_topic_name) {
      for (const e of entries) {
        if (e.topic === '') e.topic = EMPTY_TOPIC_DISPLAY_NAME;
        if (e.prev_topic === '') e.prev_topic = EMPTY_TOPIC_DISPLAY_NAME;
      }
    }
    return { message_history: entries.reverse() };
  },
});
