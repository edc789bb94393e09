/**
 * Rate limits through the proxy of a three-node cluster (docs/cluster.md "Rate limits";
 * src/cluster/rate-share.ts), the default rules on: nginx spreads a client's requests over the
 * nodes, and the client meets the single-process limits within the stated tolerance (the
 * requests that reach other nodes while a count travels: for the API limits, those of SHARE_MS
 * plus a margin at the rate measured; for login and failed authentications, told at once, one),
 * not three times them:
 *  - 300 API requests by one user (200 a minute), six at a time;
 *  - ten wrong passwords for one username (5 per 30 minutes), one after another;
 *  - 40 wrong API keys for one account from one address (30 a minute), one after another.
 * Also DELETE /events with the queue id in the body through the proxy (the proxy cannot route it;
 * the node that gets it asks the queue's node over NATS), for queues on every node.
 * Skipped without nats-server or nginx.
 */
import t from 'tap';
import { SHARE_MS } from '../../src/cluster/rate-share.js';
import { ApiClient, assertError, assertSuccess, basicAuth, rawRequest } from '../helpers/api.js';
import { clusterRealmFixture } from '../helpers/cluster-fixture.js';
import { register } from '../helpers/events.js';
import { runWithEngines, upForTest } from '../helpers/cluster-run.js';

await runWithEngines(run);

async function run(): Promise<void> {
  const { rec } = await upForTest('cluster-limits', { RATE_LIMITING: 'on' });
  const fx = await clusterRealmFixture(rec.url, {}, rec.owner, 1);
  const api = new ApiClient(rec.url, fx);
  const nodeUrl = (i: number) => `http://127.0.0.1:${rec.nodes[i]!.port}`;

  t.test('the per-user API limit through the proxy is the single-process one', async (t) => {
    const started = performance.now();
    let passed = 0;
    let limited = 0;
    let sent = 0;
    const worker = async () => {
      while (sent < 300) {
        sent++;
        const r = await api.get('hamlet', 'users/me');
        if (r.status === 200) passed++;
        else if (r.status === 429) limited++;
        else throw new Error(`unexpected ${r.status}: ${r.text}`);
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    const seconds = (performance.now() - started) / 1000;
    // A single process: the 200 of the window, plus what its refill gave meanwhile.
    const single = 200 + Math.floor((seconds * 200) / 60);
    const rate = 300 / seconds;
    const tolerance = Math.ceil((rate * (SHARE_MS + 50)) / 1000) + 2;
    t.ok(limited > 0, `some requests were refused (${limited} of 300)`);
    t.ok(
      passed <= single + tolerance,
      `${passed} passed in ${seconds.toFixed(1)} s: at most ${single} + ${tolerance}`,
    );
    t.ok(passed >= Math.min(300, 200), `at least the window's 200 passed (${passed})`);
  });

  t.test('login attempts per username through the proxy: five, as one process', async (t) => {
    let answered = 0;
    let limited = 0;
    for (let i = 0; i < 10; i++) {
      const r = await api.post(null, 'fetch_api_key', {
        username: fx.users.othello!.email,
        password: `wrong-${i}`,
      });
      if (r.status === 429) limited++;
      else {
        assertError(t, r, 'Your username or password is incorrect', {
          status: 401,
          code: 'AUTHENTICATION_FAILED',
        });
        answered++;
      }
    }
    t.ok(answered >= 5 && answered <= 6, `${answered} attempts checked (the limit: 5)`);
    t.equal(answered + limited, 10);
  });

  t.test('failed authentications per address and account through the proxy', async (t) => {
    let answered = 0;
    for (let i = 0; i < 40; i++) {
      const r = await rawRequest(rec.url, {
        method: 'GET',
        path: '/api/v1/users/me',
        headers: { authorization: basicAuth(fx.users.hamlet!.email, `guess-${i}`) },
      });
      if (r.status === 401) answered++;
      else if (r.status !== 429) throw new Error(`unexpected ${r.status}: ${r.text}`);
    }
    t.ok(answered >= 30 && answered <= 31, `${answered} failures checked (the limit: 30)`);
  });

  t.test('DELETE /events with queue_id in the body, through the proxy', async (t) => {
    for (const [i, n] of rec.nodes.entries()) {
      const direct = new ApiClient(nodeUrl(i), fx);
      for (let k = 0; k < 4; k++) {
        const q = await register(t, direct, 'othello', { event_types: ['message'] });
        t.match(q.queue_id, new RegExp(`^${n.name}-`), `a queue on ${n.name}`);
        assertSuccess(
          t,
          await api.request('DELETE', 'othello', 'events', { queue_id: q.queue_id }),
          `deleted through the proxy, the id in the body`,
        );
        const gone = await direct.get('othello', 'events', {
          queue_id: q.queue_id,
          last_event_id: -1,
          dont_block: true,
        });
        t.equal(gone.body.code, 'BAD_EVENT_QUEUE_ID', `gone from ${n.name}`);
      }
    }
    // Another user's queue: the owner's, whose API allowance no test above has spent (hamlet's
    // window of 200 was spent by the first test and refills over a minute).
    const owners = await register(t, new ApiClient(nodeUrl(1), fx), 'owner', {});
    assertError(
      t,
      await api.request('DELETE', 'othello', 'events', { queue_id: owners.queue_id }),
      'You are not authorized to access this queue',
    );
    const kept = await new ApiClient(nodeUrl(1), fx).get('owner', 'events', {
      queue_id: owners.queue_id,
      last_event_id: -1,
      dont_block: true,
    });
    t.equal(kept.status, 200, "another user's queue is refused and kept");
    const unknown = await api.request('DELETE', 'othello', 'events', { queue_id: 'n9-nothing' });
    t.equal(
      unknown.body.code,
      'BAD_EVENT_QUEUE_ID',
      'a queue of no running node: BAD_EVENT_QUEUE_ID',
    );
  });
}
