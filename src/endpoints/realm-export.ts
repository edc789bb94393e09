/**
 * Realm exports through the API, for administrators. Reference: views/realm_export.py.
 *
 *   POST   /api/v1/export/realm              start an export (asynchronous): {id}
 *   GET    /api/v1/export/realm              every export of the realm: {exports}
 *   DELETE /api/v1/export/realm/{export_id}  delete a finished export's archive
 *   GET    /api/v1/export/realm/consents     who allows their private data to be exported
 *   GET    /user_avatars/exports/{realm_id}/{secret}/{file}
 *                                            the archive (the secret path is the key, as the
 *                                            reference's export URLs)
 *
 * Each change reaches the administrators as a `realm_export` event. The archive format is
 * described in docs/operations.md "Realm export and import".
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { FileBody } from '../http/respond.js';
import {
  JsonableError,
  OrganizationAdministratorRequiredError,
  ResourceNotFoundError,
} from '../lib/errors.js';
import { int, pathInt, str } from '../lib/params.js';
import { Role } from '../lib/roles.js';
import { realmUrl } from '../lib/urls.js';
import {
  EXPORT_FULL_WITH_CONSENT,
  EXPORT_PUBLIC,
  ExportStatus,
  isExportDownloadPath,
} from '../lib/realm-exports.js';
import { realmExportsOf } from '../queries/realm-exports.js';
import type { ServerContext } from '../context.js';
import type { UserRow } from '../storage/users.js';

function requireAdmin(user: UserRow): void {
  if (user.role > Role.ADMINISTRATOR) throw new OrganizationAdministratorRequiredError();
}

/** POST /api/v1/export/realm */
export const createRealmExport = endpoint({
  method: 'POST',
  path: '/api/v1/export/realm',
  params: z.object({ export_type: int().default(EXPORT_PUBLIC) }),
  handle: async ({ server, realm, user }, p) => {
    requireAdmin(user);
    if (p.export_type !== EXPORT_PUBLIC && p.export_type !== EXPORT_FULL_WITH_CONSENT) {
      throw new JsonableError('Invalid export_type');
    }
    const { id } = await realm.ask('realm_export.create', {
      acting_user_id: user.id,
      export_type: p.export_type,
      time: server.config.clock() / 1000,
      realm_url: realmUrl(server.config, realm.view.row.string_id),
    });
    // A cluster node records itself as the export's runner first (src/cluster/export-runs.ts).
    await server.exports.start(realm, id, p.export_type);
    return { id };
  },
});

/** GET /api/v1/export/realm */
export const listRealmExports = endpoint({
  method: 'GET',
  path: '/api/v1/export/realm',
  params: z.object({}),
  handle: ({ server, realm, user }) => {
    requireAdmin(user);
    return {
      exports: realmExportsOf(
        server.store,
        realm.id,
        realmUrl(server.config, realm.view.row.string_id),
      ),
    };
  },
});

/** DELETE /api/v1/export/realm/{export_id} */
export const deleteRealmExport = endpoint({
  method: 'DELETE',
  path: '/api/v1/export/realm/:export_id',
  params: z.object({ export_id: pathInt() }),
  handle: async ({ server, realm, user }, p) => {
    requireAdmin(user);
    const r = await realm.ask('realm_export.delete', {
      id: p.export_id,
      time: server.config.clock() / 1000,
      realm_url: realmUrl(server.config, realm.view.row.string_id),
    });
    // A cluster node removes the bucket's archive too; other nodes' copies go as they apply
    // the deletion (src/admin/export-jobs.ts sweep).
    if (r.export_path !== null) await server.uploads.removeExport(r.export_path);
    return {};
  },
});

/** GET /api/v1/export/realm/consents */
export const realmExportConsents = endpoint({
  method: 'GET',
  path: '/api/v1/export/realm/consents',
  params: z.object({}),
  handle: ({ realm, user }) => {
    requireAdmin(user);
    return {
      export_consents: realm.view
        .activeUsers()
        .filter((u) => !u.is_bot)
        .map((u) => ({
          user_id: u.id,
          consented: realm.view.userSettings(u.id).allow_private_data_export === true,
        })),
    };
  },
});

/** Whether export `rel` of realm `realmId` is, now, a succeeded one. */
function succeeded(store: ServerContext['store'], realmId: number, rel: string): boolean {
  return store.realmExports
    .byRealm(realmId)
    .some((r) => r.export_path === rel && r.status === ExportStatus.SUCCEEDED);
}

/** GET /user_avatars/exports/{realm_id}/{secret}/{file}: a finished, not deleted, export. */
export const downloadRealmExport = endpoint({
  method: 'GET',
  path: '/user_avatars/exports/:realm_id/:secret/:file',
  auth: 'none',
  params: z.object({ realm_id: str(), secret: str(), file: str() }),
  handle: async ({ server }, p) => {
    if (!isExportDownloadPath(p.realm_id, p.secret, p.file)) throw new ResourceNotFoundError();
    const rel = `${p.realm_id}/${p.secret}/${p.file}`;
    const realmId = Number(p.realm_id);
    if (!succeeded(server.store, realmId, rel)) throw new ResourceNotFoundError();
    // A cluster node lacking the archive fetches it from the bucket first.
    const opened = await server.uploads.openExport(rel);
    if (!opened) throw new ResourceNotFoundError();
    if (!succeeded(server.store, realmId, rel)) {
      // Deleted while it was fetched: no copy stays behind.
      await opened.file.close();
      await server.uploads.removeLocalExport(rel);
      throw new ResourceNotFoundError();
    }
    return new FileBody(opened.file, opened.size, 'application/gzip', {
      'Content-Disposition': `attachment; filename="${p.file}"`,
      'Cache-Control': 'private, no-store',
    });
  },
});
