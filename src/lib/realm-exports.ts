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

// ---- archive paths: `<realm id>/<secret>/<file>` under DATA_DIR/exports ------------------------

const EXPORT_SECRET = /^[A-Za-z0-9_-]{16,64}$/;
const EXPORT_ARCHIVE_NAME = /^confab-export-[a-z0-9-]+-\d+\.tar\.gz$/;

/**
 * Whether `realmId`, `secret` and `file` are the parts of an archive path the server makes
 * (src/admin/export-jobs.ts): what the download URL may name.
 */
export function isExportDownloadPath(realmId: string, secret: string, file: string): boolean {
  return /^\d{1,15}$/.test(realmId) && EXPORT_SECRET.test(secret) && EXPORT_ARCHIVE_NAME.test(file);
}

/**
 * The directory part (`<realm id>/<secret>`) of an archive path: its own directory, unique to the
 * export. Null for a path not of three plain segments (nothing outside DATA_DIR/exports is named).
 */
export function exportDirOf(exportPath: string): string | null {
  const parts = exportPath.split('/');
  if (parts.length !== 3 || parts.some((p) => p === '' || p === '.' || p === '..')) return null;
  return `${parts[0]!}/${parts[1]!}`;
}

/**
 * Of the export directories a node holds (`<realm id>/<secret>`), those to remove: every one that
 * is neither an export under way on the node (`running`) nor the directory of a succeeded
 * export's archive (`rows`, the exports of the realms the directories name). What is left of a
 * deleted or failed export, or of an export whose process stopped halfway.
 */
export function staleExportDirs(
  found: readonly string[],
  rows: readonly { status: number; export_path: string | null }[],
  running: ReadonlySet<string>,
): string[] {
  const keep = new Set<string>(running);
  for (const r of rows) {
    if (r.status !== ExportStatus.SUCCEEDED || r.export_path === null) continue;
    const dir = exportDirOf(r.export_path);
    if (dir !== null) keep.add(dir);
  }
  return found.filter((d) => !keep.has(d));
}
