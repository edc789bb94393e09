/**
 * Unicode emoji names and codes (table in ./data.ts). Pure; used by the renderer for `:name:` and
 * Unicode emoji, and by reactions to validate `emoji_name` ↔ `emoji_code` for `unicode_emoji`.
 */
import crypto from 'node:crypto';
import { EMOJI_TABLE } from './data.js';

export type EmojiEntry = { code: string; name: string; aliases: readonly string[] };

const byName = new Map<string, string>();
const byCode = new Map<string, EmojiEntry>();

for (const line of EMOJI_TABLE.split('\n')) {
  const parts = line.trim().split(/\s+/);
  if (parts.length < 2) continue;
  const [code, name, ...aliases] = parts as [string, string, ...string[]];
  byCode.set(code, { code, name, aliases });
  byName.set(name, code);
  for (const a of aliases) byName.set(a, code);
}

/** The emoji code (`1f642`, `1f937-200d-2640`) of a name or alias, if it is one. */
export function emojiCodeForName(name: string): string | undefined {
  return byName.get(name);
}

/** The canonical name of an emoji code, if the code is known. */
export function emojiNameForCode(code: string): string | undefined {
  return byCode.get(code)?.name;
}

export function emojiEntry(code: string): EmojiEntry | undefined {
  return byCode.get(code);
}

/** Every name (canonical and aliases) → code. */
export function allEmojiNames(): ReadonlyMap<string, string> {
  return byName;
}

/**
 * The emoji code of a Unicode string: its codepoints in lower-case hex, at least 4 digits each,
 * joined by `-`, with variation selectors (U+FE0F) removed, as the reference's codes are.
 */
export function emojiCodeOf(text: string): string {
  const out: string[] = [];
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp === 0xfe0f) continue;
    out.push(cp.toString(16).padStart(4, '0'));
  }
  return out.join('-');
}

/** The Unicode text of an emoji code (`1f642` → 🙂). Throws on a malformed code. */
export function emojiTextOf(code: string): string {
  return String.fromCodePoint(...code.split('-').map((h) => parseInt(h, 16)));
}

/**
 * The server's emoji data file (register's `server_emoji_data_url`): `{"code_to_names": {code:
 * [canonical name, ...aliases]}}` for every Unicode emoji this server accepts, as the reference
 * serves it. Built once; `hash` names the file, so its URL changes when the table does.
 */
export type EmojiDataFile = { json: string; hash: string };

let dataFile: EmojiDataFile | undefined;

export function emojiDataFile(): EmojiDataFile {
  if (!dataFile) {
    const codeToNames: Record<string, string[]> = {};
    for (const e of byCode.values()) codeToNames[e.code] = [e.name, ...e.aliases];
    const json = JSON.stringify({ code_to_names: codeToNames });
    dataFile = { json, hash: crypto.createHash('sha256').update(json).digest('hex').slice(0, 16) };
  }
  return dataFile;
}

/** Where the emoji data file is served, under a realm's URL. */
export function emojiDataPath(): string {
  return `/static/generated/emoji/emoji_api.${emojiDataFile().hash}.json`;
}
