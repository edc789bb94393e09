/**
 * The responder's JSON assembly (src/http/respond.ts): preserialized chunks, strings and Buffers,
 * multi-byte text included, joined into exactly the bytes of the whole answer.
 */
import t from 'tap';
import { joinChunks, send, successBody, successJson } from '../../src/http/respond.js';
import { putPreserialized } from '../../src/lib/preserialized.js';

t.test('joinChunks writes every chunk once, in order, at its byte offset', (t) => {
  const chunks = ['{"a":"é日本"', Buffer.from(',"b":[1,2,'), '3],"c":"😀"', Buffer.alloc(0), '}'];
  const joined = joinChunks(chunks);
  t.same(joined, Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))));
  t.same(JSON.parse(joined.toString()), { a: 'é日本', b: [1, 2, 3], c: '😀' });
  t.equal(joinChunks([]).length, 0);
  t.end();
});

t.test('successJson with preserialized fields is the JSON of the whole answer', (t) => {
  const data = { presence_last_update_id: 7, server_timestamp: 1.5 };
  putPreserialized(data, 'presences', [
    '{',
    Buffer.from('"10":{"idle_timestamp":1}'),
    ',"11":{}',
    '}',
  ]);
  const wire = successJson(data, ['x']);
  t.ok(Buffer.isBuffer(wire));
  const parts = successBody(data, ['x']);
  t.ok(Array.isArray(parts), 'in parts for send');
  t.same(Buffer.concat(parts as Buffer[]), wire, 'the same bytes');
  t.same(JSON.parse(wire.toString()), {
    result: 'success',
    msg: '',
    presence_last_update_id: 7,
    server_timestamp: 1.5,
    presences: { '10': { idle_timestamp: 1 }, '11': {} },
    ignored_parameters_unsupported: ['x'],
  });
  t.end();
});

/**
 * A response as uWS gives it, over a socket that takes `capacity` bytes per write until the
 * test makes it writable again: what `send` wrote, and whether the response completed.
 */
function slowResponse(capacity: number) {
  let written = Buffer.alloc(0);
  let writable: ((offset: number) => boolean) | null = null;
  let complete = false;
  const res = {
    cork: (fn: () => void) => fn(),
    writeStatus: () => res,
    writeHeader: () => res,
    end: (body: string | Buffer) => {
      written = Buffer.concat([written, Buffer.from(body)]);
      complete = true;
    },
    tryEnd: (chunk: Buffer, total: number): [boolean, boolean] => {
      const taken = chunk.subarray(0, capacity);
      written = Buffer.concat([written, taken]);
      complete = written.length === total;
      return [taken.length === chunk.length, complete];
    },
    getWriteOffset: () => written.length,
    onWritable: (fn: (offset: number) => boolean) => {
      writable = fn;
    },
  };
  const ctx = { aborted: false, done: false, status: 0, rate: null, onAbort: () => undefined };
  /** Makes the socket writable until the response is complete (a bounded number of times). */
  const drain = () => {
    for (let i = 0; i < 10_000 && !complete && writable; i++) writable(written.length);
  };
  return { res, ctx, drain, body: () => written, complete: () => complete };
}

t.test('a large answer in parts reaches a slow socket whole, across part boundaries', (t) => {
  const parts = [
    Buffer.from('{"a":"' + 'x'.repeat(70_000)),
    Buffer.from('é'.repeat(10)),
    Buffer.alloc(0),
    Buffer.from('y'.repeat(100_000) + '"}'),
  ];
  for (const capacity of [1000, 65_536, 70_003, 1 << 20]) {
    const r = slowResponse(capacity);
    send(r.res as never, r.ctx as never, 200, parts);
    r.drain();
    t.ok(r.complete(), `complete (socket takes ${capacity} bytes at a time)`);
    t.same(r.body(), Buffer.concat(parts), 'every byte, in order');
  }
  const small = slowResponse(10);
  send(small.res as never, small.ctx as never, 200, [Buffer.from('{"a":'), Buffer.from('1}')]);
  t.equal(small.body().toString(), '{"a":1}', 'a small answer in parts is joined and ended');
  t.end();
});
