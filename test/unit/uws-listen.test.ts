/**
 * A server's port is its own (src/http/uws.ts `listen`): uSockets would set SO_REUSEPORT, and a
 * second server started on a port in use would then listen too, the kernel splitting the
 * connections between two unrelated servers. Listening is exclusive: the second start fails and
 * every request still reaches the first. (A port the kernel chose, port 0, is never shared: the
 * test names its port, as a deployment or a cluster's node does.)
 */
import net from 'node:net';
import t from 'tap';
import { closeListenSocket, createApp, listen } from '../../src/http/uws.js';

t.test(
  'a second server on a port in use fails to start; the first keeps all requests',
  async (t) => {
    const first = createApp();
    first.get('/*', (res) => void res.end('first'));
    const a = await listen(first, '127.0.0.1', await freePort());
    t.teardown(() => closeListenSocket(a.socket));

    const second = createApp();
    second.get('/*', (res) => void res.end('second'));
    await t.rejects(listen(second, '127.0.0.1', a.port), /cannot listen on 127\.0\.0\.1:\d+/);

    const answers = new Set<string>();
    for (let i = 0; i < 20; i++) {
      // A new connection each time: the kernel would spread connections, not requests.
      const r = await fetch(`http://127.0.0.1:${a.port}/`, { headers: { connection: 'close' } });
      answers.add(await r.text());
    }
    t.same([...answers], ['first'], 'every request answered by the first server');
  },
);

/** A port free a moment ago. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
