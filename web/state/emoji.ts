/**
 * Emoji for the picker, autocomplete and reactions: the server's emoji data file
 * (`{"code_to_names": {code: [name, ...aliases]}}`, fetched when first needed) and the realm's
 * custom emoji; reactions grouped as they are shown (one chip per emoji, with who reacted).
 */
import type { Reaction, RealmEmoji } from '../../src/client/types.js';
import type { EmojiEntry } from './autocomplete.js';

/** Offered first in the picker, as the reference's "popular" row. */
export const POPULAR = ['+1', 'tada', 'big_smile', 'heart', 'working_on_it', 'eyes', 'octopus'];

// Its own module (emoji-text.ts), for the first load's glyphs (docs/web.md, "Budgets").
export { emojiText } from './emoji-text.js';

export type EmojiIndex = {
  /** Every name (aliases too) for autocomplete and search. */
  names: EmojiEntry[];
  /** One entry per emoji (its canonical name), in the data file's order, for the picker. */
  canonical: EmojiEntry[];
  byName: Map<string, EmojiEntry>;
};

export function buildEmojiIndex(
  codeToNames: Record<string, string[]>,
  realmEmoji: Record<string, RealmEmoji>,
): EmojiIndex {
  const names: EmojiEntry[] = [];
  const canonical: EmojiEntry[] = [];
  const byName = new Map<string, EmojiEntry>();
  for (const e of Object.values(realmEmoji)) {
    if (e.deactivated) continue;
    const entry: EmojiEntry = { name: e.name, code: e.id, kind: 'realm', url: e.source_url };
    names.push(entry);
    canonical.push(entry);
    byName.set(e.name, entry);
  }
  for (const [code, list] of Object.entries(codeToNames)) {
    list.forEach((name, i) => {
      if (byName.has(name)) return; // a custom emoji of the same name wins, as on the server
      const entry: EmojiEntry = { name, code, kind: 'unicode' };
      names.push(entry);
      byName.set(name, entry);
      if (i === 0) canonical.push(entry);
    });
  }
  const popular = POPULAR.map((n) => byName.get(n)).filter((e): e is EmojiEntry => e !== undefined);
  const rest = canonical.filter((e) => !POPULAR.includes(e.name));
  return { names, canonical: [...popular, ...rest], byName };
}

/**
 * Names matching a search: the emoji of that very name first (Enter in the picker takes it:
 * "heart" is ❤, not ♥ "hearts"), then those with a name starting with it, shorter names first,
 * then those with a name containing it; each emoji once, under the first name that matched.
 */
export function searchEmoji(index: EmojiIndex, query: string, limit = 400): EmojiEntry[] {
  const q = query.trim().toLowerCase().replace(/\s+/g, '_');
  if (q === '') return index.canonical.slice(0, limit);
  const exact = index.byName.get(q);
  const seen = new Set<string>(exact ? [`${exact.kind}:${exact.code}`] : []);
  const starts: EmojiEntry[] = [];
  const contains: EmojiEntry[] = [];
  for (const e of index.names) {
    const key = `${e.kind}:${e.code}`;
    if (seen.has(key)) continue;
    if (e.name.startsWith(q)) starts.push(e);
    else if (e.name.includes(q)) contains.push(e);
    else continue;
    seen.add(key);
  }
  // Stable: names of a length keep the data file's order.
  starts.sort((a, b) => a.name.length - b.name.length);
  return [...(exact ? [exact] : []), ...starts, ...contains].slice(0, limit);
}

export type ReactionChip = {
  key: string;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  count: number;
  userIds: number[];
  mine: boolean;
};

/** A message's reactions as chips: one per emoji, in the order each was first added. */
export function reactionChips(reactions: readonly Reaction[], selfId: number): ReactionChip[] {
  const chips = new Map<string, ReactionChip>();
  for (const r of reactions) {
    const key = `${r.reaction_type}:${r.emoji_code}`;
    let c = chips.get(key);
    if (!c) {
      c = {
        key,
        emoji_name: r.emoji_name,
        emoji_code: r.emoji_code,
        reaction_type: r.reaction_type,
        count: 0,
        userIds: [],
        mine: false,
      };
      chips.set(key, c);
    }
    c.count++;
    c.userIds.push(r.user_id);
    if (r.user_id === selfId) c.mine = true;
  }
  return [...chips.values()];
}
