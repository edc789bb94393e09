/**
 * The web app in chromium, staying connected (issue 30 Part B 1, and the events over the
 * WebSocket): a graceful server restart mid-session ("Trying again…", then the same queue:
 * nothing lost, nothing twice), a server frozen (the silent socket taken for lost, a send shown
 * as not sent, "Try now", all caught up after; and back without its queue: the unsent message
 * kept; a send given up on that the server took after all: not shown as not sent), a lost
 * event queue registered again with the view refreshed, the event WebSocket
 * killed mid-stream with a frame lost in flight (long-polling takes over, then a new socket;
 * every message once, in order); and keyboard-only use: log in, Ctrl+K, `n`, `r`, Esc, the
 * message list's arrows, visible focus and accessible names.
 */
import t, { type Test } from 'tap';
import WebSocket from 'ws';
import { messageTexts, openApp, waitFor, waitLive, waitMessage } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot, watchPage } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { createChannel } from '../helpers/channels.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { relay } from '../helpers/relay.js';
import { restartServer, startServer } from '../helpers/server.js';

const { b } = browserSuite(t);
// The tests run side by side, each with its own server and pages (`b.of(t)`): most of their
// time is spent waiting on the app's clocks (a silent socket taken for lost after 4 s, a send
// given up on after 15 s, a socket tried again 5 s after it fell), which need no machine.
t.jobs = 4;

const count = (texts: string[], s: string) => texts.filter((x) => x === s).length;

t.test('a server restart mid-session: nothing lost or doubled', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const front = await relay(t);
  front.target.port = ts.server.port;
  const everyone = ['hamlet', 'othello'].map((n) => ts.fx.users[n]!.id);
  const id = await createChannel(ts.api, 'othello', 'general', { principals: everyone });
  const { page, watch } = await openApp(b.of(t), front.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${id}-general`,
  });
  await sendChannelMessage(ts.api, 'othello', 'general', 'restart', 'before the restart');
  await waitMessage(page, 'before the restart');

  await ts.server.close();
  await page.waitForSelector('.banner >> text=Trying again');
  await screenshot(page, t, 'reconnecting-1280');
  t.pass('"Trying again…" while the server is away');
  const again = await restartServer(t, ts.dataDir, ts.fx);
  front.target.port = again.server.port;
  await page.waitForSelector('.banner', { state: 'detached', timeout: 60_000 });
  await sendChannelMessage(again.api, 'othello', 'general', 'restart', 'after the restart');
  await waitMessage(page, 'after the restart');
  const texts = await messageTexts(page);
  t.equal(count(texts, 'before the restart'), 1, 'the earlier message once');
  t.equal(count(texts, 'after the restart'), 1, 'the later one once');
  t.equal(
    await page.locator('.toast >> text=Reconnected').count(),
    0,
    'the same queue: no new registration',
  );
  watch.assertClean(
    t,
    /WebSocket|status of 401|ERR_CONNECTION|ERR_EMPTY_RESPONSE|Failed to load resource/,
  );
});

/**
 * A server beating every 2 s (it then tells clients to give up on a connection silent for 4 s:
 * event_queue_longpoll_timeout_seconds, twice its longest interval) behind a relay the test can
 * freeze; hamlet's app at `topic` of a channel shared with othello, on its event socket.
 */
async function behindRelay(t: Test, topic: string) {
  const ts = await startServer(t, { heartbeatMs: 2000, heartbeatJitterMs: 0 });
  const front = await relay(t);
  front.target.port = ts.server.port;
  const everyone = ['hamlet', 'othello'].map((n) => ts.fx.users[n]!.id);
  const id = await createChannel(ts.api, 'othello', 'general', { principals: everyone });
  const { page, watch } = await openApp(b.of(t), front.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${id}-general/topic/${topic}`,
  });
  await waitFor(page, `document.querySelector('.app').dataset.transport === 'socket'`);
  return { ts, front, page, watch };
}

t.test('the server frozen: a banner, a send marked not sent, then caught up once', async (t) => {
  if (NO_CHROMIUM) return;
  const { ts, front, page, watch } = await behindRelay(t, 'frozen');
  await sendChannelMessage(ts.api, 'othello', 'general', 'frozen', 'before the freeze');
  await waitMessage(page, 'before the freeze');

  // The server stops answering, its connections open: the socket falls silent.
  front.freeze();
  const frozenAt = Date.now();
  await page.waitForSelector('.banner >> text=Trying again', { timeout: 20_000 });
  t.pass(`the banner after ${Date.now() - frozenAt} ms of silence`);
  await sendChannelMessage(ts.api, 'othello', 'general', 'frozen', 'sent during the freeze');
  await page.click('#compose-text');
  await page.keyboard.type('mine, during the freeze');
  await page.keyboard.press('Enter');
  await waitMessage(page, 'mine, during the freeze');
  // Not answered: shown as not sent, with a way to send it again (a bounded wait).
  await page.waitForSelector('.send-state.failed >> text=Try again', { timeout: 30_000 });
  for (const width of [1280, 390])
    for (const scheme of ['light', 'dark'] as const) {
      await page.setViewportSize({ width, height: 800 });
      await page.emulateMedia({ colorScheme: scheme });
      // (The banner's dot pulses for ever; the rest settles.)
      await waitFor(
        page,
        `document.getAnimations().every((a) => a.effect.getTiming().iterations === Infinity)`,
      );
      await screenshot(page, t, `frozen-${width}-${scheme}`);
    }
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: 'light' });
  t.equal(await messageTexts(page).then((x) => count(x, 'sent during the freeze')), 0, 'not yet');

  front.thaw();
  // "Try now": no waiting out the backoff (the banner may have gone by itself meanwhile).
  await page.evaluate(`document.querySelector('.banner button')?.click()`);
  await page.waitForSelector('.banner', { state: 'detached', timeout: 15_000 });
  await waitMessage(page, 'sent during the freeze');
  await page.click('.send-state.failed >> text=Try again');
  await waitFor(page, `document.querySelectorAll('.msg.local, .send-state').length === 0`);
  await sendChannelMessage(ts.api, 'othello', 'general', 'frozen', 'after the freeze');
  await waitMessage(page, 'after the freeze');
  const texts = await messageTexts(page);
  for (const m of [
    'before the freeze',
    'sent during the freeze',
    'mine, during the freeze',
    'after the freeze',
  ])
    t.equal(count(texts, m), 1, `"${m}" once`);
  watch.assertClean(t, /WebSocket|ERR_CONNECTION|ERR_EMPTY_RESPONSE|Failed to load resource/);
});

t.test(
  'frozen, then back without its queue: registered again, the unsent message kept',
  async (t) => {
    if (NO_CHROMIUM) return;
    const { ts, front, page, watch } = await behindRelay(t, 'lost');
    front.freeze();
    await page.waitForSelector('.banner >> text=Trying again', { timeout: 20_000 });
    await page.click('#compose-text');
    await page.keyboard.type('mine, queue lost');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.send-state.failed', { timeout: 30_000 });
    await sendChannelMessage(ts.api, 'othello', 'general', 'lost', 'sent while it was lost');
    // The server loses the page's queue meanwhile (expired, or a restart that could not keep it).
    const queues = ts.server.context.queues.forUser(ts.fx.users.hamlet!.id);
    await ts.api.delete('hamlet', 'events', { queue_id: queues[0]!.id });
    front.thaw();
    await page.evaluate(`document.querySelector('.banner button')?.click()`);
    await page.waitForSelector('.toast >> text=Reconnected', { timeout: 30_000 });
    await waitMessage(page, 'sent while it was lost');
    t.pass('registered again: the message sent meanwhile is there');
    // The new state has the message not sent, still marked so (it did not vanish).
    await page.waitForSelector('.msg:has-text("mine, queue lost") .send-state.failed');
    await page.click('.send-state.failed >> text=Try again');
    await waitFor(page, `document.querySelectorAll('.msg.local, .send-state').length === 0`);
    const texts = await messageTexts(page);
    t.equal(count(texts, 'sent while it was lost'), 1, "othello's once");
    t.equal(count(texts, 'mine, queue lost'), 1, 'mine once, sent');
    watch.assertClean(
      t,
      /WebSocket|ERR_CONNECTION|ERR_EMPTY_RESPONSE|Failed to load resource|status of 400/,
    );
  },
);

t.test(
  'a send whose answer is lost but whose message arrives: not shown as not sent',
  async (t) => {
    if (NO_CHROMIUM) return;
    const ts = await startServer(t);
    const everyone = ['hamlet', 'othello'].map((n) => ts.fx.users[n]!.id);
    const id = await createChannel(ts.api, 'othello', 'general', { principals: everyone });
    const { page, watch } = await openApp(b.of(t), ts.url, ts.fx, 'hamlet', {
      hash: `#narrow/channel/${id}-general/topic/late`,
    });
    // The server takes the message; its answer is held past the app's send timeout (15 s).
    let answered: () => void = () => undefined;
    const late = new Promise<void>((r) => (answered = r));
    await page.route('**/json/messages', async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      const response = await route.fetch();
      await new Promise((r) => setTimeout(r, 17_000));
      // (The page gave up on it at 15 s.)
      await route.fulfill({ response }).catch(() => undefined);
      answered();
    });
    await page.click('#compose-text');
    await page.keyboard.type('taken, answer lost');
    await page.keyboard.press('Enter');
    await waitFor(page, `document.querySelectorAll('.msg.local').length === 0`);
    await waitMessage(page, 'taken, answer lost');
    await late;
    t.equal(
      await page.locator('.toast >> text=not sent').count(),
      0,
      'no "not sent" after it came',
    );
    // A new registration (the queue lost): nothing comes back as not sent.
    const queues = ts.server.context.queues.forUser(ts.fx.users.hamlet!.id);
    await ts.api.delete('hamlet', 'events', { queue_id: queues[0]!.id });
    await page.waitForSelector('.toast >> text=Reconnected');
    await waitMessage(page, 'taken, answer lost');
    t.equal(await page.locator('.send-state').count(), 0, 'no message shown as not sent');
    t.equal(count(await messageTexts(page), 'taken, answer lost'), 1, 'shown once');
    watch.assertClean(t, /WebSocket|status of 401|status of 400|aborted/);
  },
);

t.test('a lost event queue: registered again, the view refreshed', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const everyone = ['hamlet', 'othello'].map((n) => ts.fx.users[n]!.id);
  const id = await createChannel(ts.api, 'othello', 'general', { principals: everyone });
  const { page, watch } = await openApp(b.of(t), ts.url, ts.fx, 'hamlet', {
    hash: `#narrow/channel/${id}-general`,
  });
  const hamlet = ts.fx.users.hamlet!;
  const queues = ts.server.context.queues.forUser(hamlet.id);
  t.equal(queues.length, 1, "the page's queue");
  await ts.api.delete('hamlet', 'events', { queue_id: queues[0]!.id });
  await sendChannelMessage(ts.api, 'othello', 'general', 'queue', 'sent while the queue was gone');
  await page.waitForSelector('.toast >> text=Reconnected');
  await waitMessage(page, 'sent while the queue was gone');
  t.pass('registered again; the message is there');
  await sendChannelMessage(ts.api, 'othello', 'general', 'queue', 'and after');
  await waitMessage(page, 'and after');
  t.equal(count(await messageTexts(page), 'sent while the queue was gone'), 1, 'once');
  watch.assertClean(t, /WebSocket|status of 401|status of 400/);
});

/** Whether this server offers the browser's event socket (`/json/events/socket`). */
async function browserSocketRoute(url: string, cookie: string): Promise<boolean> {
  const ws = new WebSocket(
    `${url.replace('http', 'ws')}/json/events/socket?queue_id=none&last_event_id=-1`,
    {
      headers: { Cookie: cookie, Origin: url },
    },
  );
  return new Promise((resolve) => {
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode !== 404));
    ws.on('open', () => {
      ws.close();
      resolve(true);
    });
    ws.on('error', () => resolve(false));
  });
}

t.test(
  'the event socket killed mid-stream: long-polling takes over, then the socket again, without loss',
  async (t) => {
    if (NO_CHROMIUM) return;
    const ts = await startServer(t);
    const everyone = ['hamlet', 'othello'].map((n) => ts.fx.users[n]!.id);
    const id = await createChannel(ts.api, 'othello', 'general', { principals: everyone });
    const page = await b.of(t).newPage();
    const watch = await watchPage(page);
    // The page's sockets go through this relay, which can lose a frame on its way, and the
    // socket with it, as a failing network would.
    let sockets = 0;
    /** The frame carrying this text is lost (once), with its socket. */
    let loseAt: string | null = null;
    const lost: string[] = [];
    await page.routeWebSocket(/\/json\/events\/socket/, (ws) => {
      sockets++;
      const server = ws.connectToServer();
      server.onMessage((frame) => {
        const text = typeof frame === 'string' ? frame : frame.toString();
        if (loseAt !== null && text.includes('"type":"message"') && text.includes(loseAt)) {
          loseAt = null;
          lost.push(text);
          void ws.close({ code: 1006 });
          void server.close();
          return;
        }
        ws.send(frame);
      });
    });
    await page.goto(`${ts.url}/#narrow/channel/${id}-general`);
    await page.fill('input[name="username"]', ts.fx.users.hamlet!.email);
    await page.fill('input[name="password"]', ts.fx.users.hamlet!.password);
    await page.click('button[type="submit"]');
    await waitLive(page);
    const cookies = await page.context().cookies(ts.url);
    const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    t.ok(await browserSocketRoute(ts.url, cookie), 'the server offers the browser event socket');
    await waitFor(page, `document.querySelector('.app').dataset.transport === 'socket'`);
    await sendChannelMessage(ts.api, 'othello', 'general', 'socket', 'over the socket');
    await waitMessage(page, 'over the socket');

    // A stream of messages; the socket dies while they arrive: with the frame that carries the
    // sixth (chosen by its content, not by what the page shows by then: on a loaded machine the
    // page could show five only once every frame had passed, and then no frame would be lost).
    const N = 40;
    loseAt = '>burst 5<';
    const burst = (async () => {
      for (let i = 0; i < N; i++)
        await sendChannelMessage(ts.api, 'othello', 'general', 'socket', `burst ${i}`);
    })();
    const shown = `[...document.querySelectorAll('.messages .msg .content')].filter((e) => /^burst \\d+$/.test(e.textContent.trim())).length`;
    await waitFor(page, `document.querySelector('.app').dataset.transport === 'poll'`);
    t.equal(lost.length, 1, 'a frame with a message event lost with the socket');
    t.pass(`the socket lost after ${await page.evaluate<number>(shown)} of ${N}: long-polling`);
    await burst;
    await waitFor(page, `${shown} === ${N}`, 60_000);
    // Back on a new socket (tried again a few seconds after one that had worked).
    await waitFor(page, `document.querySelector('.app').dataset.transport === 'socket'`, 60_000);
    t.ok(sockets >= 2, 'a new socket');
    await sendChannelMessage(ts.api, 'othello', 'general', 'socket', 'on the new socket');
    await waitMessage(page, 'on the new socket');
    const texts = await messageTexts(page);
    const expected = [
      'over the socket',
      ...Array.from({ length: N }, (_, i) => `burst ${i}`),
      'on the new socket',
    ];
    t.same(
      texts.filter((x) => expected.includes(x)),
      expected,
      'every message once, in order',
    );
    watch.assertClean(t, /WebSocket|status of 401/);
  },
);

t.test('keyboard only', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const everyone = ['hamlet', 'othello'].map((n) => ts.fx.users[n]!.id);
  const general = await createChannel(ts.api, 'othello', 'general', { principals: everyone });
  await createChannel(ts.api, 'othello', 'design', { principals: everyone });
  await sendChannelMessage(ts.api, 'othello', 'design', 'logo', 'An unread topic');
  const page = await b.of(t).newPage();
  const watch = await watchPage(page);
  await page.goto(`${ts.url}/#narrow/is/starred`);
  await page.waitForSelector('input[name="username"]:focus');
  // The e-mail field has the focus: type, Tab, type, Enter.
  await page.keyboard.type(ts.fx.users.hamlet!.email);
  await page.keyboard.press('Tab');
  await page.keyboard.type(ts.fx.users.hamlet!.password);
  await page.keyboard.press('Enter');
  await waitLive(page);
  t.pass('logged in with the keyboard');

  await page.keyboard.press('Control+k');
  await page.waitForSelector('.jump input:focus');
  await page.keyboard.type('gener');
  await page.keyboard.press('Enter');
  await waitFor(page, `location.hash.startsWith('#narrow/channel/${general}-general')`);
  t.pass('Ctrl+K, a name, Enter: there');

  await page.keyboard.press('n');
  await waitFor(page, `location.hash.includes('/topic/logo')`);
  await waitMessage(page, 'An unread topic');
  t.pass('n: the next unread topic');

  await page.keyboard.press('r');
  await waitFor(page, `document.activeElement?.id === 'compose-text'`);
  t.equal(await page.inputValue('#compose-topic'), 'logo', 'r: replying in that topic');
  await page.keyboard.type('Typed, not clicked');
  await page.keyboard.press('Enter');
  await waitMessage(page, 'Typed, not clicked');
  // The echo replaced by the server's message (a new row): an arrow press before that would
  // select the echo, gone the moment the message arrives.
  await waitFor(page, `document.querySelectorAll('.msg.local').length === 0`);
  await page.keyboard.press('Escape');
  await waitFor(page, `document.activeElement?.id !== 'compose-text'`);
  t.pass('Esc leaves the compose box');

  // The message list: focus it, move with the arrows, reply with Enter.
  await page.focus('.messages');
  // Two presses before the list redraws (dispatched in one task): the second moves on from the
  // first's message, not from the selection the last drawing showed (none).
  await page.evaluate(`(() => {
    const list = document.querySelector('.messages');
    for (let i = 0; i < 2; i++)
      list.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowUp', bubbles: true }));
  })()`);
  await waitFor(page, `document.querySelector('.msg.selected') !== null`);
  const selected = await page.textContent('.msg.selected .content');
  t.equal(selected?.trim(), 'An unread topic', 'the arrows select messages');
  const selectedText = `document.querySelector('.msg.selected .content')?.textContent.trim()`;
  await page.keyboard.press('ArrowDown');
  await waitFor(page, `${selectedText} === 'Typed, not clicked'`);
  await page.keyboard.press('ArrowUp');
  await waitFor(page, `${selectedText} === 'An unread topic'`);
  t.pass('and one at a time');
  await page.keyboard.press('Enter');
  await waitFor(page, `document.activeElement?.id === 'compose-text'`);
  await page.keyboard.press('Escape');

  // Tab reaches the controls with a visible focus ring.
  await page.focus('.sidebar a.nav-item');
  await page.keyboard.press('Tab');
  const ring = await page.evaluate(`getComputedStyle(document.activeElement).boxShadow`);
  t.not(ring, 'none', 'focus is visible');
  const unnamed =
    await page.evaluate(`[...document.querySelectorAll('button, a[href], input, select, textarea, [tabindex="0"]')]
    .filter((e) => e.offsetParent !== null)
    .filter((e) => !(e.getAttribute('aria-label') || e.textContent.trim() || e.getAttribute('title') || e.labels?.length || e.getAttribute('placeholder')))
    .map((e) => e.outerHTML.slice(0, 80))`);
  t.same(unnamed, [], 'every control has an accessible name');
  await screenshot(page, t, 'keyboard-1280');
  watch.assertClean(t, /WebSocket|status of 401/);
});
