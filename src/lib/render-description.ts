/**
 * Rendering descriptions (channels, channel folders, the realm) from markdown to HTML, as the
 * reference's render_stream_description / get_realm_rendered_description do: the message
 * renderer without image previews. Pure; src/queries/render-context.ts supplies the realm's
 * context and the acting user's linkable channels (renderDescription there).
 */
import { renderMarkdown, type RenderContext, type RenderOptions } from './markdown/index.js';

export function renderDescriptionHtml(
  markdown: string,
  context: RenderContext,
  opts: Pick<RenderOptions, 'linkable_channel_ids'>,
): string {
  if (markdown.trim() === '') return '';
  return renderMarkdown(markdown, context, { ...opts, no_previews: true }).rendered_content;
}
