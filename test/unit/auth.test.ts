/** Pure parts of authentication: realm choice by Host, Basic header decoding. */
import t from 'tap';
import { parseBasicAuth, subdomainFromHost } from '../../src/http/auth.js';

t.test('subdomainFromHost', (t) => {
  const cases: [string, string, string][] = [
    ['chat.example.com', 'chat.example.com', ''],
    ['CHAT.example.com:443', 'chat.example.com', ''],
    ['eng.chat.example.com', 'chat.example.com', 'eng'],
    ['eng.chat.example.com:9991', 'chat.example.com:9991', 'eng'],
    ['127.0.0.1:40000', 'localhost:9991', ''],
    ['evilchat.example.com', 'chat.example.com', ''],
    ['[::1]:9991', 'localhost:9991', ''],
    ['', 'localhost', ''],
  ];
  for (const [host, ext, want] of cases)
    t.equal(subdomainFromHost(host, ext), want, `${host} on ${ext}`);
  t.end();
});

t.test('parseBasicAuth', (t) => {
  const enc = (s: string) => 'Basic ' + Buffer.from(s).toString('base64');
  t.same(parseBasicAuth(enc('a@b.c:key:with:colons')), {
    email: 'a@b.c',
    apiKey: 'key:with:colons',
  });
  t.same(parseBasicAuth('basic ' + Buffer.from('x@y.z:k').toString('base64')), {
    email: 'x@y.z',
    apiKey: 'k',
  });
  t.throws(() => parseBasicAuth(''), { code: 'UNAUTHORIZED', httpStatus: 401 });
  t.throws(() => parseBasicAuth('Digest abc'), {
    message: 'This endpoint requires HTTP basic authentication.',
  });
  t.throws(() => parseBasicAuth(enc(':key')), {
    message: 'Invalid authorization header for basic auth',
  });
  t.throws(() => parseBasicAuth(enc('nocolon')), {
    message: 'Invalid authorization header for basic auth',
  });
  t.end();
});
