/**
 * Realm exports: the admin tool's `export-realm` and the API's asynchronous exports
 * (src/endpoints/realm-export.ts) both run the export worker (./export-worker.ts) and get an
 * archive (./archive.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ServerConfig } from '../config.js';
import type { Store } from '../storage/store.js';
import type { ExportJob, ExportSummary } from './archive.js';
import { UsageError } from './errors.js';
import type { ExportMode } from './export-filter.js';

/** Runs one export on a worker thread; resolves with the archive's summary. */
export function runExportWorker(job: ExportJob): Promise<ExportSummary> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./export-worker.js', import.meta.url), {
      workerData: job,
      // None of the main thread's flags (see Checkpointer).
      execArgv: [],
    });
    let settled = false;
    worker.once(
      'message',
      (m: { ok: true; summary: ExportSummary } | { ok: false; error: string }) => {
        settled = true;
        if (m.ok) resolve(m.summary);
        else reject(new Error(m.error));
      },
    );
    worker.once('error', (err) => {
      settled = true;
      reject(err);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`the export worker exited (${code}) without an answer`));
    });
  });
}

/** `manage export-realm`: the archive at `file` (which must not exist). */
export async function exportRealmToFile(
  store: Store,
  config: Pick<ServerConfig, 'dataDir'>,
  realmId: number,
  file: string,
  opts: { publicOnly: boolean },
): Promise<ExportSummary> {
  if (!store.realms.byId(realmId)) throw new UsageError(`no realm ${realmId}`);
  const target = path.resolve(file);
  if (fs.existsSync(target)) throw new UsageError(`${target} already exists`);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const mode: ExportMode = opts.publicOnly ? 'public' : 'full';
  return runExportWorker({ dataDir: config.dataDir, realmId, mode, file: target });
}
