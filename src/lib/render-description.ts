/**
 * Rendering channel and user-group descriptions (markdown source → HTML).
 *
 * Interim: the markdown renderer is being built on the `render` branch. Until it lands, this
 * renders a description as one escaped paragraph (no markup), which is safe HTML and what the
 * reference renders for plain text. Every caller goes through this one function, so switching to
 * the real renderer is a change here only.
 */
import { escapeHtml } from './html.js';

export function renderDescription(markdown: string): string {
  const text = markdown.trim();
  if (text === '') return '';
  return `<p>${escapeHtml(text)}</p>`;
}
