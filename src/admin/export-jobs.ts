/**
 * Running the exports requested through the API (POST /export/realm), one at a time, each on the
 * export worker thread (./realm-export.ts), reporting progress through the realm's actor
 * (`realm_export.update`, which tells the administrators). Archives go to
 * DATA_DIR/exports/<realm id>/<secret>/<file>, served at that path under /user_avatars/exports/.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { RealmRuntime } from '../../actors/registry.js';
import type { ServerConfig } from '../config.js';
import { realmUrl } from '../lib/urls.js';
import { EXPORT_FULL_WITH_CONSENT } from '../lib/realm-exports.js';
import { log } from '../observability/log.js';
import { runExportWorker } from './realm-export.js';

export function exportsRoot(dataDir: string): string {
  return path.join(dataDir, 'exports');
}

export class RealmExportJobs {
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly config: ServerConfig) {}

  /** Queues export `id` of `realm`; its progress reaches the administrators as events. */
  start(realm: RealmRuntime, id: number, exportType: number): void {
    this.chain = this.chain.then(() => this.run(realm, id, exportType));
  }

  private async run(realm: RealmRuntime, id: number, exportType: number): Promise<void> {
    if (this.closed) return;
    const stringId = realm.view.row.string_id;
    const url = realmUrl(this.config, stringId);
    const secret = crypto.randomBytes(18).toString('base64url');
    const name = `confab-export-${stringId === '' ? 'root' : stringId}-${id}.tar.gz`;
    const rel = `${realm.id}/${secret}/${name}`;
    const file = path.join(exportsRoot(this.config.dataDir), ...rel.split('/'));
    try {
      await realm.ask('realm_export.update', {
        id,
        status: 'started',
        time: this.config.clock() / 1000,
        realm_url: url,
      });
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      const summary = await runExportWorker({
        dataDir: this.config.dataDir,
        realmId: realm.id,
        mode: exportType === EXPORT_FULL_WITH_CONSENT ? 'consented' : 'public',
        file,
      });
      await realm.ask('realm_export.update', {
        id,
        status: 'succeeded',
        time: this.config.clock() / 1000,
        realm_url: url,
        export_path: rel,
        size: summary.size,
      });
    } catch (err) {
      log.error({ err, realmId: realm.id, exportId: id }, 'realm export failed');
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
      try {
        await realm.ask('realm_export.update', {
          id,
          status: 'failed',
          time: this.config.clock() / 1000,
          realm_url: url,
        });
      } catch (err2) {
        log.error({ err: err2, exportId: id }, 'marking a realm export failed did not work');
      }
    }
  }

  /** Resolves once every export asked for so far has finished (tests wait for quiet). */
  async idle(): Promise<void> {
    let seen: Promise<void>;
    do {
      seen = this.chain;
      await seen;
    } while (seen !== this.chain);
  }

  /** Waits for the export under way (shutdown); later ones are not started. */
  async close(): Promise<void> {
    this.closed = true;
    await this.chain;
  }
}

/** Removes a deleted export's archive (and its secret directory). */
export function removeExportFile(dataDir: string, exportPath: string): void {
  const parts = exportPath.split('/');
  if (parts.length !== 3 || parts.some((p) => p === '' || p === '.' || p === '..')) return;
  fs.rmSync(path.join(exportsRoot(dataDir), parts[0]!, parts[1]!), {
    recursive: true,
    force: true,
  });
}
