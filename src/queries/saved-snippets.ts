/** Saved snippets as the API shows them (the SavedSnippet object). */
import type { SavedSnippetRow } from '../storage/presence.js';

export type ApiSavedSnippet = { id: number; title: string; content: string; date_created: number };

export function formatSavedSnippet(r: SavedSnippetRow): ApiSavedSnippet {
  return { id: r.id, title: r.title, content: r.content, date_created: r.date_created };
}
