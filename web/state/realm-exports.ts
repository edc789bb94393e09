/**
 * The Data exports panel (web/app/data-exports.tsx), for administrators: the realm's exports as
 * GET /export/realm lists them and each `realm_export` event gives them again (the whole list), as
 * rows — who asked, when, what kind, and its state: running, failed, deleted, or ready with its
 * download link. Only a finished export can be deleted (the server's rule, as the reference's).
 */

/** One export, as the API gives it (RealmExport in the reference's OpenAPI description). */
export type RealmExport = {
  id: number;
  /** When it was asked for (UNIX seconds). */
  export_time: number;
  acting_user_id: number | null;
  export_url: string | null;
  deleted_timestamp: number | null;
  failed_timestamp: number | null;
  pending: boolean;
  export_type: number;
};

export const EXPORT_PUBLIC = 1;
export const EXPORT_FULL_WITH_CONSENT = 2;

export type ExportState = 'pending' | 'failed' | 'deleted' | 'ready';

export function exportState(e: RealmExport): ExportState {
  if (e.deleted_timestamp !== null) return 'deleted';
  if (e.failed_timestamp !== null) return 'failed';
  if (e.pending || e.export_url === null) return 'pending';
  return 'ready';
}

/** The state in words, as the panel's Status column says it. */
export const STATE_TEXT: Readonly<Record<ExportState, string>> = {
  pending: 'Running…',
  failed: 'Failed',
  deleted: 'Deleted',
  ready: 'Ready',
};

export function exportKind(type: number): string {
  return type === EXPORT_FULL_WITH_CONSENT
    ? 'Public data and consenting users’ private data'
    : 'Public data';
}

export type ExportRow = {
  e: RealmExport;
  by: string;
  kind: string;
  state: ExportState;
  /** Finished and not deleted: the server deletes only those (a failed one has no archive). */
  deletable: boolean;
};

/** The rows, newest first. */
export function exportRows(
  list: readonly RealmExport[],
  name: (id: number) => string,
): ExportRow[] {
  return [...list]
    .sort((a, b) => b.export_time - a.export_time || b.id - a.id)
    .map((e) => {
      const state = exportState(e);
      return {
        e,
        by: e.acting_user_id === null ? 'Unknown' : name(e.acting_user_id),
        kind: exportKind(e.export_type),
        state,
        deletable: state === 'ready',
      };
    });
}
