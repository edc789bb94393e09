/**
 * The test harness's servers (test/helpers/server.ts): two servers started by one test each have a
 * data directory of their own. The second used to call `t.testdir()` again, which empties the
 * first server's directory while it runs (CI at 906dfd5, operations.test's two servers: ENOTEMPTY).
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startServer } from '../helpers/server.js';

t.test('two servers of one test, two data directories', async (t) => {
  const first = await startServer(t);
  const before = fs.readdirSync(first.dataDir).sort();
  const second = await startServer(t);
  t.not(second.dataDir, first.dataDir, 'a directory of its own');
  t.same(fs.readdirSync(first.dataDir).sort(), before, "the first server's files are left alone");
  const sent = await first.api.post('hamlet', '/api/v1/messages', {
    type: 'direct',
    to: JSON.stringify([first.fx.users.hamlet!.id]),
    content: 'written after the second server started',
  });
  t.equal(sent.status, 200, 'the first server still writes');
  t.ok(fs.existsSync(path.join(first.dataDir, 'confab.sqlite3')), "the first server's database");
});
