/**
 * The audit rows of the admin tool's actions that are no realm command (backups, restores, exports,
 * imports, messages the tool sends). Loaded by the commands that write them when they run (the
 * tool's --help and its requests to a running server load no store: src/manage.ts).
 */
import { nowSeconds } from '../lib/now.js';
import { auditExtra, type AuditOrigin, type OTHER_AUDIT_TYPES } from '../lib/audit.js';
import { auditRow, recordAudit } from '../mutations/audit.js';
import { isClusterCopy } from '../storage/replication.js';
import { Store } from '../storage/store.js';
import type { AdminRuntime } from './commands.js';

/**
 * An audit row for an action of the tool that is no realm command: of a realm, or (realm null) of
 * the whole server. Not on a cluster node's copy, which only the cluster's log writes (the action
 * is in the server's log there).
 */
export function recordToolAction(
  rt: AdminRuntime,
  realmId: number | null,
  eventType: (typeof OTHER_AUDIT_TYPES)[number],
  args: Record<string, unknown>,
): void {
  if (rt.realms.clustered || isClusterCopy(rt.store.db)) return;
  recordAudit(
    rt.store,
    auditRow(realmId, nowSeconds(rt.config), rt.origin, {
      event_type: eventType,
      extra: auditExtra(args),
    }),
  );
}

/** After `restore` filled the data directory: the restored database records it. */
export function recordRestore(
  dataDir: string,
  from: string,
  origin: AuditOrigin | undefined,
): void {
  const store = Store.open(dataDir, { backgroundCheckpoint: false });
  try {
    if (isClusterCopy(store.db)) return;
    recordAudit(
      store,
      auditRow(null, Math.floor(Date.now() / 1000), origin, {
        event_type: 'data_restored',
        extra: { from },
      }),
    );
  } finally {
    store.close();
  }
}
