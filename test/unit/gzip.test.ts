/**
 * Gzip answers assembled from parts (src/http/gzip.ts): Accept-Encoding negotiation, the CRC-32
 * combination, and members that any gunzip reads back to exactly the answer's bytes.
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import t from 'tap';
import { acceptsGzip, crc32Combine, gzipParts, SEGMENT } from '../../src/http/gzip.js';
import { markShared, SHARED_PART_MIN } from '../../src/lib/shared-parts.js';
import { successBody } from '../../src/http/respond.js';
import { putPreserialized } from '../../src/lib/preserialized.js';

/** gzipParts once the shared parts' compression (in zlib's thread pool) is done. */
async function gzipWhenReady(parts: Buffer[]): Promise<Buffer[]> {
  for (let i = 0; i < 500; i++) {
    const out = gzipParts(parts);
    if (out) return out;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('the shared compression never finished');
}

/** A presence-like JSON object of `n` entries. */
function presenceJson(n: number): Buffer {
  const entries: string[] = [];
  for (let i = 0; i < n; i++)
    entries.push(
      `"${1000 + i}":{"active_timestamp":${1795810000 + (i % 97)},"idle_timestamp":${1795810000 + (i % 89)}}`,
    );
  return Buffer.from(`{${entries.join(',')}}`);
}

t.test('acceptsGzip reads the codings and their q-values', (t) => {
  t.ok(acceptsGzip('gzip, deflate'), 'Python requests');
  t.ok(acceptsGzip('gzip, deflate, br, zstd'));
  t.ok(acceptsGzip('GZIP'));
  t.ok(acceptsGzip('x-gzip'));
  t.ok(acceptsGzip('deflate;q=1, gzip;q=0.5'));
  t.ok(acceptsGzip('*'));
  t.ok(acceptsGzip('br, *;q=0.1'));
  t.notOk(acceptsGzip(''), 'absent');
  t.notOk(acceptsGzip('identity'));
  t.notOk(acceptsGzip('deflate, br'));
  t.notOk(acceptsGzip('gzip;q=0'));
  t.notOk(acceptsGzip('gzip;q=0, *'), 'an explicit refusal beats the wildcard');
  t.notOk(acceptsGzip('*;q=0'));
  t.notOk(acceptsGzip('gzip;q=nonsense'));
  t.end();
});

t.test('crc32Combine gives the CRC of the concatenation', (t) => {
  for (const [a, b] of [
    [0, 0],
    [1, 1],
    [7, 65536],
    [100_000, 3],
    [12345, 1_000_003],
  ] as const) {
    const x = crypto.randomBytes(a);
    const y = crypto.randomBytes(b);
    t.equal(
      crc32Combine(zlib.crc32(x), zlib.crc32(y), y.length),
      zlib.crc32(Buffer.concat([x, y])),
      `${a} + ${b} bytes`,
    );
  }
  t.end();
});

t.test('an answer with a shared part is one gzip member of exactly its bytes', async (t) => {
  const shared = presenceJson(5000);
  markShared(shared);
  const head = Buffer.from('{"result":"success","msg":"","presence_last_update_id":3');
  // A stored part above a stored block's 65,535 bytes, a shared part twice, an empty part.
  const big = Buffer.from(`,"pad":"${'x'.repeat(70_000)}"`);
  const parts = [
    head,
    Buffer.from(',"presences":'),
    shared,
    big,
    Buffer.alloc(0),
    Buffer.from('}'),
  ];
  const first = gzipParts(parts);
  t.equal(first, null, 'not before the shared part is compressed');
  const member = Buffer.concat(await gzipWhenReady(parts));
  const plain = Buffer.concat(parts);
  t.same(zlib.gunzipSync(member), plain, 'gunzip reads back the answer');
  t.ok(member.length < plain.length / 2, `compressed (${member.length} of ${plain.length} bytes)`);
  // A strict reader: one member, nothing after its trailer.
  const inflated = zlib.inflateRawSync(member.subarray(10, member.length - 8));
  t.same(inflated, plain, 'the blocks end with the final one');
  t.equal(member.readUInt32LE(member.length - 8), zlib.crc32(plain), 'CRC-32');
  t.equal(member.readUInt32LE(member.length - 4), plain.length, 'size');
  // The next answers reuse the compressed part, with other parts around it.
  const again = [Buffer.from('{"a":1,"p":'), shared, Buffer.from(',"b":"é"}')];
  t.same(zlib.gunzipSync(Buffer.concat(gzipParts(again)!)), Buffer.concat(again));
  t.end();
});

t.test('an answer without a shared part is left as it is', (t) => {
  const large = Buffer.alloc(SHARED_PART_MIN * 4, 'a');
  t.equal(gzipParts([Buffer.from('{'), large, Buffer.from('}')]), null, 'not marked shared');
  t.equal(gzipParts([]), null);
  t.end();
});

t.test('an answer around a shared preserialized field', async (t) => {
  const shared = markShared(presenceJson(1000));
  const data = { presence_last_update_id: 9 };
  putPreserialized(data, 'presences', [shared]);
  const parts = successBody(data, []) as Buffer[];
  const member = Buffer.concat(await gzipWhenReady(parts));
  const back = JSON.parse(zlib.gunzipSync(member).toString()) as Record<string, unknown>;
  t.equal(back.result, 'success');
  t.equal(back.presence_last_update_id, 9);
  t.equal(Object.keys(back.presences as object).length, 1000);
});

t.test('views of a shared part reuse the segments they cover whole', async (t) => {
  // Not a whole number of segments: the last one is short.
  const shared = markShared(presenceJson(4000));
  t.ok(shared.length > 5 * SEGMENT && shared.length % SEGMENT !== 0);
  await gzipWhenReady([shared]);
  const cuts: [number, number][] = [
    [0, 0],
    [shared.length, shared.length],
    [1, shared.length - 1],
    [SEGMENT, 3 * SEGMENT],
    [SEGMENT - 1, 3 * SEGMENT + 1],
    [100, 200],
    [2 * SEGMENT + 5, shared.length],
    [shared.length - 10, shared.length],
    [0, SEGMENT],
  ];
  for (const [a, b] of cuts) {
    const own = Buffer.from('{"id":7,"own":true}');
    // An answer's splice: before its own entry, the entry, after it (src/queries/state/users.ts).
    const parts = [
      Buffer.from('['),
      shared.subarray(0, a),
      own,
      shared.subarray(b),
      Buffer.from(']'),
    ];
    const plain = Buffer.concat(parts);
    const member = Buffer.concat(gzipParts(parts)!);
    t.same(zlib.gunzipSync(member), plain, `spliced at ${a}..${b}: gunzip reads it back`);
    t.same(zlib.inflateRawSync(member.subarray(10, member.length - 8)), plain, 'strict inflate');
    t.equal(member.readUInt32LE(member.length - 8), zlib.crc32(plain), 'CRC-32');
    // At most the two partial segments go stored.
    t.ok(
      member.length < plain.length / 3 + 2 * SEGMENT,
      `${member.length} of ${plain.length} bytes`,
    );
  }
  // A view alone, inside one segment: nothing whole to reuse, still one valid member.
  const inner = [shared.subarray(10, 20)];
  t.same(zlib.gunzipSync(Buffer.concat(gzipParts(inner)!)), shared.subarray(10, 20));
  // A Buffer over other memory is not taken for a view.
  t.equal(gzipParts([Buffer.from(shared.subarray(0, 100))]), null, 'a copy is not a view');
});
