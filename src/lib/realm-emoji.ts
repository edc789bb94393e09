/**
 * Custom emoji names, as the reference checks them (lib/emoji.py check_valid_emoji_name;
 * views/realm_emoji.py): spaces become underscores; then lowercase letters, digits, `-` and `_`,
 * ending with a letter or digit.
 */
import { JsonableError } from './errors.js';

/** Largest custom emoji image, in MiB (the reference's MAX_EMOJI_FILE_SIZE_MIB). */
export const MAX_EMOJI_FILE_SIZE_MIB = 5;

export function normalizeEmojiName(raw: string): string {
  return raw.trim().replaceAll(' ', '_');
}

export function checkEmojiName(name: string): void {
  if (name === '') throw new JsonableError('Emoji name is missing');
  if (/^[0-9a-z\-_]+$/.test(name)) {
    if (/[-_]$/.test(name)) {
      throw new JsonableError('Emoji names must end with either a letter or digit.');
    }
    return;
  }
  throw new JsonableError(
    'Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.',
  );
}
