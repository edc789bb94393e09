/**
 * Uploaded organization icons (src/endpoints/realm-icon.ts): the names the server gives them, and
 * the one a realm's stored settings name.
 */

/** An uploaded icon's file name: `icon-<16 hex>.png`, a new one at each upload. */
export const REALM_ICON_FILE_NAME = /^icon-[0-9a-f]{16}\.png$/;

/**
 * The uploaded icon a realm's stored settings (the `realms.settings` JSON) name: its `icon_file`
 * while `icon_source` is 'U'; null when the realm has the default icon (or the settings cannot be
 * read, or name no well-formed file).
 */
export function uploadedIconFileIn(settings: unknown): string | null {
  let s: { icon_source?: unknown; icon_file?: unknown };
  try {
    s = JSON.parse(typeof settings === 'string' ? settings : '{}') as typeof s;
  } catch {
    return null;
  }
  if (s === null || typeof s !== 'object') return null;
  return s.icon_source === 'U' &&
    typeof s.icon_file === 'string' &&
    REALM_ICON_FILE_NAME.test(s.icon_file)
    ? s.icon_file
    : null;
}
