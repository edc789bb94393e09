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
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { exportsRoot, removeExportFile } from '../admin/export-jobs.js';
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
import { EXPORT_FULL_WITH_CONSENT, EXPORT_PUBLIC, ExportStatus } from '../lib/realm-exports.js';
import { realmExportsOf } from '../queries/realm-exports.js';
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
    server.exports.start(realm, id, p.export_type);
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
    if (r.export_path !== null) removeExportFile(server.config.dataDir, r.export_path);
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

const SECRET = /^[A-Za-z0-9_-]{16,64}$/;
const ARCHIVE_NAME = /^confab-export-[a-z0-9-]+-\d+\.tar\.gz$/;

/** GET /user_avatars/exports/{realm_id}/{secret}/{file}: a finished, not deleted, export. */
export const downloadRealmExport = endpoint({
  method: 'GET',
  path: '/user_avatars/exports/:realm_id/:secret/:file',
  auth: 'none',
  params: z.object({ realm_id: str(), secret: str(), file: str() }),
  handle: async ({ server }, p) => {
    if (!/^\d{1,15}$/.test(p.realm_id) || !SECRET.test(p.secret) || !ARCHIVE_NAME.test(p.file))
      throw new ResourceNotFoundError();
    const rel = `${p.realm_id}/${p.secret}/${p.file}`;
    const row = server.store.realmExports
      .byRealm(Number(p.realm_id))
      .find((r) => r.export_path === rel && r.status === ExportStatus.SUCCEEDED);
    if (!row) throw new ResourceNotFoundError();
    let file;
    try {
      file = await fs.open(
        path.join(exportsRoot(server.config.dataDir), p.realm_id, p.secret, p.file),
      );
    } catch {
      throw new ResourceNotFoundError();
    }
    const { size } = await file.stat();
    return new FileBody(file, size, 'application/gzip', {
      'Content-Disposition': `attachment; filename="${p.file}"`,
      'Cache-Control': 'private, no-store',
    });
  },
});
