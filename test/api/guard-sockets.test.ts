/**
 * The idle sweep of the event WebSockets the HTTP guard holds (src/http/guard-sockets.ts), against
 * the real server with a short idle period (httpGuardIdleMs): quiet sockets are pinged in slices
 * spread over the period and a socket heard from is not pinged; a client that answers pings (ws does
 * by default) stays open period after period and still gets its events; one that never answers is
 * closed by the server within two periods, its queue is detached on the main thread, and the
 * guard's descriptor for it is released.
 */
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import t from 'tap';
import WebSocket from 'ws';
import { basicAuth } from '../helpers/api.js';
import { mustOpen, register, until } from '../helpers/events.js';
import { startServer } from '../helpers/server.js';

/** The guard's idle period here (60 s by default). */
const IDLE_MS = 300;

/** A socket descriptor's link target in /proc/self/fd ('' if it closed meanwhile). */
function linkOf(fd: string): string {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return '';
  }
}

/**
 * Whether this process (the server, its guard's thread, the test's clients) holds a descriptor for
 * the server's end of the loopback TCP connection from `clientPort` to `serverPort`: its inode, as
 * /proc/net/tcp lists it, among this process's `socket:[inode]` descriptors.
 */
function holdsServerEnd(serverPort: number, clientPort: number): boolean {
  const mine = new Set(
    fs
      .readdirSync('/proc/self/fd')
      .map((fd) => /^socket:\[(\d+)\]$/.exec(linkOf(fd))?.[1])
      .filter((x): x is string => x !== undefined),
  );
  const port = (address: string | undefined) => parseInt(address?.split(':')[1] ?? '', 16);
  return fs
    .readFileSync('/proc/net/tcp', 'latin1')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .some(
      (f) => port(f[1]) === serverPort && port(f[2]) === clientPort && mine.has(f[9] ?? 'none'),
    );
}

/** An events socket whose client never answers a ping (ws's autoPong off); its local port. */
function openSilent(
  baseUrl: string,
  user: { email: string; api_key: string },
  queueId: string,
): Promise<{ ws: WebSocket; localPort: number }> {
  const url = new URL('/api/v1/events/socket', baseUrl.replace(/^http/, 'ws'));
  url.searchParams.set('queue_id', queueId);
  url.searchParams.set('last_event_id', '-1');
  const ws = new WebSocket(url, {
    headers: { authorization: basicAuth(user.email, user.api_key) },
    autoPong: false,
  });
  return new Promise((resolve, reject) => {
    let localPort = 0;
    ws.once('upgrade', (res: IncomingMessage) => (localPort = res.socket.localPort ?? 0));
    ws.once('open', () => resolve({ ws, localPort }));
    ws.once('error', reject);
  });
}

t.test('the guard pings quiet sockets and closes one that never answers', async (t) => {
  const { api, server, fx, url } = await startServer(t, { httpGuardIdleMs: IDLE_MS });
  const hamlet = fx.users.hamlet!;
  const live = await register(t, api, 'hamlet');
  const silent = await register(t, api, 'hamlet');
  const liveQueue = server.context.queues.get(live.queue_id)!;
  const silentQueue = server.context.queues.get(silent.queue_id)!;

  // A ws client, answering pings as it does by default.
  const client = await mustOpen(t, url, hamlet, { queue_id: live.queue_id, last_event_id: -1 });
  let livePings = 0;
  client.ws.on('ping', () => livePings++);

  // A client that completes the handshake and then never answers a ping.
  const { ws: mute, localPort } = await openSilent(url, hamlet, silent.queue_id);
  const openedAt = Date.now();
  t.teardown(() => mute.terminate());
  let mutePings = 0;
  mute.on('ping', () => mutePings++);
  let muteClose: { code: number; at: number } | null = null;
  mute.on('close', (code: number) => (muteClose = { code, at: Date.now() }));
  await until(
    () => liveQueue.state === 'streaming' && silentQueue.state === 'streaming',
    'both sockets attached',
  );
  t.ok(localPort > 0 && holdsServerEnd(server.port, localPort), 'the guard holds the silent one');

  await until(() => muteClose !== null, 'the silent socket is closed', 10 * IDLE_MS);
  const closedAfter = muteClose!.at - openedAt;
  t.ok(mutePings >= 1, `it was pinged (${mutePings})`);
  t.equal(muteClose!.code, 1006, 'ended without a close frame (terminated)');
  t.ok(
    closedAfter >= IDLE_MS / 2 && closedAfter < 3 * IDLE_MS,
    `closed within two periods (${closedAfter} ms; a period is ${IDLE_MS} ms)`,
  );
  await until(
    () => !holdsServerEnd(server.port, localPort),
    'the guard released its descriptor',
    2_000,
  );
  t.pass('the guard’s descriptor for the silent socket is released');
  await until(() => silentQueue.state !== 'streaming', 'its queue detached', 2_000);
  t.pass('the main thread detached its queue');

  // The client that answers has been pinged period after period and is still open.
  await until(
    () => livePings >= 4 || client.ws.readyState !== WebSocket.OPEN,
    'four pings to the live client',
    20 * IDLE_MS,
  );
  t.equal(client.ws.readyState, WebSocket.OPEN, `still open after ${livePings} periods`);
  t.equal(liveQueue.state, 'streaming', 'its queue still attached');
  if (client.ws.readyState !== WebSocket.OPEN) return; // (no event would come)
  await api.post('othello', 'typing', { op: 'start', to: [hamlet.id] });
  t.match(await client.nextEvents(1), [{ type: 'typing', op: 'start' }], 'and still gets events');
});

t.test('quiet sockets are pinged in slices over the period, talking ones not at all', async (t) => {
  const { api, fx, url } = await startServer(t, { httpGuardIdleMs: IDLE_MS });
  const hamlet = fx.users.hamlet!;
  const N = 20;
  const firstPing: number[] = [];
  const clients = [];
  /** Once every socket is open: the first ping of each from then on is recorded. */
  let ready = false;
  for (let i = 0; i < N; i++) {
    const { queue_id } = await register(t, api, 'hamlet');
    const client = await mustOpen(t, url, hamlet, { queue_id, last_event_id: -1 });
    let pinged = false;
    client.ws.on('ping', () => {
      if (!ready || pinged) return;
      pinged = true;
      firstPing.push(Date.now());
    });
    clients.push(client);
  }
  ready = true;
  // One more that acknowledges every 50 ms, as a busy client does: never quiet for a period.
  const { queue_id } = await register(t, api, 'hamlet');
  const talker = await mustOpen(t, url, hamlet, { queue_id, last_event_id: -1 });
  // (Its first look may come before its first frame, which counts as quiet: pings are counted
  // from a period after it opened.)
  const countFrom = Date.now() + IDLE_MS;
  let talkerPings = 0;
  talker.ws.on('ping', () => {
    if (Date.now() >= countFrom) talkerPings++;
  });
  talker.ws.send('{"last_event_id": -1}');
  const acks = setInterval(() => talker.ws.send('{"last_event_id": -1}'), 50);
  t.teardown(() => clearInterval(acks));
  await until(() => firstPing.length === N, 'every quiet socket pinged', 20 * IDLE_MS);
  const spread = Math.max(...firstPing) - Math.min(...firstPing);
  // All at once (one sweep for every socket) would put them within a few milliseconds.
  t.ok(spread >= IDLE_MS / 3, `first pings spread over ${spread} ms of a ${IDLE_MS} ms period`);
  await new Promise((r) => setTimeout(r, 3 * IDLE_MS));
  // (At most once: a turn of this test's loop held past a whole period would look quiet; the old
  // sweep pinged every socket each period, three times here.)
  t.ok(talkerPings <= 1, `a socket heard from within every period is not pinged (${talkerPings})`);
  t.ok(
    clients.every((c) => c.ws.readyState === WebSocket.OPEN),
    'the quiet ones that answer stay open',
  );
  t.equal(talker.ws.readyState, WebSocket.OPEN);
});
