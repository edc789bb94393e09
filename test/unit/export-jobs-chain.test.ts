/**
 * The exports of a process run one after another (src/admin/export-jobs.ts). A run whose failure
 * handling fails as well (here: its realm refuses every update and the store throws when read, as
 * a store closed under it would) must not stop the exports queued after it: on a cluster node
 * their runner keys are renewed by this process, so an export that never ran would never be
 * failed by its realm's owner either. On the code before, the chain of runs stayed rejected:
 * the second export was never run, and `idle` threw.
 */
import t from 'tap';
import type { RealmRuntime } from '../../actors/registry.js';
import { RealmExportJobs, type ExportRunners } from '../../src/admin/export-jobs.js';
import type { ServerConfig } from '../../src/config.js';
import type { UploadFiles } from '../../src/storage/upload-files.js';

t.test('a run that throws does not stop the exports queued after it', async (t) => {
  const dir = t.testdir();
  const asked: { id: number; status: string }[] = [];
  const realm = {
    id: 7,
    view: { row: { string_id: 'r' } },
    ask: (_type: string, p: { id: number; status: string }) => {
      asked.push({ id: p.id, status: p.status });
      return Promise.reject(new Error('the realm refuses'));
    },
  } as unknown as RealmRuntime;
  const config = {
    dataDir: dir,
    externalHost: 'example.com',
    externalScheme: 'https',
    clock: () => Date.now(),
  } as unknown as ServerConfig;
  const uploads = {
    exportFilePath: (rel: string) => `${dir}/exports/${rel}`,
    removeExport: () => Promise.resolve(),
  } as unknown as UploadFiles;
  const store = {
    realmExports: {
      byId: () => {
        throw new Error('the store is closed');
      },
    },
  };
  const finished: number[] = [];
  const runners: ExportRunners = {
    claim: () => Promise.resolve(true),
    finish: (id) => {
      finished.push(id);
      return Promise.resolve();
    },
    giveUp: () => Promise.resolve(),
  };
  const jobs = new RealmExportJobs(config, uploads, store as never, runners);
  await jobs.start(realm, 1, 1);
  await jobs.start(realm, 2, 1);
  const quiet = await jobs.idle().then(
    () => 'settled',
    (err: unknown) => `threw: ${String(err)}`,
  );
  t.equal(quiet, 'settled', 'idle settles');
  t.same(
    asked.filter((a) => a.status === 'started').map((a) => a.id),
    [1, 2],
    'both exports were run',
  );
  t.same(finished, [1, 2], 'and their runner records given back');
  await jobs.close();
});
