/**
 * Large answers (over 64 KiB, written a slice at a time: src/http/respond.ts sendInSlices) that
 * the socket takes whole at once: the answer arrives complete and nothing is logged as an
 * internal error. (Before, the router attached its abort handler to such a response after it was
 * complete, which uWS refuses: 'internal server error' logged for GET /messages, four times in
 * each CI run, though the client had its answer.)
 */
import t from 'tap';
import { assertSuccess } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { captureLog } from '../helpers/log.js';
import { seedChannelMessages } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';

t.test('a large answer written at once: complete, and no internal error logged', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const everyone = ['hamlet', 'othello'].map((n) => fx.users[n]!.id);
  const stream = await createChannel(api, 'othello', 'history', { principals: everyone });
  seedChannelMessages(ts, {
    senderId: fx.users.othello!.id,
    streamId: stream,
    topic: 'long',
    count: 1000,
    recipients: everyone,
    text: (i) => `message ${i} ${'x'.repeat(200)}`,
  });
  const log = captureLog(t);
  for (let i = 0; i < 5; i++) {
    const res = await api.get('hamlet', 'messages', {
      anchor: 'newest',
      num_before: 1000,
      num_after: 0,
      narrow: [{ operator: 'channel', operand: stream }],
    });
    const body = assertSuccess(t, res, `fetch ${i}`);
    t.equal((body.messages as unknown[]).length, 1000, `fetch ${i}: every message`);
    t.ok(res.text.length > 64 * 1024, `fetch ${i}: a large answer (${res.text.length} bytes)`);
  }
  t.same(
    log.filter((l) => l.level === 'error' || l.level === 'fatal').map((l) => l.msg),
    [],
    'no error logged',
  );
});
