/**
 * Alert words as the renderer needs them: every active user's words in a realm, cached per realm
 * until an alert-word mutation commits (its change counter joins the render context's version).
 * Deactivated users' words are left out, as the reference's alert_words_in_realm; a user's
 * (de)activation already changes the realm view's version, so the cache follows it.
 */
import type { RenderAlertWord } from '../lib/markdown/context.js';
import type { ReadStore } from '../storage/store.js';
import type { RealmView } from './realm-view.js';

/** A user's alert words, in the order added. */
export function userAlertWords(store: ReadStore, userId: number): string[] {
  return store.alertWords.byUser(userId);
}

type Cached = { stamp: number; version: number; list: readonly RenderAlertWord[] };

const cache = new WeakMap<RealmView, Cached>();
const stamps = new Map<number, number>();

/** Call after an alert-word change commits (the realm actor's afterCommit). */
export function noteAlertWordsChanged(realmId: number): void {
  stamps.set(realmId, (stamps.get(realmId) ?? 0) + 1);
}

export function alertWordStamp(realmId: number): number {
  return stamps.get(realmId) ?? 0;
}

export function alertWordsOf(store: ReadStore, view: RealmView): readonly RenderAlertWord[] {
  const stamp = alertWordStamp(view.id);
  const hit = cache.get(view);
  if (hit && hit.stamp === stamp && hit.version === view.version) return hit.list;
  const fresh: RenderAlertWord[] = [];
  for (const row of store.alertWords.byRealm(view.id)) {
    if (view.user(row.user_id)?.is_active) fresh.push({ user_id: row.user_id, word: row.word });
  }
  // The same array while the words are the same: the renderer builds its matcher once per array.
  const list = hit && sameWords(hit.list, fresh) ? hit.list : fresh;
  cache.set(view, { stamp, version: view.version, list });
  return list;
}

function sameWords(a: readonly RenderAlertWord[], b: readonly RenderAlertWord[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++)
    if (a[i]!.user_id !== b[i]!.user_id || a[i]!.word !== b[i]!.word) return false;
  return true;
}
