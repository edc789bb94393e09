/**
 * Drafts: create (a list), edit, delete, and deleting all of a user's drafts when they turn
 * synchronization off. Reference: lib/drafts.py (further_validated_draft_dict, do_create_drafts,
 * do_edit_draft, do_delete_draft, draft_endpoint). Every change sends a `drafts` event to the
 * owner only: a draft is nobody else's business.
 */
import { DraftsDisabledError, normalizeBody, truncateTopic } from '../lib/drafts.js';
import { InvalidChannelIdError, JsonableError } from '../lib/errors.js';
import { formatDraft, type ApiDraft } from '../queries/drafts.js';
import type { DraftType, DraftValues } from '../storage/drafts.js';
import type { MutationContext } from './context.js';

/** A draft as the client sends it (already checked for shape by the endpoint). */
export type DraftInput = {
  type: DraftType;
  to: number[];
  topic: string;
  content: string;
  timestamp?: number | null | undefined;
};

/** 404, but with the generic code, as the reference's ResourceNotFoundError. */
export class DraftDoesNotExistError extends JsonableError {
  constructor() {
    super('Draft does not exist', { status: 404 });
  }
}

/** The reference's draft_endpoint: every draft operation needs synchronization turned on. */
export function checkDraftsEnabled(ctx: Pick<MutationContext, 'realm'>, userId: number): void {
  if (!ctx.realm.userSettings(userId).enable_drafts_synchronization)
    throw new DraftsDisabledError();
}

/**
 * The stored form of a draft, after the reference's checks in its order: content, timestamp, then
 * the addressing. A channel draft needs exactly one channel the user can read (archived channels
 * and private channels they cannot see are "Invalid channel ID", as missing ones); a direct draft
 * needs users of the realm who are active. A direct draft without recipients, and an unaddressed
 * one, are stored unaddressed (type '', to [], no topic).
 */
function validatedDraft(ctx: MutationContext, userId: number, d: DraftInput): DraftValues {
  const { realm } = ctx;
  const content = normalizeBody(d.content);
  let timestamp = d.timestamp ?? ctx.now;
  timestamp = Math.round(timestamp * 1e6) / 1e6;
  if (timestamp < 0) throw new JsonableError('Timestamp must not be negative.');

  if (d.type === 'stream') {
    const topic = truncateTopic(d.topic);
    if (topic.includes('\0')) throw new JsonableError('Topic must not contain null bytes');
    if (d.to.length !== 1)
      throw new JsonableError('Must specify exactly 1 channel ID for channel messages');
    const ch = realm.channels.byId(d.to[0]!);
    if (!ch || ch.deactivated || !realm.channels.may(userId, ch, 'content'))
      throw new InvalidChannelIdError();
    return {
      type: 'stream',
      stream_id: ch.id,
      user_ids: '',
      topic,
      content,
      last_edit_time: timestamp,
    };
  }
  if (d.type === 'private' && d.to.length > 0) {
    const ids = [...new Set(d.to)].sort((a, b) => a - b);
    for (const id of ids) if (!realm.user(id)) throw new JsonableError(`Invalid user ID ${id}`);
    for (const id of ids) {
      const u = realm.user(id)!;
      if (!u.is_active) throw new JsonableError(`'${u.email}' is no longer using Zulip.`);
    }
    // The conversation is the recipients and the author; `to` names the others (or the author
    // alone, for a note to self).
    const others = ids.filter((id) => id !== userId);
    const to = others.length === 0 ? [userId] : others;
    return {
      type: 'private',
      stream_id: null,
      user_ids: to.join(','),
      topic: '',
      content,
      last_edit_time: timestamp,
    };
  }
  return { type: '', stream_id: null, user_ids: '', topic: '', content, last_edit_time: timestamp };
}

export type CreateDraftsCommand = { user_id: number; drafts: DraftInput[] };

/** The drafts' stored values (synchronization must be on; each draft valid). */
export function checkCreateDrafts(
  ctx: MutationContext,
  cmd: CreateDraftsCommand,
): { user_id: number; values: DraftValues[] } {
  checkDraftsEnabled(ctx, cmd.user_id);
  return {
    user_id: cmd.user_id,
    values: cmd.drafts.map((d) => validatedDraft(ctx, cmd.user_id, d)),
  };
}

export function doCreateDrafts(
  ctx: MutationContext,
  cmd: { user_id: number; values: DraftValues[] },
): { ids: number[] } {
  const { values } = cmd;
  const created: ApiDraft[] = [];
  for (const v of values) {
    const id = ctx.store.drafts.insert(cmd.user_id, v);
    created.push(formatDraft({ id, user_id: cmd.user_id, ...v }));
  }
  if (created.length > 0) ctx.emit({ type: 'drafts', op: 'add', drafts: created }, [cmd.user_id]);
  return { ids: created.map((d) => d.id) };
}

export type EditDraftCommand = { user_id: number; draft_id: number; draft: DraftInput };

type DraftEdit = { user_id: number; draft_id: number; values: DraftValues };

export function checkEditDraft(ctx: MutationContext, cmd: EditDraftCommand): DraftEdit {
  checkDraftsEnabled(ctx, cmd.user_id);
  if (!ctx.store.drafts.byId(cmd.user_id, cmd.draft_id)) throw new DraftDoesNotExistError();
  return {
    user_id: cmd.user_id,
    draft_id: cmd.draft_id,
    values: validatedDraft(ctx, cmd.user_id, cmd.draft),
  };
}

export function doEditDraft(ctx: MutationContext, cmd: DraftEdit): Record<string, never> {
  const v = cmd.values;
  ctx.store.drafts.update(cmd.draft_id, v);
  ctx.emit(
    {
      type: 'drafts',
      op: 'update',
      draft: formatDraft({ id: cmd.draft_id, user_id: cmd.user_id, ...v }),
    },
    [cmd.user_id],
  );
  return {};
}

export type DeleteDraftCommand = { user_id: number; draft_id: number };

export function checkDeleteDraft(
  ctx: MutationContext,
  cmd: DeleteDraftCommand,
): DeleteDraftCommand {
  checkDraftsEnabled(ctx, cmd.user_id);
  if (!ctx.store.drafts.byId(cmd.user_id, cmd.draft_id)) throw new DraftDoesNotExistError();
  return cmd;
}

export function doDeleteDraft(
  ctx: MutationContext,
  cmd: DeleteDraftCommand,
): Record<string, never> {
  ctx.store.drafts.remove(cmd.user_id, cmd.draft_id);
  ctx.emit({ type: 'drafts', op: 'remove', draft_id: cmd.draft_id }, [cmd.user_id]);
  return {};
}

/**
 * Deletes every draft a user has stored, without an event (their clients keep their local
 * copies). For the settings area: call it inside the mutation that turns
 * `enable_drafts_synchronization` off. Returns how many were deleted.
 */
export function deleteAllDrafts(ctx: Pick<MutationContext, 'store'>, userId: number): number {
  return ctx.store.drafts.removeAll(userId);
}
