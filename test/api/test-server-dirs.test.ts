/**
 * The test harness's servers (test/helpers/server.ts): two servers started by one test each have a
 * data directory of their own. The second used to call `t.testdir()` again, which empties the
 * first server's directory while it runs (CI at 906dfd5, operations.test's two servers: ENOTEMPTY).
 * A test's own `t.testdir()` after its server took the directory would do the same: refused.
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

t.test(
  "the test's directory asked for again under its server: refused, the server's files kept",
  async (t) => {
    const ts = await startServer(t);
    t.throws(() => t.testdir(), /would empty the data directory of this test's server/);
    t.ok(fs.existsSync(path.join(ts.dataDir, 'confab.sqlite3')), "the server's database");
    const sent = await ts.api.post('hamlet', '/api/v1/messages', {
      type: 'direct',
      to: JSON.stringify([ts.fx.users.hamlet!.id]),
      content: 'written after',
    });
    t.equal(sent.status, 200, 'the server still writes');
  },
);
