/**
 * A realm's custom emoji as the API shows them (GET /realm/emoji, register `realm_emoji`,
 * `realm_emoji` events): an object keyed by emoji id, deactivated emoji included. Cached per
 * realm until a custom-emoji mutation commits. Reference: models/realm_emoji.py.
 */
import type { RealmEmojiRow } from '../storage/realm-emoji.js';
import type { ReadStore } from '../storage/store.js';
import type { RealmView } from './realm-view.js';

export type ApiRealmEmoji = {
  id: string;
  name: string;
  source_url: string;
  still_url: string | null;
  deactivated: boolean;
  author_id: number | null;
};

type Cached = { stamp: number; rows: readonly RealmEmojiRow[] };
const cache = new WeakMap<RealmView, Cached>();
const stamps = new Map<number, number>();

/** Call after a custom emoji change commits (the realm actor's afterCommit). */
export function noteRealmEmojiChanged(realmId: number): void {
  stamps.set(realmId, (stamps.get(realmId) ?? 0) + 1);
}

export function realmEmojiStamp(realmId: number): number {
  return stamps.get(realmId) ?? 0;
}

/** The realm's custom emoji rows (deactivated included), by id. */
export function realmEmojiRows(store: ReadStore, view: RealmView): readonly RealmEmojiRow[] {
  const stamp = realmEmojiStamp(view.id);
  const hit = cache.get(view);
  if (hit && hit.stamp === stamp) return hit.rows;
  const rows = store.realmEmoji.byRealm(view.id);
  cache.set(view, { stamp, rows });
  return rows;
}

/** Where an emoji's image is served, relative to the realm's URL. */
export function emojiSourceUrl(realmId: number, fileName: string): string {
  return `/user_avatars/${realmId}/emoji/images/${fileName}`;
}

export function formatRealmEmoji(r: RealmEmojiRow): ApiRealmEmoji {
  return {
    id: String(r.id),
    name: r.name,
    source_url: emojiSourceUrl(r.realm_id, r.file_name),
    still_url: null,
    deactivated: r.deactivated === 1,
    author_id: r.author_id,
  };
}

/** `{ [id]: emoji }` from rows (a mutation passes the rows it just wrote). */
export function realmEmojiDict(rows: readonly RealmEmojiRow[]): Record<string, ApiRealmEmoji> {
  const out: Record<string, ApiRealmEmoji> = {};
  for (const r of rows) out[String(r.id)] = formatRealmEmoji(r);
  return out;
}

/** The active emoji of this name, if any. */
export function activeRealmEmoji(
  store: ReadStore,
  view: RealmView,
  name: string,
): RealmEmojiRow | undefined {
  return realmEmojiRows(store, view).find((r) => r.name === name && r.deactivated === 0);
}
