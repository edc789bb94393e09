/**
 * LOG_REQUESTS against the real server: `errors` (npm start's default) writes the line of a
 * failed request (with the client's address, read as the answer is written) or of a slow one
 * (a held long-poll never is), and a summary line of every request; `all` a line per request;
 * `off` none.
 */
import t from 'tap';
import { writeRequestSummary } from '../../src/http/request-log.js';
import { register, until } from '../helpers/events.js';
import { captureLog } from '../helpers/log.js';
import { CLUSTER_MODE, startServer } from '../helpers/server.js';

type Line = Record<string, unknown>;
/** In cluster mode the servers are processes of their own: their log is not this process's. */
const skip = CLUSTER_MODE && 'cluster mode: the nodes log in processes of their own';
const requestLines = (lines: Line[]) => lines.filter((l) => l.msg === 'request');

/** The log's lines from now on, as they are when called (captureLog's array only grows). */
function from(all: Line[]): () => Line[] {
  const start = all.length;
  return () => all.slice(start);
}

t.test(
  'errors: a line per failed request, none for the others, and the summary',
  { skip },
  async (t) => {
    const log = captureLog(t);
    const { api, fx } = await startServer(t, { logRequests: 'errors' });
    // What starting the server requested is counted in a summary of its own.
    writeRequestSummary();
    const lines = from(log);
    const hamlet = fx.users.hamlet!.id;
    t.equal((await api.get('hamlet', 'users/me')).status, 200);
    t.equal((await api.get('hamlet', 'users/me')).status, 200);
    const missing = await api.get(null, '/api/v1/no/such/endpoint');
    t.equal(missing.status, 404);
    const bad = await api.get('hamlet', 'messages/123456789/history');
    t.equal(bad.status, 400);
    await until(() => requestLines(lines()).length >= 2, 'the two failures logged');
    const logged = requestLines(lines());
    t.equal(logged.length, 2, 'only the failures have a line');
    t.match(logged[0], {
      level: 'info',
      url: '(unmatched)',
      status: 404,
      userId: null,
      address: '127.0.0.1',
      reqId: /^[a-z0-9]+-[a-z0-9]+$/,
    });
    t.match(logged[1], {
      url: '/api/v1/messages/:message_id/history',
      status: 400,
      userId: hamlet,
      realmId: fx.realmId,
      address: '127.0.0.1',
    });
    t.type(logged[1]!.ms, 'number');

    writeRequestSummary();
    const summaries = lines().filter((l) => l.msg === 'requests');
    t.equal(summaries.length, 1);
    t.match(summaries[0], {
      level: 'info',
      requests: 4,
      statuses: { '2xx': 2, '3xx': 0, '4xx': 2, '5xx': 0, '499': 0 },
      slow: 0,
    });
    t.type(summaries[0]!.msMax, 'number');
    t.type(summaries[0]!.seconds, 'number');
    writeRequestSummary();
    t.equal(lines().filter((l) => l.msg === 'requests').length, 1, 'no requests, no summary line');
  },
);

t.test(
  'errors: a slow request has its line; a held long-poll is never slow',
  { skip },
  async (t) => {
    const log = captureLog(t);
    // Every request is "slow" from 0 ms on.
    const { api } = await startServer(t, { logRequests: 'errors', slowRequestMs: 0 });
    writeRequestSummary();
    const lines = from(log);
    const { queue_id, last_event_id } = await register(t, api, 'hamlet');
    const poll = await api.get('hamlet', 'events', { queue_id, last_event_id, dont_block: true });
    t.equal(poll.status, 200);
    t.equal((await api.get('hamlet', 'users/me')).status, 200);
    await until(
      () => requestLines(lines()).some((l) => l.url === '/api/v1/users/me'),
      'the slow request logged',
    );
    const urls = requestLines(lines()).map((l) => l.url);
    t.same(urls, ['/api/v1/register', '/api/v1/users/me'], 'not the poll');
    t.match(
      requestLines(lines()).find((l) => l.url === '/api/v1/users/me'),
      { status: 200, address: '127.0.0.1' },
      'the address of a slow request is read too',
    );
    writeRequestSummary();
    t.match(
      lines().find((l) => l.msg === 'requests'),
      { requests: 3, slow: 2, statuses: { '2xx': 3 } },
    );
  },
);

t.test('all: a line per request; off: none', { skip }, async (t) => {
  const log = captureLog(t);
  const all = await startServer(t, { logRequests: 'all' });
  const off = await startServer(t, { logRequests: 'off' });
  writeRequestSummary();
  const lines = from(log);
  t.equal((await off.api.get('hamlet', 'users/me')).status, 200);
  t.equal((await off.api.get(null, '/api/v1/no/such/endpoint')).status, 404);
  t.equal((await all.api.get('hamlet', 'users/me')).status, 200);
  await until(() => requestLines(lines()).length >= 1, 'the line of the request to `all`');
  t.match(requestLines(lines()), [{ url: '/api/v1/users/me', status: 200, address: '127.0.0.1' }]);
  writeRequestSummary();
  t.equal(lines().filter((l) => l.msg === 'requests').length, 0, 'neither counts for the summary');
});
