/**
 * Drafts. Reference: views/drafts.py (fetch_drafts, create_drafts, edit_draft, delete_draft) and
 * lib/drafts.py. Every draft endpoint first needs the caller's `enable_drafts_synchronization`
 * setting (before the draft parameters are even looked at, as the reference's decorator order);
 * the realm actor checks it again when it applies the change.
 */
import { z } from 'zod';
import { endpoint, type AuthedCtx } from '../http/endpoint.js';
import { DraftsDisabledError, MAX_TIMESTAMP } from '../lib/drafts.js';
import { RequestVariableMissingError } from '../lib/errors.js';
import {
  compileParams,
  decodeParams,
  intValue,
  json,
  ownNulRule,
  pathInt,
  str,
} from '../lib/params.js';
import { draftsOf } from '../queries/drafts.js';

/** "x field is missing" for an absent key, else the type's own message. */
const missingOr =
  (message: string) =>
  (iss: { input?: unknown }): string =>
    iss.input === undefined ? '{var} field is missing' : message;

/** The Draft object a client sends: exactly these keys (`id` is refused), `timestamp` optional. */
const draftObject = z.strictObject(
  {
    type: z.enum(['', 'stream', 'private'], { error: missingOr('Invalid {var}') }),
    to: z.array(intValue(), { error: missingOr('{var} is not a list') }),
    // Their own rules refuse a NUL with the reference's words (lib/drafts.ts, mutations/drafts.ts).
    topic: ownNulRule(z.string({ error: missingOr('{var} is not a string') })),
    content: ownNulRule(
      z.string({ error: missingOr('{var} is not a string') }).pipe(str({ trim: true, min: 1 })),
    ),
    timestamp: z
      .number({ error: 'Invalid {var}' })
      .max(MAX_TIMESTAMP, { error: 'Invalid {var}' })
      .nullable()
      .optional(),
  },
  {
    error: (iss) =>
      iss.code === 'unrecognized_keys'
        ? `Argument "${iss.keys[0] ?? ''}" at {var}[${JSON.stringify(iss.keys[0] ?? '')}] is unexpected`
        : '{var} is not a dict',
  },
);

const draftsParam = compileParams(
  z.object({ drafts: json(z.array(draftObject, { error: '{var} is not a list' })) }),
);
const draftParam = compileParams(z.object({ draft: json(draftObject) }));

function requireSync({ realm, user }: AuthedCtx): void {
  if (!realm.view.userSettings(user.id).enable_drafts_synchronization)
    throw new DraftsDisabledError();
}

/** GET /api/v1/drafts — least recently edited first, as the reference lists them. */
export const getDrafts = endpoint({
  method: 'GET',
  path: '/api/v1/drafts',
  params: z.object({}),
  handle: (ctx) => {
    requireSync(ctx);
    const drafts = draftsOf(ctx.server.store, ctx.user.id);
    return { count: drafts.length, drafts };
  },
});

/** POST /api/v1/drafts — `drafts`: a JSON list of Draft objects; answers their ids, in order. */
export const createDrafts = endpoint({
  method: 'POST',
  path: '/api/v1/drafts',
  // Optional here so that the synchronization check comes first; missing is refused below.
  params: z.object({ drafts: ownNulRule(z.string()).optional() }), // decoded below
  handle: async (ctx, p) => {
    requireSync(ctx);
    if (p.drafts === undefined) throw new RequestVariableMissingError('drafts');
    const { drafts } = decodeParams(draftsParam, { drafts: p.drafts }).params;
    return ctx.realm.ask('draft.create', {
      user_id: ctx.user.id,
      drafts: drafts,
    });
  },
});

/** PATCH /api/v1/drafts/{draft_id} — `draft`: the replacement Draft object. */
export const editDraft = endpoint({
  method: 'PATCH',
  path: '/api/v1/drafts/:draft_id',
  params: z.object({ draft_id: pathInt(), draft: ownNulRule(z.string()).optional() }), // below
  handle: async (ctx, p) => {
    requireSync(ctx);
    if (p.draft === undefined) throw new RequestVariableMissingError('draft');
    const { draft } = decodeParams(draftParam, { draft: p.draft }).params;
    return ctx.realm.ask('draft.edit', {
      user_id: ctx.user.id,
      draft_id: p.draft_id,
      draft: draft,
    });
  },
});

/** DELETE /api/v1/drafts/{draft_id} */
export const deleteDraft = endpoint({
  method: 'DELETE',
  path: '/api/v1/drafts/:draft_id',
  params: z.object({ draft_id: pathInt() }),
  handle: async (ctx, p) => {
    requireSync(ctx);
    return ctx.realm.ask('draft.delete', { user_id: ctx.user.id, draft_id: p.draft_id });
  },
});
