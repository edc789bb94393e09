/**
 * Realm export archive paths (src/lib/realm-exports.ts): what a download URL may name, an
 * archive's own directory, and which directories a cluster node's sweep removes.
 */
import t from 'tap';
import {
  exportDirOf,
  ExportStatus,
  isExportDownloadPath,
  staleExportDirs,
} from '../../src/lib/realm-exports.js';

const SECRET = 'AbCdEfGhIjKlMnOpQrStUvWx';

t.test('isExportDownloadPath: only the paths the server makes', (t) => {
  t.ok(isExportDownloadPath('7', SECRET, 'confab-export-root-12.tar.gz'));
  t.ok(isExportDownloadPath('7', SECRET, 'confab-export-my-team-3.tar.gz'));
  for (const [realm, secret, file] of [
    ['x', SECRET, 'confab-export-root-12.tar.gz'],
    ['1234567890123456', SECRET, 'confab-export-root-12.tar.gz'],
    ['7', 'short', 'confab-export-root-12.tar.gz'],
    ['7', '..', 'confab-export-root-12.tar.gz'],
    ['7', SECRET, '../confab-export-root-12.tar.gz'],
    ['7', SECRET, 'confab-export-root-12.tar'],
    ['7', SECRET, 'other.tar.gz'],
  ] as const)
    t.notOk(isExportDownloadPath(realm, secret, file), `${realm}/${secret}/${file}`);
  t.end();
});

t.test('exportDirOf: the realm and secret of three plain segments', (t) => {
  t.equal(exportDirOf(`7/${SECRET}/confab-export-root-12.tar.gz`), `7/${SECRET}`);
  for (const bad of [
    '',
    '7',
    `7/${SECRET}`,
    `7/${SECRET}/a/b`,
    '7//a',
    '7/../a',
    '7/./a',
    '../x/a',
  ])
    t.equal(exportDirOf(bad), null, JSON.stringify(bad));
  t.end();
});

t.test('staleExportDirs: keeps succeeded archives and exports under way', (t) => {
  const row = (status: number, dir: string | null) => ({
    status,
    export_path: dir === null ? null : `${dir}/confab-export-root-1.tar.gz`,
  });
  const rows = [
    row(ExportStatus.SUCCEEDED, '1/kept'),
    row(ExportStatus.DELETED, '1/deleted'),
    row(ExportStatus.FAILED, null),
    row(ExportStatus.STARTED, null),
    row(ExportStatus.SUCCEEDED, '2/other-realm'),
  ];
  t.same(
    staleExportDirs(
      ['1/kept', '1/deleted', '1/interrupted', '1/running', '2/other-realm', '3/no-row'],
      rows,
      new Set(['1/running']),
    ),
    ['1/deleted', '1/interrupted', '3/no-row'],
  );
  t.same(staleExportDirs([], rows, new Set()), [], 'nothing found, nothing to remove');
  t.same(
    staleExportDirs(['1/kept'], [row(ExportStatus.SUCCEEDED, null)], new Set()),
    ['1/kept'],
    'a succeeded row without a path keeps nothing',
  );
  t.end();
});
