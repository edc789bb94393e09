/**
 * renderMarkdown(content, context, options) → RenderResult: message markdown to the reference's
 * HTML, plus what the message layer needs (mentions, links, images, uploads, alert words).
 * Pure and synchronous; runs inline on the main thread or in a worker (workers/render.worker.ts).
 */
import { alertWordUsers } from './alert-words.js';
import type { RenderContext, RenderOptions, RenderResult } from './context.js';
import { renderBlocks } from './blocks.js';
import type { InlineState } from './inline-pattern.js';
import { prepareContext, type PreparedContext, type RenderState } from './prepare.js';
import { addLinkPreviews } from './previews.js';
import { El, fixBreaks, prettify, serializeChildren } from './tree.js';

export type * from './context.js';
export { EMPTY_CONTEXT } from './context.js';
export { prepareContext, type PreparedContext } from './prepare.js';
export { topicLinks, validateLinkifier, LinkifierError, type TopicLink } from './linkifiers.js';
export { possibleChannelNames, possibleTopicLinks } from './inline-mentions.js';

const preparedCache = new WeakMap<RenderContext, PreparedContext>();

/** The prepared form of a context, computed once per context object. */
export function prepared(ctx: RenderContext | PreparedContext): PreparedContext {
  if ('usersById' in ctx) return ctx;
  let p = preparedCache.get(ctx);
  if (!p) {
    p = prepareContext(ctx);
    preparedCache.set(ctx, p);
  }
  return p;
}

export function renderMarkdown(
  content: string,
  context: RenderContext | PreparedContext,
  opts: RenderOptions = {},
): RenderResult {
  const ctx = prepared(context);
  const out: RenderState = {
    mentionsUserIds: new Set(),
    mentionsGroupIds: new Set(),
    mentionsStreamWildcard: false,
    mentionsTopicWildcard: false,
  };
  const linkable = opts.linkable_channel_ids ? new Set(opts.linkable_channel_ids) : null;
  const state: InlineState = { ctx, opts, linkable, out, inBlockquote: false, stash: [] };
  const root = new El('div');
  // STX and ETX delimit the renderer's own placeholders; user text never holds them.
  // eslint-disable-next-line no-control-regex
  renderBlocks(content.replace(/[\u0002\u0003]/g, '\ufffd'), root, state, false);
  for (const c of root.children) prettify(c);
  fixBreaks(root);
  const links = addLinkPreviews(root, ctx, opts);
  const html = serializeChildren(root);
  return {
    rendered_content: html,
    mentions_user_ids: [...out.mentionsUserIds].sort((a, b) => a - b),
    mentions_user_group_ids: [...out.mentionsGroupIds].sort((a, b) => a - b),
    mentions_stream_wildcard: out.mentionsStreamWildcard,
    mentions_topic_wildcard: out.mentionsTopicWildcard,
    has_link: links.hasLink,
    has_image: links.hasImage,
    has_attachment: links.pathIds.length > 0,
    potential_attachment_path_ids: links.pathIds,
    user_ids_with_alert_words: alertWordUsers(content, ctx.alertWords),
    is_me_message: content.startsWith('/me '),
  };
}
