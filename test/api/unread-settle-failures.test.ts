/**
 * The unread index's settler (src/storage/store.ts) failing: a busy database passes in silence and
 * the next tick tries again; any other error is logged with the error the first time, then again
 * only after a while with how many failed meanwhile (one line per tick would be ~100 lines a
 * second), and once when the watermark moves again; /metrics counts the failures and shows how far
 * the watermark is behind. The failure is injected into the settler's first lookup.
 */
import t from 'tap';
import { rawRequest } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { captureLog } from '../helpers/log.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { CLUSTER_MODE, startServer } from '../helpers/server.js';

/** The value of an unlabelled metric line in Prometheus text (null: absent). */
function metric(text: string, name: string): number | null {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const sqliteError = (code: string, message: string) => Object.assign(new Error(message), { code });

t.test(
  'a failing settler is logged (bounded) and counted in /metrics',
  { skip: CLUSTER_MODE },
  async (t) => {
    const lines = captureLog(t);
    const ts = await startServer(t);
    const store = ts.server.store;
    const errors = () => lines.filter((l) => /unread index/.test(String(l.msg)));
    const scrape = async () => (await rawRequest(ts.url, { method: 'GET', path: '/metrics' })).text;

    const unread = store.unread as { waiting: (rows: number) => boolean };
    const waiting = unread.waiting;
    let fail: Error | null = null;
    let calls = 0;
    unread.waiting = (rows) => {
      calls++;
      if (fail) throw fail;
      return waiting(rows);
    };

    // Busy: expected, nothing logged or counted.
    fail = sqliteError('SQLITE_BUSY', 'database is locked');
    const before = calls;
    await until('the settler tried while busy', () => calls >= before + 5);
    t.same(errors(), [], 'a busy database is not logged');
    t.equal(metric(await scrape(), 'confab_unread_settle_failures_total'), 0);

    // Anything else: logged once with the error, however often it fails.
    fail = sqliteError('SQLITE_IOERR', 'disk I/O error');
    const ch = await createChannel(ts.api, 'othello', 'settled', {
      principals: [ts.fx.users.hamlet!.id, ts.fx.users.othello!.id],
    });
    const sent = await sendChannelMessage(ts.api, 'othello', ch, 't', 'above the watermark');
    const start = calls;
    await until('twenty failed ticks', () => calls >= start + 20);
    const first = errors();
    t.equal(first.length, 1, 'one line for many failures');
    t.equal(first[0]!.level, 'error');
    t.match(first[0], {
      err: { code: 'SQLITE_IOERR', message: 'disk I/O error' },
      failures: 1,
    });
    t.ok(store.unread.watermark() < sent, 'the watermark is stuck below the message');
    const text = await scrape();
    t.ok(metric(text, 'confab_unread_settle_failures_total')! >= 20, 'failures counted');
    t.ok(metric(text, 'confab_unread_watermark_behind')! >= 1, 'the watermark is behind');

    // Still failing a while later: one more line, with how many failed since the first.
    store.settleFailureLogEveryMs = 200;
    await until('a second line', () => errors().length >= 2);
    t.ok((errors()[1]!.failures as number) > 1, 'the second line counts the failures since');

    // Working again: one line, and the watermark moves over the message. The settler ticks on
    // meanwhile (every ~10 ms): a test slower than 200 ms to get here saw a third error line.
    store.settleFailureLogEveryMs = 60_000;
    fail = null;
    const failing = errors().length;
    t.ok(
      errors().every((l) => l.level === 'error'),
      `${failing} error lines while it failed`,
    );
    await until('the watermark moved', () => store.unread.watermark() >= sent);
    await until('the recovery line', () => errors().length > failing);
    t.match(errors()[failing], { level: 'info', msg: /moves again/ });
    t.equal(errors().length, failing + 1, 'one recovery line');
    t.equal(metric(await scrape(), 'confab_unread_watermark_behind'), 0);
  },
);
