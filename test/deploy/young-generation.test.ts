/**
 * The server's young generation stays at V8's usual size (a 16 MB semi-space) however it is
 * started the documented ways: `npm start` (package.json), the container's command (Dockerfile),
 * the systemd unit (deploy/confab.service) and a cluster node's launchers (src/node-flags.ts;
 * test/cluster/faults-node.test.ts looks at a running node's) pass Node the same flags, among them
 * --min-semi-space-size=16. Without it V8 shrinks the young generation of a server that has been
 * idle (down to 1 MB), and a burst of requests after a quiet spell meets a scavenge every few dozen
 * requests instead of every few hundred (docs/benchmarks.md, "The fetch measured on a server of
 * its own"; docs/operations.md "Memory"). And --no-allocation-site-pretenuring, without which
 * short-lived objects of the request path are allocated in the old generation and keep what they
 * point at out of the young collections (docs/benchmarks.md "What a send leaves in the old
 * generation").
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { SERVER_NODE_FLAGS } from '../../src/node-flags.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (file: string) => fs.readFileSync(path.join(REPO, file), 'utf8');

/** The arguments between `node` and the server's script in a command's words. */
function nodeFlags(words: readonly string[], node: string, script: string): string[] | null {
  const from = words.indexOf(node);
  const to = words.indexOf(script);
  return from === -1 || to <= from ? null : words.slice(from + 1, to);
}

const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
const npmFlags = nodeFlags(pkg.scripts.start!.split(/\s+/), 'node', 'dist/src/main.js');

t.test('npm start, the container and the systemd unit start Node with the same flags', (t) => {
  t.ok(npmFlags, 'npm start runs node dist/src/main.js');
  t.ok(npmFlags!.includes('--min-semi-space-size=16'), 'npm start holds the young generation');
  t.ok(
    npmFlags!.includes('--no-allocation-site-pretenuring'),
    'npm start keeps V8 from allocating busy sites in the old generation',
  );
  t.same(
    npmFlags,
    SERVER_NODE_FLAGS,
    'the flags a cluster node is started with (src/node-flags.ts)',
  );
  const cmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'))?.[1];
  t.ok(cmd, 'the Dockerfile has a CMD');
  t.same(nodeFlags(JSON.parse(cmd!) as string[], 'node', 'dist/src/main.js'), npmFlags);
  const exec = /^ExecStart=\/bin\/sh -c '(.*)'$/m.exec(read('deploy/confab.service'))?.[1];
  t.ok(exec, 'the unit has an ExecStart');
  t.same(nodeFlags(exec!.split(/\s+/), 'exec', '/opt/confab/dist/src/main.js'), [
    '"$$CONFAB_NODE"',
    ...npmFlags!,
  ]);
  t.end();
});

t.test('Node started with them has a young generation of 16 MB from the start', (t) => {
  // V8 never shrinks the young generation below its starting size.
  const probe = spawnSync(
    process.execPath,
    [
      ...npmFlags!,
      '-e',
      "const s = require('node:v8').getHeapSpaceStatistics().find((x) => x.space_name === 'new_space'); console.log(s.space_size)",
    ],
    { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
  );
  t.equal(probe.status, 0, probe.stderr);
  t.ok(
    Number(probe.stdout.trim()) >= 16 * 1024 * 1024,
    `new space ${probe.stdout.trim()} bytes at the start`,
  );
  t.end();
});
