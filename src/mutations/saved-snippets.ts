/**
 * Saved snippets: reusable message texts a user keeps for themself. Reference:
 * views/saved_snippets.py, actions/saved_snippets.py. Every change sends a `saved_snippets` event
 * to the owner only.
 */
import { JsonableError } from '../lib/errors.js';
import { formatSavedSnippet } from '../queries/saved-snippets.js';
import type { SavedSnippetRow } from '../storage/saved-snippets.js';
import type { MutationContext } from './context.js';

/** 404, with the generic code, as the reference's ResourceNotFoundError. */
export class SavedSnippetDoesNotExistError extends JsonableError {
  constructor() {
    super('Saved snippet does not exist.', { status: 404 });
  }
}

export type CreateSavedSnippetCommand = { user_id: number; title: string; content: string };

export function doCreateSavedSnippet(
  ctx: MutationContext,
  cmd: CreateSavedSnippetCommand,
): { saved_snippet_id: number } {
  const id = ctx.store.savedSnippets.insert(
    ctx.realm.id,
    cmd.user_id,
    cmd.title,
    cmd.content,
    ctx.now,
  );
  const row = ctx.store.savedSnippets.byId(cmd.user_id, id)!;
  ctx.emit({ type: 'saved_snippets', op: 'add', saved_snippet: formatSavedSnippet(row) }, [
    cmd.user_id,
  ]);
  return { saved_snippet_id: id };
}

export type EditSavedSnippetCommand = {
  user_id: number;
  saved_snippet_id: number;
  title?: string | undefined;
  content?: string | undefined;
};

/** The snippet as it will be after the edit (it must be the user's). */
export function checkEditSavedSnippet(
  ctx: MutationContext,
  cmd: EditSavedSnippetCommand,
): SavedSnippetRow {
  const row = ctx.store.savedSnippets.byId(cmd.user_id, cmd.saved_snippet_id);
  if (!row) throw new SavedSnippetDoesNotExistError();
  return { ...row, title: cmd.title ?? row.title, content: cmd.content ?? row.content };
}

export function doEditSavedSnippet(
  ctx: MutationContext,
  next: SavedSnippetRow,
): Record<string, never> {
  ctx.store.savedSnippets.update(next.id, next.title, next.content);
  ctx.emit({ type: 'saved_snippets', op: 'update', saved_snippet: formatSavedSnippet(next) }, [
    next.user_id,
  ]);
  return {};
}

export type DeleteSavedSnippetCommand = { user_id: number; saved_snippet_id: number };

export function checkDeleteSavedSnippet(
  ctx: MutationContext,
  cmd: DeleteSavedSnippetCommand,
): DeleteSavedSnippetCommand {
  if (!ctx.store.savedSnippets.byId(cmd.user_id, cmd.saved_snippet_id))
    throw new SavedSnippetDoesNotExistError();
  return cmd;
}

export function doDeleteSavedSnippet(
  ctx: MutationContext,
  cmd: DeleteSavedSnippetCommand,
): Record<string, never> {
  ctx.store.savedSnippets.remove(cmd.user_id, cmd.saved_snippet_id);
  ctx.emit({ type: 'saved_snippets', op: 'remove', saved_snippet_id: cmd.saved_snippet_id }, [
    cmd.user_id,
  ]);
  return {};
}
