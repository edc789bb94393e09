import net from 'node:net';
import type { Test } from 'tap';

/**
 * A TCP relay on a port of its own, to whichever server `target` names: the client keeps one URL
 * while the server behind it stops and starts again on another ephemeral port.
 */
export async function relay(t: Test): Promise<{ url: string; target: { port: number } }> {
  const target = { port: 0 };
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((down) => {
    const up = net.connect(target.port, '127.0.0.1');
    for (const s of [down, up]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        down.destroy();
        up.destroy();
      });
    }
    down.pipe(up).pipe(down);
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    srv.close();
  });
  return { url: `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`, target };
}
