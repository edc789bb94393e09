/** Reads of realm exports (GET /export/realm, the `realm_export` events' list). */
import { serializeExport, type RealmExportJson } from '../lib/realm-exports.js';
import type { ReadStore } from '../storage/store.js';

/** Every export of the realm, as the API shows them. */
export function realmExportsOf(
  store: Pick<ReadStore, 'realmExports'>,
  realmId: number,
  realmUrl: string,
): RealmExportJson[] {
  return store.realmExports.byRealm(realmId).map((r) => serializeExport(r, realmUrl));
}
