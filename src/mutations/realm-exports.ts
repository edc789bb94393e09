/**
 * Realm exports requested through the API, as the reference: POST /export/realm records a request
 * (status requested) that a job then runs (started, then succeeded or failed), and an
 * administrator can delete a finished export. Every change tells the realm's administrators with
 * a `realm_export` event carrying the whole list. Reference: views/realm_export.py,
 * actions/realm_export.py, lib/export.py get_realm_exports_serialized.
 */
import { JsonableError } from '../lib/errors.js';
import { Role } from '../lib/roles.js';
import type { RealmView } from '../queries/realm-view.js';
import { ExportStatus, EXPORT_FULL_WITH_CONSENT } from '../lib/realm-exports.js';
import { realmExportsOf } from '../queries/realm-exports.js';
import type { RealmExportRow } from '../storage/realm-exports.js';
import type { MutationContext } from './context.js';

/** Exports a realm may request in EXPORT_LIMIT_DAYS (the reference's EXPORT_LIMIT). */
export const EXPORT_LIMIT = 5;
const EXPORT_LIMIT_DAYS = 7;
/** Larger realms are exported by the operator (`manage export-realm`), as the reference. */
export const MAX_EXPORT_MESSAGES = 250_000;

/** The realm's active human administrators and owners: who hears of exports. */
function humanAdmins(realm: RealmView): number[] {
  return realm
    .activeUsers()
    .filter((u) => !u.is_bot && u.role <= Role.ADMINISTRATOR)
    .map((u) => u.id);
}

function notify(ctx: MutationContext, realmUrl: string): void {
  ctx.emit(
    { type: 'realm_export', exports: realmExportsOf(ctx.store, ctx.realm.id, realmUrl) },
    humanAdmins(ctx.realm),
  );
}

function consents(realm: RealmView, userId: number): boolean {
  return realm.userSettings(userId).allow_private_data_export === true;
}

export type CreateRealmExportCommand = {
  acting_user_id: number;
  export_type: number;
  /** UNIX seconds with a fraction. */
  time: number;
  realm_url: string;
};

/** export_realm: refuses over the rate limit, too large realms, and unusable consent exports. */
export function checkCreateRealmExport(
  ctx: MutationContext,
  cmd: CreateRealmExportCommand,
): CreateRealmExportCommand {
  const { store, realm } = ctx;
  const since = cmd.time - EXPORT_LIMIT_DAYS * 24 * 3600;
  if (store.realmExports.countSince(realm.id, since) >= EXPORT_LIMIT) {
    throw new JsonableError('Exceeded rate limit.');
  }
  if (store.realmExports.messageCount(realm.id) > MAX_EXPORT_MESSAGES) {
    throw new JsonableError(
      "Please request a manual export from this server's administrator (npm run manage -- export-realm).",
    );
  }
  if (cmd.export_type === EXPORT_FULL_WITH_CONSENT) {
    const ownerConsents = realm
      .activeUsers()
      .some((u) => u.role === Role.OWNER && !u.is_bot && consents(realm, u.id));
    if (!ownerConsents) {
      throw new JsonableError(
        "Make sure at least one Organization Owner is consenting to the export or contact this server's administrator for help.",
      );
    }
  }
  return cmd;
}

/** Records the (checked) export request; administrators learn the new list. */
export function doCreateRealmExport(
  ctx: MutationContext,
  cmd: CreateRealmExportCommand,
): { id: number } {
  const { store, realm } = ctx;
  const id = store.realmExports.insert(realm.id, cmd.acting_user_id, cmd.export_type, cmd.time);
  notify(ctx, cmd.realm_url);
  return { id };
}

export type UpdateRealmExportCommand =
  | { id: number; status: 'started'; time: number; realm_url: string }
  | {
      id: number;
      status: 'succeeded';
      time: number;
      realm_url: string;
      export_path: string;
      size: number;
    }
  | { id: number; status: 'failed'; time: number; realm_url: string };

/**
 * The export job's progress (src/admin/export-jobs.ts). Only an export still requested or started
 * changes: one failed meanwhile (on a cluster, given up by its realm's owner because its node
 * seemed gone: src/cluster/export-runs.ts) never succeeds after all.
 */
export function checkUpdateRealmExport(
  ctx: MutationContext,
  cmd: UpdateRealmExportCommand,
): UpdateRealmExportCommand {
  const row = ctx.store.realmExports.byId(cmd.id);
  if (!row || row.realm_id !== ctx.realm.id) throw new JsonableError('Invalid data export ID');
  if (row.status !== ExportStatus.REQUESTED && row.status !== ExportStatus.STARTED)
    throw new JsonableError('Export no longer in progress');
  return cmd;
}

export function doUpdateRealmExport(
  ctx: MutationContext,
  cmd: UpdateRealmExportCommand,
): Record<string, never> {
  const { store } = ctx;
  if (cmd.status === 'started') store.realmExports.setStarted(cmd.id, cmd.time);
  else if (cmd.status === 'succeeded')
    store.realmExports.setSucceeded(cmd.id, cmd.time, cmd.export_path, cmd.size);
  else store.realmExports.setFailed(cmd.id, cmd.time);
  notify(ctx, cmd.realm_url);
  return {};
}

/** delete_realm_export: only finished exports; answers the archive's path for removal. */
type DeleteRealmExportCommand = { id: number; time: number; realm_url: string };

export function checkDeleteRealmExport(
  ctx: MutationContext,
  cmd: DeleteRealmExportCommand,
): { row: RealmExportRow; cmd: DeleteRealmExportCommand } {
  const { store, realm } = ctx;
  const row = store.realmExports.byId(cmd.id);
  if (!row || row.realm_id !== realm.id) throw new JsonableError('Invalid data export ID');
  if (row.status === ExportStatus.DELETED) throw new JsonableError('Export already deleted');
  if (row.status === ExportStatus.FAILED)
    throw new JsonableError('Export failed, nothing to delete');
  if (row.status === ExportStatus.REQUESTED || row.status === ExportStatus.STARTED)
    throw new JsonableError('Export still in progress');
  return { row, cmd };
}

/** Marks a finished export deleted; the caller removes its file. */
export function doDeleteRealmExport(
  ctx: MutationContext,
  { row, cmd }: { row: RealmExportRow; cmd: DeleteRealmExportCommand },
): { export_path: string | null } {
  ctx.store.realmExports.setDeleted(row.id, cmd.time);
  notify(ctx, cmd.realm_url);
  return { export_path: row.export_path };
}
