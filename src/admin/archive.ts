/**
 * The realm export archive (docs/operations.md "Moving a realm"): a gzipped tar with
 *
 *   export.json          ExportManifest below
 *   tables/<table>.json  a JSON array of the table's rows (column → value, as stored), one file
 *                        per table of src/storage/realm-dump.ts REALM_TABLES
 *   uploads/<path_id>    each exported upload, at the path id its `attachments` row names
 *   emoji/<file_name>    each custom emoji image of the realm
 *   realm_icon/<file>    the realm's uploaded icon, when it has one (the file its settings'
 *                        icon_file names)
 */
import type { ExportFiles } from '../storage/upload-files.js';
import type { ExportMode } from './export-filter.js';

export const ARCHIVE_FORMAT = 'confab-realm-export';

export type ExportManifest = {
  format: typeof ARCHIVE_FORMAT;
  version: 1;
  exported_at: string;
  confab_version: string;
  /** The exporting server's schema version (PRAGMA user_version). */
  schema_version: number;
  mode: ExportMode;
  /**
   * Whether users' password hashes and API keys are in `tables/users.json` (absent in archives
   * made before they could be: false).
   */
  credentials?: boolean;
  /** The realm as it was on the exporting server. */
  realm: { id: number; string_id: string; name: string };
  /** Rows per table. */
  counts: Record<string, number>;
  /** Files whose rows are in the archive but which were gone from disk. */
  missing_files: string[];
};

/** What the export worker is asked to do. */
export type ExportJob = {
  dataDir: string;
  realmId: number;
  mode: string;
  file: string;
  /** Keep users' password hashes and API keys (the admin tool's exports only). */
  credentials?: boolean;
  /**
   * Whether the worker, having read the realm, names the files it is about to copy and waits
   * until they are gathered (a cluster node fetches those it lacks: ./realm-export.ts).
   */
  gather?: boolean;
};

/** The export worker's messages to the thread that started it. */
export type ExportWorkerMessage =
  | ({ type: 'gather' } & ExportFiles)
  | { type: 'done'; summary: ExportSummary }
  | { type: 'failed'; error: string };

/** The answer to a `gather` message. */
export type GatherAnswer = { ok: true } | { ok: false; error: string };

export type ExportSummary = {
  file: string;
  size: number;
  sha256: string;
  mode: ExportMode;
  credentials: boolean;
  counts: Record<string, number>;
};
