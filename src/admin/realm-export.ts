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
import type { ExportFiles } from '../storage/upload-files.js';
import type { ExportJob, ExportSummary, ExportWorkerMessage, GatherAnswer } from './archive.js';
import { makeOutputDir } from './data-dir.js';
import { UsageError } from './errors.js';
import type { ExportMode } from './export-filter.js';

/** Makes present the files an export is about to copy: UploadFiles.gatherForExport. */
export type GatherFiles = (files: ExportFiles) => Promise<void>;

/**
 * Runs one export on a worker thread; resolves with the archive's summary. With `gather`, the
 * worker, having read the realm, waits for it to make the files it names present (a cluster node
 * fetches those it lacks); a failure of `gather` fails the export. Once `signal` is aborted (the
 * run's time limit, src/admin/export-jobs.ts) the worker is terminated and the promise rejects
 * with the signal's reason.
 */
export function runExportWorker(
  job: ExportJob,
  gather?: GatherFiles,
  signal?: AbortSignal,
): Promise<ExportSummary> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const worker = new Worker(new URL('./export-worker.js', import.meta.url), {
      workerData: { ...job, gather: gather !== undefined },
      // None of the main thread's flags (see Checkpointer).
      execArgv: [],
    });
    let settled = false;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      reject(signal!.reason as Error);
      void worker.terminate();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.once('exit', () => signal?.removeEventListener('abort', onAbort));
    worker.on('message', (m: ExportWorkerMessage) => {
      if (m.type === 'gather') {
        const answer = (a: GatherAnswer) => worker.postMessage(a);
        const gathered = gather
          ? gather({ uploads: m.uploads, emoji: m.emoji, realm_icons: m.realm_icons })
          : Promise.resolve();
        gathered.then(
          () => answer({ ok: true }),
          (err: unknown) =>
            answer({
              ok: false,
              error: `gathering its files: ${err instanceof Error ? err.message : String(err)}`,
            }),
        );
        return;
      }
      if (settled) return;
      settled = true;
      if (m.type === 'done') resolve(m.summary);
      else reject(new Error(m.error));
    });
    worker.once('error', (err) => {
      if (settled) return;
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
  opts: { publicOnly: boolean; credentials: boolean },
): Promise<ExportSummary> {
  if (!store.realms.byId(realmId)) throw new UsageError(`no realm ${realmId}`);
  const target = path.resolve(file);
  if (fs.existsSync(target)) throw new UsageError(`${target} already exists`);
  makeOutputDir(path.dirname(target), 'the archive’s directory');
  const mode: ExportMode = opts.publicOnly ? 'public' : 'full';
  return runExportWorker({
    dataDir: config.dataDir,
    realmId,
    mode,
    file: target,
    credentials: opts.credentials,
  });
}
