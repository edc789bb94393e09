/**
 * Realm exports as the API shows them (GET /export/realm, `realm_export` events): export types,
 * statuses, the download URL and the JSON of one export. Shared by the endpoints, the queries and
 * the mutations.
 */

/** An export's status (the reference's RealmExport.status). */
export const ExportStatus = {
  REQUESTED: 1,
  STARTED: 2,
  SUCCEEDED: 3,
  FAILED: 4,
  DELETED: 5,
} as const;

export const EXPORT_PUBLIC = 1;
export const EXPORT_FULL_WITH_CONSENT = 2;

/** The fields of a stored export (src/storage/realm-exports.ts RealmExportRow) shown by the API. */
type ExportRowFields = {
  id: number;
  acting_user_id: number | null;
  export_type: number;
  status: number;
  date_requested: number;
  date_failed: number | null;
  date_deleted: number | null;
  export_path: string | null;
};
/** The API's shape of one export (RealmExport in the reference's OpenAPI description). */
export type RealmExportJson = {
  id: number;
  export_time: number;
  acting_user_id: number | null;
  export_url: string | null;
  deleted_timestamp: number | null;
  failed_timestamp: number | null;
  pending: boolean;
  export_type: number;
};

/** The download URL of a finished export: `<realm url>/user_avatars/exports/<path>`. */
export function exportUrl(realmUrl: string, exportPath: string): string {
  return `${realmUrl}/user_avatars/exports/${exportPath.split('/').map(encodeURIComponent).join('/')}`;
}

export function serializeExport(row: ExportRowFields, realmUrl: string): RealmExportJson {
  return {
    id: row.id,
    export_time: row.date_requested,
    acting_user_id: row.acting_user_id,
    export_url:
      row.status === ExportStatus.SUCCEEDED && row.export_path !== null
        ? exportUrl(realmUrl, row.export_path)
        : null,
    deleted_timestamp: row.date_deleted,
    failed_timestamp: row.date_failed,
    pending: row.status === ExportStatus.REQUESTED || row.status === ExportStatus.STARTED,
    export_type: row.export_type,
  };
}
