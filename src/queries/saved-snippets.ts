/** Saved snippets as the API shows them (the SavedSnippet object). */
import type { SavedSnippetRow } from '../storage/presence.js';
import type { ReadStore } from '../storage/store.js';

export type ApiSavedSnippet = { id: number; title: string; content: string; date_created: number };

export function formatSavedSnippet(r: SavedSnippetRow): ApiSavedSnippet {
  return { id: r.id, title: r.title, content: r.content, date_created: r.date_created };
}

/** A user's saved snippets, oldest first. */
export function savedSnippetsOf(store: ReadStore, userId: number): ApiSavedSnippet[] {
  return store.savedSnippets.byUser(userId).map(formatSavedSnippet);
}
