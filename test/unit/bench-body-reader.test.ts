/**
 * The bench clients' partial reads of answers (bench/lib/http-conn.ts numberField): one numeric
 * field from a plain body, from a gzipped one assembled as the server assembles them around a
 * shared part (src/http/gzip.ts: its own fields in a stored block first), and from a gzip member
 * read whole when its first blocks do not hold it; '' when the field is absent.
 */
import zlib from 'node:zlib';
import t from 'tap';
import { numberField, skipBody } from '../../bench/lib/http-conn.js';
import { compressedSize, gzipParts } from '../../src/http/gzip.js';
import { markShared } from '../../src/lib/shared-parts.js';

const ID = numberField('presence_last_update_id');

t.test('a plain body: the field wherever it is, without decoding the rest', (t) => {
  const presences = Array.from({ length: 2000 }, (_, i) => `"${i}":{"active_timestamp":1}`);
  const end = Buffer.from(
    `{"result":"success","presences":{${presences.join(',')}},"presence_last_update_id":-1234}`,
  );
  t.equal(ID(end, false), '-1234', 'at the end (an answer of the changes)');
  t.equal(ID(Buffer.from('{"presence_last_update_id":77,"x":1}'), false), '77', 'at the start');
  t.equal(ID(Buffer.from('{"result":"success"}'), false), '', 'absent');
  t.equal(skipBody(end, false), '');
  t.end();
});

t.test('a gzipped answer around a shared part: read from its first blocks', async (t) => {
  const entries = Array.from({ length: 10_000 }, (_, i) => `"${i}":{"active_timestamp":${i}}`);
  const shared = markShared(Buffer.from(`{${entries.join(',')}}`));
  while (compressedSize(shared) === null) await new Promise((r) => setTimeout(r, 5));
  const head = Buffer.from(
    '{"result":"success","msg":"","presence_last_update_id":987654,"presences":',
  );
  const parts = gzipParts([head, shared, Buffer.from('}')])!;
  t.ok(parts, 'gzipped as the server sends it');
  const body = Buffer.concat(parts);
  t.equal(ID(body, true), '987654');
  // Its first bytes alone suffice (the whole member, truncated, could not be gunzipped).
  t.equal(ID(body.subarray(0, 200), true), '987654', 'from the first blocks alone');
  t.same(
    JSON.parse(zlib.gunzipSync(body).toString()).presence_last_update_id,
    987654,
    'the same as the whole answer says',
  );
  // The field after the shared part: found by reading the member whole.
  const late = Buffer.concat(
    gzipParts([
      Buffer.from('{"presences":'),
      shared,
      Buffer.from(',"presence_last_update_id":55}'),
    ])!,
  );
  t.equal(ID(late, true), '55');
  // A member whose header carries a name (an optional field): read whole as well.
  const named = zlib.gzipSync('{"presence_last_update_id":42}');
  named[3] = 8; // FNAME set, the name spliced in after the 10-byte header
  const withName = Buffer.concat([named.subarray(0, 10), Buffer.from('x\0'), named.subarray(10)]);
  t.equal(ID(withName, true), '42');
  t.equal(ID(zlib.gzipSync('{"result":"success"}'), true), '', 'absent');
});
