/** Drafts as the API shows them (the Draft object of the spec's Resources table). */
import type { DraftRow, DraftType } from '../storage/drafts.js';
import type { ReadStore } from '../storage/store.js';

export type ApiDraft = {
  id: number;
  type: DraftType;
  to: number[];
  topic: string;
  content: string;
  timestamp: number;
};

export function formatDraft(d: DraftRow): ApiDraft {
  const to =
    d.type === 'stream'
      ? [d.stream_id!]
      : d.type === 'private' && d.user_ids !== ''
        ? d.user_ids.split(',').map(Number)
        : [];
  return {
    id: d.id,
    type: d.type,
    to,
    topic: d.topic,
    content: d.content,
    timestamp: Math.trunc(d.last_edit_time),
  };
}

/** A user's drafts, least recently edited first. */
export function draftsOf(store: ReadStore, userId: number): ApiDraft[] {
  return store.drafts.byUser(userId).map(formatDraft);
}

/** How many drafts register returns (the most recently edited). */
export const MAX_DRAFTS_IN_REGISTER_RESPONSE = 1000;
