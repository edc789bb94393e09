/**
 * web/state/format.ts: sizes in words as the reference writes them — bytes as `B`, then `KB`,
 * `MB`, `GB`, `TB` in 1024s (as the server's MiB limits), one decimal below 10, whole numbers
 * from 10 up, and a value that rounds up to the next unit written in it.
 */
import t from 'tap';
import { isSlashCommand, sizeText } from '../../web/state/format.js';

t.test('bytes, below the first KB', (t) => {
  t.equal(sizeText(0), '0 B');
  t.equal(sizeText(1), '1 B');
  t.equal(sizeText(1023), '1023 B');
  t.equal(sizeText(-5), '0 B', 'never negative');
  t.end();
});

t.test('KB, MB, GB, TB: one decimal below 10, whole above', (t) => {
  t.equal(sizeText(1024), '1 KB', '1024 B is the first KB');
  t.equal(sizeText(1536), '1.5 KB');
  t.equal(sizeText(3000), '2.9 KB');
  t.equal(sizeText(10_188), '9.9 KB');
  t.equal(sizeText(10_200), '10 KB', 'rounds to 10, then whole');
  t.equal(sizeText(12_345), '12 KB');
  t.equal(sizeText(1023 * 1024), '1023 KB');
  t.equal(sizeText(1024 * 1024 - 1), '1 MB', 'what rounds to 1024 KB is 1 MB');
  t.equal(sizeText(1_000_000), '977 KB', 'a million bytes are not yet a MB');
  t.equal(sizeText(25 * 1024 * 1024), '25 MB', 'a 25 MiB limit reads 25 MB');
  t.equal(sizeText(2.56 * 1024 * 1024), '2.6 MB');
  t.equal(sizeText(3 * 1024 ** 3), '3 GB');
  t.equal(sizeText(5 * 1024 ** 4), '5 TB');
  t.equal(sizeText(5 * 1024 ** 5), '5120 TB', 'no unit past TB');
  t.end();
});

t.test('isSlashCommand: not echoed locally (the reference’s echo.is_slash_command)', (t) => {
  t.ok(isSlashCommand('/poll Lunch?\nPizza'));
  t.ok(isSlashCommand('/todo'));
  t.ok(isSlashCommand('/anything'));
  t.notOk(isSlashCommand('/me waves'), '/me is echoed');
  t.notOk(isSlashCommand('/meeting at 3'), 'as the reference: anything from /me');
  t.notOk(isSlashCommand(' /poll'), 'only at the start');
  t.notOk(isSlashCommand('hello /poll'));
  t.end();
});
