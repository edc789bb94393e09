/**
 * Saved snippets. Reference: views/saved_snippets.py. Title at most 60 characters (code points),
 * content at most a message's length; both are trimmed first (the reference's strip_whitespace
 * comes before its max_length) and must not be empty.
 */
import { z } from 'zod';
import { endpoint, type AuthedCtx } from '../http/endpoint.js';
import { JsonableError } from '../lib/errors.js';
import { MAX_MESSAGE_LENGTH } from '../lib/limits.js';
import { pathInt, str } from '../lib/params.js';
import { savedSnippetsOf } from '../queries/saved-snippets.js';

/** The reference's SavedSnippet.MAX_TITLE_LENGTH. */
export const MAX_SNIPPET_TITLE_LENGTH = 60;

const title = () => str({ trim: true, max: MAX_SNIPPET_TITLE_LENGTH });
const content = () => str({ trim: true, max: MAX_MESSAGE_LENGTH });

/** A title as decoded (trimmed): refused when nothing is left. */
function checkTitle(t: string): string {
  if (t === '') throw new JsonableError('Title cannot be empty.');
  return t;
}

/** Content as decoded (trimmed): refused when nothing is left. */
function checkContent(c: string): string {
  if (c === '') throw new JsonableError('Content cannot be empty.');
  return c;
}

/** GET /api/v1/saved_snippets — the caller's snippets, oldest first. */
export const getSavedSnippets = endpoint({
  method: 'GET',
  path: '/api/v1/saved_snippets',
  params: z.object({}),
  handle: ({ server, user }: AuthedCtx) => ({
    saved_snippets: savedSnippetsOf(server.store, user.id),
  }),
});

/** POST /api/v1/saved_snippets */
export const createSavedSnippet = endpoint({
  method: 'POST',
  path: '/api/v1/saved_snippets',
  params: z.object({ title: title(), content: content() }),
  handle: async ({ realm, user }: AuthedCtx, p) =>
    realm.ask('saved_snippet.create', {
      user_id: user.id,
      title: checkTitle(p.title),
      content: checkContent(p.content),
    }),
});

/** PATCH /api/v1/saved_snippets/{saved_snippet_id} — a new title, new content, or both. */
export const editSavedSnippet = endpoint({
  method: 'PATCH',
  path: '/api/v1/saved_snippets/:saved_snippet_id',
  params: z.object({
    saved_snippet_id: pathInt(),
    title: title().optional(),
    content: content().optional(),
  }),
  handle: async ({ realm, user }: AuthedCtx, p) => {
    if (p.title === undefined && p.content === undefined)
      throw new JsonableError('No new data is supplied');
    return realm.ask('saved_snippet.edit', {
      user_id: user.id,
      saved_snippet_id: p.saved_snippet_id,
      title: p.title === undefined ? undefined : checkTitle(p.title),
      content: p.content === undefined ? undefined : checkContent(p.content),
    });
  },
});

/** DELETE /api/v1/saved_snippets/{saved_snippet_id} */
export const deleteSavedSnippet = endpoint({
  method: 'DELETE',
  path: '/api/v1/saved_snippets/:saved_snippet_id',
  params: z.object({ saved_snippet_id: pathInt() }),
  handle: async ({ realm, user }: AuthedCtx, p) =>
    realm.ask('saved_snippet.delete', { user_id: user.id, saved_snippet_id: p.saved_snippet_id }),
});
