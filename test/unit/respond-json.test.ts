/**
 * The responder's JSON assembly (src/http/respond.ts): preserialized chunks, strings and Buffers,
 * multi-byte text included, joined into exactly the bytes of the whole answer.
 */
import v8 from 'node:v8';
import zlib from 'node:zlib';
import t from 'tap';
import { joinChunks, send, successBody, successJson } from '../../src/http/respond.js';
import { markShared } from '../../src/lib/shared-parts.js';
import { putPreserialized } from '../../src/lib/preserialized.js';
import { WRITE_JSON, type JsonWriter } from '../../src/lib/json-bytes.js';

/** A list that writes its own JSON, as GET /messages' FetchedMessages does. */
class WrittenList {
  constructor(readonly items: unknown[]) {}
  toJSON(): unknown[] {
    return this.items;
  }
  [WRITE_JSON](w: JsonWriter): void {
    w.writeValue(this.items);
  }
}

t.test('joinChunks writes every chunk once, in order, at its byte offset', (t) => {
  const chunks = ['{"a":"é日本"', Buffer.from(',"b":[1,2,'), '3],"c":"😀"', Buffer.alloc(0), '}'];
  const joined = joinChunks(chunks);
  t.same(joined, Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))));
  t.same(JSON.parse(joined.toString()), { a: 'é日本', b: [1, 2, 3], c: '😀' });
  t.equal(joinChunks([]).length, 0);
  t.end();
});

t.test('a plain answer: result and msg first, then the fields in order, ignored ones last', (t) => {
  t.equal(successBody(undefined, []), '{"result":"success","msg":""}');
  t.equal(successBody({}, []), '{"result":"success","msg":""}');
  t.equal(
    successBody(undefined, ['a']),
    '{"result":"success","msg":"","ignored_parameters_unsupported":["a"]}',
  );
  const data = { messages: [{ id: 1, content: 'é "x"' }], anchor: 1, found_newest: true };
  t.equal(
    successBody(data, ['x', 'y']),
    '{"result":"success","msg":"","messages":[{"id":1,"content":"é \\"x\\""}],"anchor":1,' +
      '"found_newest":true,"ignored_parameters_unsupported":["x","y"]}',
  );
  t.same(
    Object.keys(data),
    ['messages', 'anchor', 'found_newest'],
    "the handler's value is untouched",
  );
  const nested = { when: new Date(0), skipped: undefined };
  t.equal(
    successBody(nested, []),
    '{"result":"success","msg":"","when":"1970-01-01T00:00:00.000Z"}',
  );
  t.end();
});

t.test(
  'a plain answer is byte for byte the JSON of {result, msg, ...data}, whatever its keys',
  (t) => {
    // What successBody wrote before it put the prefix in front of the data's own JSON.
    const wrapper = (data: object | undefined, ignored: readonly string[]) =>
      JSON.stringify(
        ignored.length > 0
          ? { result: 'success', msg: '', ...data, ignored_parameters_unsupported: ignored }
          : { result: 'success', msg: '', ...data },
      );
    const text = (body: string | Buffer | Buffer[]) =>
      typeof body === 'string'
        ? body
        : Buffer.isBuffer(body)
          ? body.toString()
          : Buffer.concat(body).toString();
    class WithAccessor {
      own = 1;
      get hidden(): number {
        return 2;
      }
    }
    const cases: [string, object | undefined][] = [
      ['undefined', undefined],
      ['empty', {}],
      ['only undefined values', { a: undefined }],
      ['a user', { avatar_url: '/a.png', user_id: 7, profile_data: {}, timezone: '' }],
      ['integer-like first key', { 10: 'x', name: 'y' }],
      ['integer-like key only', { 5: true }],
      ['digit-led key', { '1x': 1, b: 2 }],
      ['result key', { x: 1, result: 'other' }],
      ['msg key', { msg: 'm', y: 2 }],
      ['toJSON', { toJSON: () => ({ z: 1 }), w: 2 }],
      ['a Date', new Date(0)],
      ['an array', [1, 2]],
      ['a class instance', new WithAccessor()],
      ['a symbol key', { [Symbol('s')]: 1, k: 'v' }],
      ['multi-byte', { s: 'é日本😀\u2028"\\' }],
      ['a field that writes itself', { messages: new WrittenList([{ id: 1, c: 'é"' }]), a: 1 }],
      ['only a field that writes itself', { messages: new WrittenList([]) }],
      ['writes itself, integer-like first key', { 7: 1, messages: new WrittenList([2]) }],
      [
        'large, multi-byte',
        {
          messages: Array.from({ length: 800 }, (_, i) => ({
            id: i,
            content: `<p>é日本 ${i}</p>`,
          })),
        },
      ],
      ['large, ASCII', { messages: Array.from({ length: 2000 }, (_, i) => ({ id: i, c: 'x' })) }],
    ];
    for (const [name, data] of cases) {
      for (const ignored of [[], ['p']]) {
        const body = successBody(data, ignored);
        t.equal(text(body), wrapper(data, ignored), `${name}, ${ignored.length} ignored`);
        t.equal(text(successJson(data, ignored)), wrapper(data, ignored), `${name}: successJson`);
        t.equal(
          text(successBody(data, ignored, true)),
          wrapper(data, ignored),
          `${name}: as a large answer, written as bytes`,
        );
      }
    }
    const large = successBody(cases[cases.length - 1]![1], []);
    t.ok(Buffer.isBuffer(large), 'a large answer comes as one Buffer, encoded once');
    t.end();
  },
);

/** Heap bytes allocated while `fn` runs: what the heap grew by plus what collections freed. */
function heapAllocatedBy(fn: () => void): number {
  const profiler = new v8.GCProfiler();
  const before = v8.getHeapStatistics().used_heap_size;
  profiler.start();
  fn();
  const after = v8.getHeapStatistics().used_heap_size;
  let freed = 0;
  for (const gc of profiler.stop().statistics) {
    freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
  }
  return after - before + freed;
}

t.test(
  'a large answer with a field that writes itself is written as bytes, its text never made on the heap',
  (t) => {
    // A 100-message fetch's shape: ~50 KB of JSON. Made as a string, its pieces and their flat
    // copy took ~2 bytes of heap per byte of answer; written as bytes, a few hundred bytes in all.
    const data = {
      messages: new WrittenList(
        Array.from({ length: 100 }, (_, i) => ({
          id: 900_000 + i,
          sender_id: 9,
          content: `<p>message number ${900_000 + i} about topic ${i % 50}</p>`,
          recipient_id: 14,
          timestamp: 1796400384,
          client: 'website',
          subject: `topic ${i % 50}`,
          topic_links: [],
          is_me_message: false,
          reactions: [],
          submessages: [],
          sender_full_name: 'User 1',
          sender_email: 'user1@bench.example',
          sender_realm_str: '',
          display_recipient: 'channel 3',
          type: 'stream',
          avatar_url: 'https://secure.gravatar.com/avatar/0123456789abcdef?d=identicon&version=1',
          content_type: 'text/html',
          stream_id: 4,
          flags: ['read'],
        })),
      ),
      anchor: 10_000_000_000_000_000,
      found_anchor: false,
      found_oldest: false,
      found_newest: true,
      history_limited: false,
    };
    const size = Buffer.byteLength(successJson(data, []));
    t.ok(size > 40_000, `a ${size}-byte answer`);
    // Warm: the scratch buffer grown, and the writer optimized. Until V8 has optimized it, a
    // call allocates ~26 KB (its unoptimized code boxes what it writes); after 3 calls that was
    // so in 3 runs of 10, and in one CI run (2026-12-05). V8 optimizes on another thread, which a
    // loaded machine can hold back: the samples go on (at most 50) until one is under the bound.
    // Text made on the heap would put every sample over it (~2 bytes per byte of answer).
    for (let i = 0; i < 300; i++) successBody(data, [], true);
    let least = Infinity;
    for (let i = 0; i < 50 && least >= size / 10; i++)
      least = Math.min(
        least,
        heapAllocatedBy(() => successBody(data, [], true)),
      );
    t.ok(least < size / 10, `heap allocated: ${least} bytes (under a tenth of the answer's size)`);
    t.end();
  },
);

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
function slowResponse(capacity: number, acceptEncoding = '') {
  let written = Buffer.alloc(0);
  const headers: Record<string, string> = {};
  let writable: ((offset: number) => boolean) | null = null;
  let complete = false;
  const res = {
    cork: (fn: () => void) => fn(),
    writeStatus: () => res,
    writeHeader: (k: string, v: string) => {
      headers[k] = v;
      return res;
    },
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
  const ctx = {
    aborted: false,
    done: false,
    status: 0,
    rate: null,
    acceptEncoding,
    onAbort: () => undefined,
    answering: () => undefined,
  };
  /** Makes the socket writable until the response is complete (a bounded number of times). */
  const drain = () => {
    for (let i = 0; i < 10_000 && !complete && writable; i++) writable(written.length);
  };
  return { res, ctx, drain, headers, body: () => written, complete: () => complete };
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

t.test('a large answer around a shared part goes gzipped to a client that takes it', async (t) => {
  const entries = Array.from({ length: 3000 }, (_, i) => `"${i}":{"active_timestamp":${i}}`);
  const data = { presence_last_update_id: 4 };
  putPreserialized(data, 'presences', [markShared(Buffer.from(`{${entries.join(',')}}`))]);
  const plain = Buffer.concat(successBody(data, []) as Buffer[]);
  // The shared part's compression runs in zlib's thread pool: the first answers go as they are.
  let r = slowResponse(1 << 20, 'gzip, deflate');
  // (Bounded by time, not tries: on a loaded machine the pool's threads wait for a core.)
  for (
    const start = Date.now();
    Date.now() - start < 60_000 && r.headers['Content-Encoding'] === undefined;
  ) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    r = slowResponse(1 << 20, 'gzip, deflate');
    send(r.res as never, r.ctx as never, 200, successBody(data, []));
    r.drain();
  }
  t.equal(r.headers['Content-Encoding'], 'gzip');
  t.equal(r.headers.Vary, 'Accept-Encoding');
  t.ok(r.body().length < plain.length / 2, 'smaller');
  t.same(zlib.gunzipSync(r.body()), plain, 'the same answer once gunzipped');
  const identity = slowResponse(1 << 20);
  send(identity.res as never, identity.ctx as never, 200, successBody(data, []));
  identity.drain();
  t.equal(identity.headers['Content-Encoding'], undefined, 'no Accept-Encoding: as it is');
  t.equal(identity.headers.Vary, 'Accept-Encoding');
  t.same(identity.body(), plain);
  const refused = slowResponse(1 << 20, 'gzip;q=0');
  send(refused.res as never, refused.ctx as never, 200, successBody(data, []));
  refused.drain();
  t.equal(refused.headers['Content-Encoding'], undefined, 'gzip refused: as it is');
});
