/**
 * A local HTTP server standing in for a third-party host in image-proxy tests: serves a few
 * fixed answers by path and counts the requests it gets.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import type { Test } from 'tap';

export type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export type ThirdParty = { port: number; url(path: string): string; hits: Map<string, number> };

export async function startThirdParty(t: Test, routes: Record<string, Route>): Promise<ThirdParty> {
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const p = (req.url ?? '/').split('?')[0]!;
    hits.set(p, (hits.get(p) ?? 0) + 1);
    const route = routes[p];
    if (route) route(req, res);
    else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('no');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const port = (server.address() as AddressInfo).port;
  return { port, hits, url: (path) => `http://127.0.0.1:${port}${path}` };
}

/** A third party serving one small PNG (of `background`) at `/cat.png`: the server and the image. */
export async function thirdPartyImage(
  t: Test,
  background: string,
): Promise<{ thirdParty: ThirdParty; cat: Buffer }> {
  const cat = await sharp({ create: { width: 40, height: 30, channels: 3, background } })
    .png()
    .toBuffer();
  const thirdParty = await startThirdParty(t, {
    '/cat.png': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(cat);
    },
  });
  return { thirdParty, cat };
}
