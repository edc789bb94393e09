/**
 * The open-files limit said at start (src/observability/open-files.ts): read from
 * /proc/<pid>/limits, the connections it allows (one descriptor each), a warning when the soft
 * limit is below the hard one; and Node raising the soft limit to the hard one as it starts, which
 * docs/operations.md "Descriptors" relies on.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import t from 'tap';
import {
  DESCRIPTORS_RESERVED,
  openFilesLimit,
  openFilesReport,
  parseOpenFilesLimit,
} from '../../src/observability/open-files.js';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            1024                 20000                files
Max locked memory         8388608              8388608              bytes
`;

t.test('the limit is read from /proc/<pid>/limits', (t) => {
  t.same(parseOpenFilesLimit(LIMITS), { soft: 1024, hard: 20000 });
  t.same(
    parseOpenFilesLimit(
      'Max open files            unlimited            unlimited            files',
    ),
    { soft: Infinity, hard: Infinity },
  );
  t.equal(parseOpenFilesLimit('Max cpu time   unlimited   unlimited   seconds\n'), null);
  t.equal(parseOpenFilesLimit('Max open files  x  y  files'), null, 'garbage: null, no throw');
  t.end();
});

t.test('the start-up line: connections allowed; a warning when soft < hard', (t) => {
  const raised = openFilesReport({ soft: 20000, hard: 20000 });
  t.equal(raised.level, 'info');
  t.equal(raised.fields.connections, 20000 - DESCRIPTORS_RESERVED);
  t.match(raised.msg, /open-files limit 20000: about 19900 client connections/);
  const low = openFilesReport({ soft: 1024, hard: 20000 });
  t.equal(low.level, 'warn');
  t.match(low.msg, /below its hard limit 20000/);
  t.equal(openFilesReport({ soft: 50, hard: 50 }).fields.connections, 0, 'never negative');
  t.match(openFilesReport({ soft: Infinity, hard: Infinity }).msg, /without a descriptor limit/);
  t.end();
});

const here = fs.existsSync('/proc/self/limits') ? openFilesLimit() : null;
const skip = here === null ? 'no /proc here' : here.hard < 512 ? 'hard limit below 512' : false;

t.test('Node raises the soft limit to the hard one as it starts', { skip }, async (t) => {
  if (here === null) return;
  t.equal(here.soft, here.hard, 'this process: raised');
  // A shell lowers its soft limit, then runs Node: Node's own soft limit is the hard one again.
  const script =
    "const l=require('fs').readFileSync('/proc/self/limits','utf8');" +
    "process.stdout.write(l.split('\\n').find((x)=>x.startsWith('Max open files')))";
  const { stdout: out } = await promisify(execFile)('/bin/sh', [
    '-c',
    `ulimit -Sn 256 && ulimit -Sn && exec "${process.execPath}" -e "${script}"`,
  ]);
  const [shellSoft, nodeLine] = out.split('\n');
  t.equal(shellSoft, '256', 'the shell ran with a soft limit of 256');
  t.same(parseOpenFilesLimit(nodeLine ?? ''), { soft: here.hard, hard: here.hard });
});
