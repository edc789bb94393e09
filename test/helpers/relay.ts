import net from 'node:net';
import type { Test } from 'tap';

export type Relay = {
  url: string;
  target: { port: number };
  /**
   * Holds every byte, both ways, on the connections open and on those that come: what a server
   * stopped dead (SIGSTOP) or a network that drops everything looks like to the client. Its
   * connections stay open; nothing on them is answered.
   */
  freeze(): void;
  /**
   * Lets the bytes held through again, in order; a connection one end closed meanwhile is closed
   * at the other without them (the client gave up on it: the server never hears of it).
   */
  thaw(): void;
};

type Link = {
  down: net.Socket;
  up: net.Socket;
  /** Bytes held while frozen, with the socket they were on their way to. */
  held: [net.Socket, Buffer][];
  /** An end closed while frozen. */
  broken: boolean;
};

/**
 * A TCP relay on a port of its own, to whichever server `target` names: the client keeps one URL
 * while the server behind it stops and starts again on another ephemeral port, or freezes.
 */
export async function relay(t: Test): Promise<Relay> {
  const target = { port: 0 };
  const links = new Set<Link>();
  let frozen = false;
  const drop = (l: Link) => {
    l.down.destroy();
    l.up.destroy();
    links.delete(l);
  };
  const srv = net.createServer((down) => {
    const up = net.connect(target.port, '127.0.0.1');
    const l: Link = { down, up, held: [], broken: false };
    links.add(l);
    for (const [from, to] of [
      [down, up],
      [up, down],
    ] as const) {
      from.on('data', (chunk: Buffer) => {
        if (frozen) l.held.push([to, chunk]);
        else to.write(chunk);
      });
      from.on('end', () => {
        if (frozen) l.broken = true;
        else to.end();
      });
      from.on('close', () => {
        if (frozen) l.broken = true;
        else {
          to.end();
          links.delete(l);
        }
      });
      from.on('error', () => (frozen ? (l.broken = true) : drop(l)));
    }
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const l of links) drop(l);
    srv.close();
  });
  return {
    url: `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`,
    target,
    freeze: () => {
      frozen = true;
    },
    thaw: () => {
      frozen = false;
      for (const l of [...links]) {
        if (l.broken) drop(l);
        else for (const [to, chunk] of l.held.splice(0)) to.write(chunk);
      }
    },
  };
}
