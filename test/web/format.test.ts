/**
 * web/state/format.ts: sizes in words as the reference writes them — bytes as `B`, then `KB`,
 * `MB`, `GB`, `TB` in 1024s (as the server's MiB limits), one decimal below 10, whole numbers
 * from 10 up, and a value that rounds up to the next unit written in it.
 */
import t from 'tap';
import { isMeMessage, isSlashCommand, meAction, sizeText } from '../../web/state/format.js';

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

t.test('a me-message: its action, drawn after the sender’s name', (t) => {
  t.ok(isMeMessage('/me waves'));
  t.notOk(isMeMessage('/meh'), 'a word starting with "me"');
  t.notOk(isMeMessage('/me'), 'no action');
  t.notOk(isMeMessage(' /me waves'), 'not at the start');
  t.equal(meAction('<p>/me waves</p>'), 'waves');
  t.equal(
    meAction('<p>/me waves <strong>hard</strong></p>\n<p>and more</p>'),
    'waves <strong>hard</strong>\n<p>and more</p>',
    'the first paragraph runs on from the name; the rest follows',
  );
  t.equal(meAction('<p>waves</p>'), null, 'not a me-message: drawn as any message');
  t.equal(meAction('<p>/me waves'), null, 'no paragraph end: drawn as it is');
  t.end();
});
