/**
 * A Unicode emoji's text from its code: a module of its own, small, for the glyphs of the first
 * load (statuses in the sidebar); the rest of the emoji code (state/emoji.ts, which re-exports
 * this) loads with the pieces that use it. docs/web.md, "Budgets".
 */

/** The text of a Unicode emoji code (`1f44d` → 👍); '' for a malformed code. */
export function emojiText(code: string): string {
  if (!/^[0-9a-f]{2,6}(-[0-9a-f]{2,6})*$/i.test(code)) return '';
  try {
    return String.fromCodePoint(...code.split('-').map((h) => parseInt(h, 16)));
  } catch {
    return '';
  }
}
