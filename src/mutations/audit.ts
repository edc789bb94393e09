/**
 * Writing the audit log (src/lib/audit.ts says what goes in it): a row in the transaction of the
 * action it records, and a log line once that transaction has committed, so the log and the table
 * agree (a refused or rolled-back action leaves neither).
 */
import { originColumns, type AuditEntry, type AuditOrigin } from '../lib/audit.js';
import { log } from '../observability/log.js';
import type { NewAuditRow } from '../storage/audit.js';
import type { Store } from '../storage/store.js';

/** The row for an entry of `realmId` (null: the whole server) at `now` (UNIX seconds). */
export function auditRow(
  realmId: number | null,
  now: number,
  origin: AuditOrigin | undefined,
  entry: Pick<AuditEntry, 'event_type'> & Partial<AuditEntry>,
): NewAuditRow {
  return {
    realm_id: realmId,
    event_time: now,
    event_type: entry.event_type,
    // The admin tool acts as the realm's owner where a mutation wants an acting user: it is the
    // tool that acted (os_user says who ran it).
    acting_user_id:
      origin?.via === 'admin_tool'
        ? null
        : (entry.acting_user_id ?? (origin?.via === 'api' ? origin.user_id : null)),
    modified_user_id: entry.modified_user_id ?? null,
    modified_channel_id: entry.modified_channel_id ?? null,
    modified_group_id: entry.modified_group_id ?? null,
    ...originColumns(origin),
    extra: JSON.stringify(entry.extra ?? {}),
  };
}

/** The log line of a row written (after its transaction committed). */
export function logAudit(row: NewAuditRow): void {
  const { extra, ...rest } = row;
  log.info({ audit: { ...rest, extra: JSON.parse(extra) as unknown } }, `audit: ${row.event_type}`);
}

/** Writes a row outside a realm actor (the admin tool's actions on the whole server) and logs it. */
export function recordAudit(store: Store, row: NewAuditRow): void {
  store.transaction(() => store.audit.insert(row));
  logAudit(row);
}
