/**
 * Running the exports requested through the API (POST /export/realm), one at a time, each on the
 * export worker thread (./realm-export.ts), reporting progress through the realm's actor
 * (`realm_export.update`, which tells the administrators). Archives go to
 * DATA_DIR/exports/<realm id>/<secret>/<file>, served at that path under /user_avatars/exports/,
 * through the server's UploadFiles: on a cluster node (src/cluster/uploads.ts) the files the
 * export copies are fetched first if the node lacks them, and the archive goes to the cluster's
 * bucket before the export is marked succeeded, so every node can serve it. A cluster node also
 * records itself as each export's runner (`ExportRunners`, src/cluster/export-runs.ts), so that
 * the realm's owner can fail the exports of a node that stopped (`failOrphaned`).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RealmRuntime } from '../../actors/registry.js';
import { DEFAULT_EXPORT_TIME_LIMIT_MS, type ServerConfig } from '../config.js';
import { realmUrl } from '../lib/urls.js';
import { JsonableError } from '../lib/errors.js';
import {
  EXPORT_FULL_WITH_CONSENT,
  ExportStatus,
  exportDirOf,
  staleExportDirs,
} from '../lib/realm-exports.js';
import { log } from '../observability/log.js';
import type { ReadStore } from '../storage/store.js';
import type { UploadFiles } from '../storage/upload-files.js';
import type { ExportSummary } from './archive.js';
import { runExportWorker } from './realm-export.js';

/** A realm export's run went past its time limit (ServerConfig.exportTimeLimitMs). */
export class ExportTimeLimitError extends Error {
  constructor(limitMs: number) {
    super(`the export did not finish within its time limit (${limitMs / 1000} s)`);
    this.name = 'ExportTimeLimitError';
  }
}

/**
 * A cluster node's record of the exports it runs (src/cluster/export-runs.ts); absent in a single
 * process, which fails the exports its previous process left unfinished at its start.
 */
export interface ExportRunners {
  /** Records this node as the export's runner: false when it must not run it. */
  claim(id: number): Promise<boolean>;
  /** The export succeeded or failed here. */
  finish(id: number): Promise<void>;
  /** The export will not run here (a graceful stop): the realm's owner fails it. */
  giveUp(id: number): Promise<void>;
}

export class RealmExportJobs {
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  /** The directories (`<realm id>/<secret>`) of the exports under way here. */
  private readonly running = new Set<string>();
  private sweeping: Promise<void> | null = null;
  private sweepAgain = false;

  constructor(
    private readonly config: ServerConfig,
    private readonly uploads: UploadFiles,
    private readonly store: Pick<ReadStore, 'realmExports'>,
    private readonly runners?: ExportRunners,
  ) {}

  /**
   * Queues export `id` of `realm`; its progress reaches the administrators as events. A cluster
   * node first records itself as its runner (resolving once it has); never rejects.
   */
  async start(realm: RealmRuntime, id: number, exportType: number): Promise<void> {
    if (this.runners) {
      const claimed = await this.runners.claim(id).catch((err: unknown) => {
        log.error({ err, exportId: id }, 'recording this node as a realm export’s runner failed');
        return false;
      });
      // Its realm's owner fails it (src/cluster/export-runs.ts).
      if (!claimed) return;
    }
    // A run that throws (its failure handling failed as well: the store closed under it, say)
    // must not reject the chain: the exports queued after it would never run, yet their runner
    // keys, which this process renews, would keep their realms' owners from failing them; and
    // `idle` and `close` would throw.
    this.chain = this.chain
      .then(() => this.run(realm, id, exportType))
      .catch((err: unknown) => log.error({ err, exportId: id }, 'a realm export’s run threw'));
  }

  private async run(realm: RealmRuntime, id: number, exportType: number): Promise<void> {
    if (this.closed) {
      await this.runners?.giveUp(id).catch((err: unknown) => {
        log.error({ err, exportId: id }, 'giving up a queued realm export failed');
      });
      return;
    }
    const stringId = realm.view.row.string_id;
    const url = realmUrl(this.config, stringId);
    const secret = crypto.randomBytes(18).toString('base64url');
    const name = `confab-export-${stringId === '' ? 'root' : stringId}-${id}.tar.gz`;
    const rel = `${realm.id}/${secret}/${name}`;
    const file = this.uploads.exportFilePath(rel)!;
    const dir = exportDirOf(rel)!;
    this.running.add(dir);
    // The run's time limit: a run that hangs (its worker never answering, a fetch from the
    // bucket or the archive's placement that never ends) is failed as one that threw, so its
    // runner key is given back (a cluster node would renew it for ever, and its export would
    // never be failed) and the exports queued after it run.
    const limitMs = this.config.exportTimeLimitMs ?? DEFAULT_EXPORT_TIME_LIMIT_MS;
    const deadline = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const overdue = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        const err = new ExportTimeLimitError(limitMs);
        deadline.abort(err);
        reject(err);
      }, limitMs);
    });
    const produced = this.produce(realm, id, exportType, url, rel, file, deadline.signal);
    try {
      // Past the race, the limit no longer applies: a success being recorded stays one.
      const summary = await Promise.race([produced, overdue]).finally(() => clearTimeout(timer));
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
      // Unless it did succeed (the answer lost): then its archive is served.
      if (!this.succeededAt(id, rel))
        await this.uploads.removeExport(rel).catch((err2: unknown) => {
          log.error({ err: err2, exportId: id }, 'removing a failed export’s archive failed');
        });
      try {
        await this.markFailed(realm, id);
      } catch (err2) {
        log.error({ err: err2, exportId: id }, 'marking a realm export failed did not work');
      }
    } finally {
      if (deadline.signal.aborted) {
        // What the abandoned run still does (an archive placement under way) is undone once
        // it ends; it places nothing after the limit (`produce`), and its worker is gone.
        void produced
          .catch(() => undefined)
          .then(() => this.uploads.removeExport(rel))
          .catch((err: unknown) => {
            log.error({ err, exportId: id }, 'removing an overdue export’s archive failed');
          });
      }
      this.running.delete(dir);
      await this.runners?.finish(id).catch((err: unknown) => {
        log.error({ err, exportId: id }, 'forgetting a finished realm export’s runner failed');
      });
    }
  }

  /**
   * Export `id` up to its archive kept (a cluster's bucket), before it is marked succeeded; each
   * step checks `signal` (the run's time limit) first, and the worker stops when it is aborted.
   */
  private async produce(
    realm: RealmRuntime,
    id: number,
    exportType: number,
    url: string,
    rel: string,
    file: string,
    signal: AbortSignal,
  ): Promise<ExportSummary> {
    await realm.ask('realm_export.update', {
      id,
      status: 'started',
      time: this.config.clock() / 1000,
      realm_url: url,
    });
    // Tests only (CONFAB_TEST_EXPORT_DELAY_MS): an export under way long enough to stop its node
    // (or, longer than the time limit, one that hangs).
    const delay = this.config.exportStartDelayMs ?? 0;
    if (delay > 0) await sleep(delay, undefined, { signal });
    signal.throwIfAborted();
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const summary = await runExportWorker(
      {
        dataDir: this.config.dataDir,
        realmId: realm.id,
        mode: exportType === EXPORT_FULL_WITH_CONSENT ? 'consented' : 'public',
        file,
      },
      (files) => this.uploads.gatherForExport(realm.id, files),
      signal,
    );
    signal.throwIfAborted();
    // Kept (a cluster's bucket) before any node can see it succeeded.
    await this.uploads.placeExport(rel);
    return summary;
  }

  /** Marks export `id` of `realm` failed, through the realm's actor. */
  private async markFailed(realm: RealmRuntime, id: number): Promise<void> {
    await realm.ask('realm_export.update', {
      id,
      status: 'failed',
      time: this.config.clock() / 1000,
      realm_url: realmUrl(this.config, realm.view.row.string_id),
    });
  }

  private succeededAt(id: number, rel: string): boolean {
    const row = this.store.realmExports.byId(id);
    return row?.status === ExportStatus.SUCCEEDED && row.export_path === rel;
  }

  /**
   * Marks failed export `id` of `realm`, which no node runs any more (on a cluster, its node is
   * gone: src/cluster/export-runs.ts), through the realm's actor; nothing when it has finished.
   */
  async failOrphaned(realm: RealmRuntime, id: number): Promise<void> {
    const row = this.store.realmExports.byId(id);
    if (row?.status !== ExportStatus.REQUESTED && row?.status !== ExportStatus.STARTED) return;
    try {
      await this.markFailed(realm, id);
    } catch (err) {
      // Finished meanwhile (it succeeded after all): nothing more to do.
      if (err instanceof JsonableError && err.httpStatus < 500) return;
      throw err;
    }
    log.warn({ realmId: realm.id, exportId: id }, 'realm export failed: its node is gone');
  }

  /**
   * Removes this node's export directories that no succeeded export names and no export under
   * way here uses: copies of archives since deleted (fetched by a cluster node to serve them),
   * and what a failed or interrupted export left. Only this data directory's copies: the bucket's
   * archive of a deleted export went with the request deleting it. Cluster nodes run it at start
   * and whenever they apply a change to an export (src/server.ts); runs asked for while one is
   * under way make one more after it.
   */
  sweep(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.sweeping) {
      this.sweepAgain = true;
      return this.sweeping;
    }
    this.sweeping = (async () => {
      do {
        this.sweepAgain = false;
        await this.sweepOnce().catch((err: unknown) => {
          log.error({ err }, 'removing stale export directories failed');
        });
      } while (this.sweepAgain && !this.closed);
      this.sweeping = null;
    })();
    return this.sweeping;
  }

  private async sweepOnce(): Promise<void> {
    const found = await this.uploads.exportDirs();
    // Decided at once, from the rows as they are now: a directory's export cannot become
    // succeeded again once it is not (nor under way here, once it is not).
    const realms = new Set(found.map((d) => Number(d.split('/')[0])));
    const rows = [...realms].flatMap((r) => this.store.realmExports.byRealm(r));
    for (const dir of staleExportDirs(found, rows, this.running)) {
      await this.uploads.removeExportDir(dir);
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

  /** Waits for the export under way (shutdown), and a sweep; later ones are not started. */
  async close(): Promise<void> {
    this.closed = true;
    await this.chain;
    await this.sweeping;
  }
}
