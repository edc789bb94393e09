/**
 * Pure upload rules: sanitize_name (expected values produced by the reference's function run under
 * Python 3), the client file name as the reference's multipart parser passes it on, unquoting,
 * content types, Content-Disposition, path-id shapes, stored-name truncation, and temporary-URL
 * tokens.
 */
import t from 'tap';
import { signUploadToken, verifyUploadToken } from '../../src/lib/upload-tokens.js';
import {
  clientFileName,
  contentDisposition,
  fitStoredName,
  isWellFormedPathId,
  pathIdFileName,
  sanitizeName,
  unquote,
  uploadContentType,
} from '../../src/lib/uploads.js';

/** A test name safe for TAP's line-based output (U+2028 and friends escaped). */
const label = (s: string) =>
  JSON.stringify(s).replace(
    /[\u0080-\uffff]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'),
  );

t.test('sanitizeName matches the reference (outputs of its Python function)', (t) => {
  const cases: [string, string][] = [
    ['zulip.txt', 'zulip.txt'],
    ['some file (1).txt', 'some-file-1.txt'],
    ['a<b>c|d?.txt', 'abcd.txt'],
    ['$%^&*.png', '.png'],
    ['ＡＢＣ.txt', 'ABC.txt'],
    ['été.pdf', 'été.pdf'],
    ['日本語 ファイル.txt', '日本語-ファイル.txt'],
    ['🎉party.txt', 'party.txt'],
    ['नमस्ते.txt', 'नमसत.txt'], // combining vowel signs are not Python word characters
    ['  spaced  out  .md', 'spaced-out-.md'],
    ['a--b__c..d', 'a-b__c..d'],
    ['tab\there.txt', 'tab-here.txt'],
    ['x\u00a0y.txt', 'x-y.txt'],
    ['\u2028line.txt', 'line.txt'],
    ['über-ﬁle.txt', 'über-file.txt'],
    ['...', '...'],
    ['.. ', 'uploaded-file'],
    ['..', 'uploaded-file'],
    ['.', 'uploaded-file'],
    ['', 'uploaded-file'],
    ['/', 'uploaded-file'],
    ['-', '-'],
    ['_', '_'],
    ['Ünïcödé ñame.tar.gz', 'Ünïcödé-ñame.tar.gz'],
    ['x\x1fy.txt', 'x-y.txt'],
    ['a\ufeffb.txt', 'ab.txt'],
    ['½ cup.txt', '12-cup.txt'],
    ['٣٤.txt', '٣٤.txt'],
    ['../../etc/passwd', '....etcpasswd'],
  ];
  for (const [input, expected] of cases) t.equal(sanitizeName(input), expected, label(input));
  t.end();
});

t.test('unquote is Python urllib.parse.unquote', (t) => {
  const cases: [string, string][] = [
    ['hello%20world.txt', 'hello world.txt'],
    ['%E2%9C%93.txt', '✓.txt'],
    ['%ff%fe.txt', '\ufffd\ufffd.txt'],
    ['100%.txt', '100%.txt'],
    ['%2', '%2'],
    ['a+b.txt', 'a+b.txt'],
    ['%C3%A9t%C3%A9', 'été'],
    ['%e2%82', '\ufffd'],
    ['%EF%BB%BFbom', '\ufeffbom'],
  ];
  for (const [input, expected] of cases) t.equal(unquote(input), expected, label(input));
  t.end();
});

t.test('clientFileName: base name, printable characters, unquoted; nothing left → no file', (t) => {
  t.equal(clientFileName('zulip.txt'), 'zulip.txt');
  t.equal(clientFileName('C:\\Users\\me\\report.pdf'), 'report.pdf');
  t.equal(clientFileName('../../etc/passwd'), 'passwd');
  t.equal(clientFileName('a\u0000b\u200bc.txt'), 'abc.txt');
  t.equal(clientFileName('hello%20world.txt'), 'hello world.txt');
  t.equal(clientFileName('%2E%2E'), '..', 'unquoted after the check, as the reference');
  for (const nothing of ['', '.', '..', 'dir/', '\u0000']) t.equal(clientFileName(nothing), null);
  t.end();
});

t.test('fitStoredName keeps names within one path segment, extension kept', (t) => {
  t.equal(fitStoredName('short.txt'), 'short.txt');
  const long = fitStoredName('a'.repeat(300) + '.txt');
  t.equal(Buffer.byteLength(long), 255);
  t.ok(long.endsWith('a.txt'));
  const wide = fitStoredName('é'.repeat(200) + '.txt');
  t.ok(Buffer.byteLength(wide) <= 255);
  t.ok(wide.endsWith('é.txt'), 'cut between characters, never inside one');
  t.equal(Buffer.byteLength(fitStoredName('b'.repeat(400))), 255);
  t.end();
});

t.test('uploadContentType: the client type unless missing or a multipart default', (t) => {
  t.equal(uploadContentType('image/png', 'a.png'), 'image/png');
  t.equal(uploadContentType('', 'a.png'), 'image/png');
  t.equal(uploadContentType('application/octet-stream', 'a.JPG'), 'image/jpeg');
  t.equal(uploadContentType('text/plain', 'a.pdf'), 'application/pdf');
  t.equal(uploadContentType('text/plain', 'notes'), 'text/plain');
  t.equal(uploadContentType('application/x-custom', 'a.png'), 'application/x-custom');
  t.equal(uploadContentType('', 'unknown.zzz'), 'application/octet-stream');
  t.equal(
    uploadContentType('bad type\r\nX: y', 'a.txt'),
    'text/plain',
    'a malformed type is not kept',
  );
  t.end();
});

t.test('contentDisposition: quoted ASCII names, RFC 8187 for the rest', (t) => {
  t.equal(contentDisposition('cat.png', true), 'inline; filename="cat.png"');
  t.equal(contentDisposition('a "b" \\c.txt', false), 'attachment; filename="a \\"b\\" \\\\c.txt"');
  t.equal(
    contentDisposition('été 1.pdf', false),
    `attachment; filename="_t_ 1.pdf"; filename*=utf-8''%C3%A9t%C3%A9%201.pdf`,
  );
  t.equal(
    contentDisposition('evil\r\nSet-Cookie: x.txt', false),
    `attachment; filename="evil__Set-Cookie: x.txt"; filename*=utf-8''evil%0D%0ASet-Cookie%3A%20x.txt`,
    'line breaks never reach the header',
  );
  t.end();
});

t.test('isWellFormedPathId refuses what cannot be a stored path id', (t) => {
  t.ok(isWellFormedPathId('2/ce/DfOkzwdg_IwlrN3myw3KGtiJ/166050.jpg'));
  t.ok(isWellFormedPathId('2/ce/x/été.pdf'));
  t.ok(isWellFormedPathId('2/ce/x/...'), 'three dots is a name, not a parent');
  for (const bad of [
    '',
    '2',
    '../2/x',
    '2/../x',
    '2/./x',
    '/2/x',
    '2//x',
    '2/x/',
    'a/x',
    '2/x\\..\\y',
    '2/x\u0000',
    '2/' + 'x'.repeat(2000),
  ]) {
    t.notOk(isWellFormedPathId(bad), label(bad.slice(0, 40)));
  }
  t.equal(pathIdFileName('2/ce/abc/zulip.txt'), 'zulip.txt');
  t.end();
});

t.test('temporary-URL tokens: valid until expiry, unforgeable, bound to one path id', (t) => {
  const key = Buffer.alloc(32, 7);
  const otherKey = Buffer.alloc(32, 8);
  const token = signUploadToken(key, '2/ce/abc/zulip.txt', 10_000);
  t.match(token, /^[0-9a-z]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'URL-safe');
  t.equal(verifyUploadToken(key, token, 9_999), '2/ce/abc/zulip.txt');
  t.equal(verifyUploadToken(key, token, 10_000), null, 'expired at its expiry');
  t.equal(verifyUploadToken(otherKey, token, 0), null, 'another key');
  const [expiry, path, mac] = token.split('.') as [string, string, string];
  const later = (20_000).toString(36);
  t.equal(verifyUploadToken(key, `${later}.${path}.${mac}`, 15_000), null, 'expiry stretched');
  const other = Buffer.from('2/ce/abc/secret.txt').toString('base64url');
  t.equal(verifyUploadToken(key, `${expiry}.${other}.${mac}`, 0), null, 'path swapped');
  for (const bad of ['', 'a.b', 'a.b.c.d', `${expiry}.${path}.`, `${expiry}.${path}.%%`]) {
    t.equal(verifyUploadToken(key, bad, 0), null, label(bad));
  }
  t.end();
});
