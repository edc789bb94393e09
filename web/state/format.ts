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
