/**
 * Restart without loss: a graceful shutdown answers held polls, closes sockets (1001) and saves
 * every queue; the next process restores them, so clients keep polling the same queue_id with the
 * same ids, and receive a `restart` event.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ApiClient, assertError, assertSuccess } from '../helpers/api.js';
import { events, mustOpen, poll, register, until } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { createChannel } from '../helpers/channels.js';
import { fetchNarrow, sendChannelMessage } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';
import { createServer } from '../../src/server.js';
import { SERVICE_FEATURE_LEVEL, SERVICE_MERGE_BASE, SERVICE_VERSION } from '../../src/version.js';

/** A server (as test/helpers/server.ts starts one) on an existing data directory. */
const serverOn = (dataDir: string) => ({
  host: '127.0.0.1',
  port: 0,
  scryptN: 1024,
  externalHost: 'testserver.local',
  rateLimits: null,
  dataDir,
});

t.test('queues survive a graceful restart and get a restart event', async (t) => {
  const first = await startServer(t);
  const { api, fx, server, dataDir } = first;
  const hamlet = await register(t, api, 'hamlet');
  const quiet = await register(t, api, 'othello', { event_types: ['typing'] });
  const streamed = await register(t, api, 'cordelia');
  const waiting = await register(t, api, 'iago');

  const type = (a: ApiClient, op: string, to: number[]) => a.post('shiva', 'typing', { op, to });
  await type(api, 'start', [fx.users.hamlet!.id, fx.users.othello!.id]);
  await type(api, 'stop', [fx.users.hamlet!.id, fx.users.othello!.id]);
  t.equal(
    (await events(t, api, 'hamlet', hamlet.queue_id, 0, true)).length,
    1,
    'event 0 acknowledged',
  );

  const ws = await mustOpen(t, server.url, fx.users.cordelia!, {
    queue_id: streamed.queue_id,
    last_event_id: -1,
  });
  const held = poll(api, 'iago', waiting.queue_id, -1);
  await until(() => server.context.queues.consumers().waiting === 1, 'the poll is held');

  await server.close();
  t.same(assertSuccess(t, await held).events, [], 'a held poll is answered at shutdown');
  t.same(await ws.closed, { code: 1001, reason: 'server restarting' });

  const second = await createServer(serverOn(dataDir));
  t.teardown(() => second.close());
  const api2 = new ApiClient(second.url, fx);

  const body = assertSuccess(t, await poll(api2, 'hamlet', hamlet.queue_id, 0, true));
  assertMatchesOpenApi(t, '/events', 'get', body);
  t.match(body.events, [
    { id: 1, type: 'typing', op: 'stop' },
    {
      id: 2,
      type: 'restart',
      service_version: SERVICE_VERSION,
      service_merge_base: SERVICE_MERGE_BASE,
      service_feature_level: SERVICE_FEATURE_LEVEL,
    },
  ]);
  const restart = (body.events as { server_generation: number }[])[1]!;
  t.type(restart.server_generation, 'number');
  assertError(
    t,
    await poll(api2, 'hamlet', hamlet.queue_id, -1, true),
    'An event newer than -1 has already been pruned!',
    {},
  );

  t.same(
    (await events(t, api2, 'othello', quiet.queue_id, -1, true)).map((e) => e.op ?? e.type),
    ['start', 'stop'],
    'a queue that did not ask for restart events gets none',
  );

  // The socket client reconnects to its queue and finds what it had not acknowledged.
  const ws2 = await mustOpen(t, second.url, fx.users.cordelia!, {
    queue_id: streamed.queue_id,
    last_event_id: -1,
  });
  t.same(
    (await ws2.nextEvents(1)).map((e) => e.type),
    ['restart'],
  );

  // New events keep numbering from where the queue was.
  await type(api2, 'start', [fx.users.hamlet!.id]);
  t.match(await events(t, api2, 'hamlet', hamlet.queue_id, 2, true), [{ id: 3, type: 'typing' }]);

  // Registering still works and snapshots come from the restored database.
  const fresh = await register(t, api2, 'hamlet', { event_types: ['realm'] });
  t.equal(fresh.body.realm_name, 'Zulip Dev');
});

t.test(
  'sends sent at once (sharing commits) are each stored and found by search after a restart',
  async (t) => {
    const { api, fx, server, dataDir } = await startServer(t);
    await createChannel(api, 'hamlet', 'Verona', {
      principals: [fx.users.hamlet!.id, fx.users.othello!.id],
    });
    // All at once: the realm actor gathers what arrives within its commit spacing into one commit.
    const n = 12;
    const ids = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        sendChannelMessage(api, 'hamlet', 'Verona', 'gathered', `together word${i}x elsinore`),
      ),
    );
    t.equal(new Set(ids).size, n, 'every send acknowledged with its own id');
    await server.close();

    const second = await createServer(serverOn(dataDir));
    t.teardown(() => second.close());
    const api2 = new ApiClient(second.url, fx);
    const search = (who: string, words: string) =>
      fetchNarrow(api2, who, [{ operator: 'search', operand: words }]);
    t.same(
      (await search('othello', 'elsinore')).ids,
      [...ids].sort((a, b) => a - b),
      'all found',
    );
    for (let i = 0; i < n; i++) {
      t.same((await search('hamlet', `word${i}x`)).ids, [ids[i]], `word${i}x: its own message`);
    }
  },
);

t.test('a shutdown step that fails is named, and the steps after it still run', async (t) => {
  const dataDir = t.testdir();
  const opts = serverOn(dataDir);
  const server = await createServer(opts);
  // The queues' temporary file cannot be written: a directory is in its place.
  fs.mkdirSync(path.join(dataDir, 'event-queues.msgpack.tmp'));
  await t.rejects(server.close(), /shutdown: saving the event queues failed/);
  // What came after ran: the database closed and the data directory released, so the next
  // server starts on it.
  fs.rmSync(path.join(dataDir, 'event-queues.msgpack.tmp'), { recursive: true });
  const next = await createServer(opts);
  t.teardown(() => next.close());
  t.equal((await fetch(`${next.url}/api/v1/server_settings`)).status, 200, 'the next one serves');
});
