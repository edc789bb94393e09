/**
 * The durability setting (docs/operations.md "Durability"): DURABILITY=full opens the database
 * with synchronous=FULL (every commit synced before it is answered), the default with NORMAL;
 * anything else is refused at start.
 */
import t from 'tap';
import { configFromEnv } from '../../src/config.js';
import { openDatabase } from '../../src/storage/db.js';

t.test('DURABILITY picks SQLite synchronous mode', (t) => {
  t.equal(configFromEnv({}).durability, 'normal', 'normal by default');
  t.equal(configFromEnv({ DURABILITY: 'full' }).durability, 'full');
  t.throws(() => configFromEnv({ DURABILITY: 'fsync' }), /bad environment: DURABILITY/);
  for (const [durability, level] of [
    ['normal', 1],
    ['full', 2],
  ] as const) {
    const db = openDatabase(t.testdir(), { durability });
    t.equal(
      db.pragma('synchronous', { simple: true }),
      level,
      `${durability}: synchronous=${level}`,
    );
    t.equal(db.pragma('journal_mode', { simple: true }), 'wal', 'in WAL mode either way');
    db.close();
  }
  t.end();
});
