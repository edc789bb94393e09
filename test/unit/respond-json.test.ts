/**
 * The responder's JSON assembly (src/http/respond.ts): preserialized chunks, strings and Buffers,
 * multi-byte text included, joined into exactly the bytes of the whole answer.
 */
import t from 'tap';
import { joinChunks, successJson } from '../../src/http/respond.js';
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
