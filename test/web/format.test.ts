/**
 * web/state/format.ts: sizes in words as the reference writes them — bytes as `B`, then `KB`,
 * `MB`, `GB` in thousands (a file's size) or in 1024s (what the server sets in MiB), one decimal
 * below 10, whole numbers from 10 up, and a value that rounds up to the next unit written in it.
 */
import t from 'tap';
import { sizeText } from '../../web/state/format.js';

t.test('bytes, below the first thousand', (t) => {
  t.equal(sizeText(0), '0 B');
  t.equal(sizeText(1), '1 B');
  t.equal(sizeText(999), '999 B');
  t.equal(sizeText(-5), '0 B', 'never negative');
  t.end();
});

t.test('a file’s size: thousands, as the reference’s uploaded files list', (t) => {
  t.equal(sizeText(1000), '1 KB', '1000 B is the first KB');
  t.equal(sizeText(1500), '1.5 KB', 'one decimal below 10');
  t.equal(sizeText(9_949), '9.9 KB');
  t.equal(sizeText(9_960), '10 KB', 'rounds to 10, then whole');
  t.equal(sizeText(12_345), '12 KB');
  t.equal(sizeText(999_400), '999 KB');
  t.equal(sizeText(999_600), '1 MB', 'what rounds to 1000 KB is 1 MB');
  t.equal(sizeText(1_000_000), '1 MB');
  t.equal(sizeText(2_560_000), '2.6 MB');
  t.equal(sizeText(999_999_999), '1 GB');
  t.equal(sizeText(3_000_000_000), '3 GB');
  t.equal(sizeText(5e12), '5 TB');
  t.equal(sizeText(5e15), '5000 TB', 'no unit past TB');
  t.end();
});

t.test('binary: 1024s, for what the server counts in MiB', (t) => {
  t.equal(sizeText(1023, true), '1023 B');
  t.equal(sizeText(1024, true), '1 KB');
  t.equal(sizeText(1536, true), '1.5 KB');
  t.equal(sizeText(10 * 1024, true), '10 KB');
  t.equal(sizeText(1024 * 1024 - 1, true), '1 MB');
  t.equal(sizeText(25 * 1024 * 1024, true), '25 MB', 'a 25 MiB limit reads 25 MB');
  t.equal(sizeText(3 * 1024 ** 3, true), '3 GB');
  t.equal(sizeText(1_000_000, true), '977 KB', 'a decimal MB is less than a binary one');
  t.end();
});
