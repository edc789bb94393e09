/**
 * Sizes in words, as the reference's web app writes them (`B`, `KB`, `MB`, `GB`, `TB`): a whole
 * number from 10 up, one decimal below (`1.5 KB`, `12 MB`). In 1024s throughout: the server sets
 * its limits in MiB (the upload limit, the organization's quota), so a 25 MiB limit reads "25 MB",
 * and a file's size, the user's total and the quota used read alike in one panel. (The reference
 * counts a file's size in thousands but its quota in 1024s, which writes the same bytes two ways
 * side by side.)
 */
const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'] as const;

export function sizeText(n: number): string {
  let u = 0;
  let v = Math.max(0, n);
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  if (u === 0) return `${Math.round(v)} B`;
  let shown = v < 10 ? Math.round(v * 10) / 10 : Math.round(v);
  // 1023.6 KB rounds to the next unit's 1, not to "1024 KB".
  if (shown >= 1024 && u < UNITS.length - 1) {
    shown = 1;
    u++;
  }
  return `${shown} ${UNITS[u]}`;
}

/**
 * A slash command (`/poll`, `/todo`, any `/…` but `/me`), which the server makes into what it
 * shows (a widget): not echoed locally, as the reference's echo.is_slash_command.
 */
export function isSlashCommand(text: string): boolean {
  return text.startsWith('/') && !text.startsWith('/me');
}

/** A me-message (`/me waves`): the server's is_me_message, which it reads from the raw text. */
export function isMeMessage(text: string): boolean {
  return text.startsWith('/me ');
}

const ME_START = '<p>/me ';

/**
 * A me-message's action, drawn on its sender's name's line, as the reference's
 * message_list_view (_maybe_get_me_message) makes it: the rendered content without its leading
 * `<p>/me ` and its first `</p>`, so that the first line runs on from the name and any later
 * paragraph follows. Null when the content does not start so (it is drawn as any message then).
 */
export function meAction(html: string): string | null {
  if (!html.startsWith(ME_START)) return null;
  const end = html.indexOf('</p>');
  if (end < 0) return null;
  return html.slice(ME_START.length, end) + html.slice(end + '</p>'.length);
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A local echo's look before the server renders the message: the text, paragraph by paragraph. */
export function plainHtml(text: string): string {
  return text
    .split(/\n{2,}/)
    .map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`)
    .join('');
}
