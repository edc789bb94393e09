/**
 * A process hosting one cluster node at a time for the API tests' cluster mode
 * (cluster-server.ts): the test process forks it once and, for each test server, tells it over
 * IPC to start a node with the test's options (createServer with `cluster`, as
 * src/cluster/main.ts does) and later to stop it. One host serves many test servers, so the
 * server's modules load once per test file instead of once per test server.
 */
import { createServer, type ConfabServer, type ServerOptions } from '../../src/server.js';

export type HostCommand =
  { cmd: 'start'; options: ServerOptions } | { cmd: 'stop' } | { cmd: 'exit' };

export type HostReply = { ok: true; url?: string } | { ok: false; error: string };

let server: ConfabServer | null = null;

async function handle(c: HostCommand): Promise<HostReply> {
  switch (c.cmd) {
    case 'start':
      if (server) throw new Error('a node is running already');
      server = await createServer(c.options);
      return { ok: true, url: server.url };
    case 'stop': {
      const s = server;
      server = null;
      await s?.close();
      return { ok: true };
    }
    case 'exit':
      await server?.close();
      process.exit(0);
  }
}

// Commands come one at a time: the test process waits for each reply.
process.on('message', (c: HostCommand) => {
  handle(c).then(
    (reply) => process.send!(reply),
    (err: unknown) =>
      process.send!({
        ok: false,
        error: err instanceof Error ? (err.stack ?? err.message) : String(err),
      } satisfies HostReply),
  );
});
// The test process is gone: nothing will stop this node otherwise.
process.on('disconnect', () => process.exit(0));
process.send!({ ok: true } satisfies HostReply);
