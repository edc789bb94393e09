/**
 * The web app on a phone (390 pixels) opened at the first unread message of a topic with more
 * unread below: the "new messages below" button covers no message, in particular not the toolbar
 * of the message at the bottom of the list once it is selected (a phone draws the toolbar under
 * the message, at the list's bottom edge, where the button used to float). And at 1280 pixels,
 * scrolls faster than the list redraws (two in one task: away from the newest and back, or the
 * other way) leave the button as the last scroll found it. "Jump to the newest" past what was
 * fetched shows the newest message, also when a message arrives and a shown one changes while
 * the newest page is on its way.
 */
import sharp from 'sharp';
import t from 'tap';
import { KEEP_SOCKET_FRAMES, openApp, socketFrame, waitFor, waitMessage } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { createChannel } from '../helpers/channels.js';
import { sendChannelMessage, seedChannelMessages } from '../helpers/messages.js';
import { upload } from '../helpers/uploads.js';
import { LOADING_PLACEHOLDER_SRC } from '../../src/lib/markdown/previews.js';

const { b, ts } = browserSuite(t, { server: true });

type Box = { left: number; top: number; right: number; bottom: number };

t.test('390 pixels: "new messages below" covers no message', async (t) => {
  if (NO_CHROMIUM) return;
  const { api, fx } = ts;
  const everyone = ['hamlet', 'othello', 'iago'].map((n) => fx.users[n]!.id);
  const ch = await createChannel(api, 'iago', 'days', { principals: everyone });
  seedChannelMessages(ts, {
    senderId: fx.users.iago!.id,
    streamId: ch,
    topic: 'log',
    count: 30,
    recipients: everyone,
    flags: 1,
    text: (i) => `old entry ${i}`,
  });
  // About a screen and a half of unread messages, long and short.
  for (let i = 0; i < 16; i++) {
    const words = 'word '.repeat(i % 3 === 0 ? 20 : 3);
    await sendChannelMessage(api, 'othello', 'days', 'log', `new entry ${i} ${words}`);
  }
  const { page, watch } = await openApp(b, ts.url, fx, 'hamlet', {
    hash: `#narrow/channel/${ch}-days/topic/log`,
    width: 390,
    height: 800,
  });
  await waitMessage(page, 'new entry 0');
  await page.waitForSelector('.new-below');
  await screenshot(page, t, 'first-unread-390');

  // The last message whose top is in view (not the list's last: more are below), selected.
  const target = await page.evaluate<{ id: string; x: number; y: number } | null>(`(() => {
    const list = document.querySelector('.messages').getBoundingClientRect();
    const rows = [...document.querySelectorAll('.msg')];
    const shown = rows.filter((r) => r.getBoundingClientRect().top < list.bottom - 8);
    const last = shown.at(-1);
    if (!last || last === rows.at(-1)) return null;
    const r = last.querySelector('.content').getBoundingClientRect();
    return { id: last.dataset.id, x: r.left + 4, y: r.top + 4 };
  })()`);
  t.ok(target, 'a message at the bottom of the list, more below it');
  if (!target) return;
  await page.mouse.click(target.x, target.y);
  await page.mouse.move(200, 20); // off the list: no hovered message
  await page.waitForSelector(`.msg.selected[data-id="${target.id}"] .msg-actions`);
  // Scrolled into view with its toolbar, once the layout is done.
  await waitFor(
    page,
    `(() => {
      const bar = document.querySelector('.msg.selected .msg-actions').getBoundingClientRect();
      return bar.height > 0 &&
        bar.bottom <= document.querySelector('.messages').getBoundingClientRect().bottom + 1;
    })()`,
  );
  const boxes = await page.evaluate<{
    button: Box | null;
    bar: Box;
    list: Box;
    rows: Box[];
  }>(`(() => {
    const box = (el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
    };
    const button = document.querySelector('.new-below');
    return {
      button: button && box(button),
      bar: box(document.querySelector('.msg.selected .msg-actions')),
      list: box(document.querySelector('.messages')),
      rows: [...document.querySelectorAll('.msg')].map(box),
    };
  })()`);
  await screenshot(page, t, 'selected-at-bottom-390');
  const over = (a: Box, b: Box) =>
    a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  t.ok(boxes.button, 'the button shows (newer messages below)');
  if (!boxes.button) return;
  t.notOk(
    over(boxes.button, boxes.bar),
    `the button ${JSON.stringify(boxes.button)} misses the toolbar ${JSON.stringify(boxes.bar)}`,
  );
  // Nor any message where the list shows it.
  const shown = boxes.rows
    .map((r) => ({
      ...r,
      top: Math.max(r.top, boxes.list.top),
      bottom: Math.min(r.bottom, boxes.list.bottom),
    }))
    .filter((r) => r.bottom > r.top);
  t.same(
    shown.filter((r) => over(boxes.button!, r)),
    [],
    'the button covers no message shown',
  );

  await page.click('.new-below');
  await waitFor(page, `document.querySelector('.new-below') === null`);
  await waitMessage(page, 'new entry 15');
  t.pass('the button still goes to the newest');
  watch.assertClean(t, /WebSocket|status of 401/);
});

/**
 * Page-side JavaScript (a string: the tests have no DOM types): scrolls the list to `first`, then
 * to `second` ('top' or 'bottom'), each with its scroll event, in one task (no drawing between),
 * then says whether the button shows at the drawing that follows (the next frame, before the
 * effects that run after it).
 */
const twoScrolls = (first: string, second: string) => `(() => {
  const el = document.querySelector('.messages');
  const to = (where) => {
    el.scrollTop = where === 'top' ? 0 : el.scrollHeight;
    el.dispatchEvent(new Event('scroll'));
  };
  to(${JSON.stringify(first)});
  to(${JSON.stringify(second)});
  return new Promise((resolve) =>
    requestAnimationFrame(() => resolve(document.querySelector('.new-below') !== null)),
  );
})()`;

t.test('1280 pixels: two scrolls before a drawing, the button as the second left it', async (t) => {
  if (NO_CHROMIUM) return;
  const { api, fx } = ts;
  const everyone = ['hamlet', 'othello'].map((n) => fx.users[n]!.id);
  const ch = await createChannel(api, 'othello', 'scrolls', { principals: everyone });
  seedChannelMessages(ts, {
    senderId: fx.users.othello!.id,
    streamId: ch,
    topic: 'long',
    count: 60,
    recipients: everyone,
    flags: 1,
    text: (i) => `line ${i}`,
  });
  const { page, watch } = await openApp(b, ts.url, fx, 'hamlet', {
    hash: `#narrow/channel/${ch}-scrolls/topic/long`,
  });
  await waitMessage(page, 'line 59');
  await waitFor(page, `document.querySelector('.new-below') === null`);
  t.ok(
    await page.evaluate(
      `(() => { const el = document.querySelector('.messages'); return el.scrollHeight > el.clientHeight * 2; })()`,
    ),
    'the list is taller than two screens',
  );

  t.equal(await page.evaluate(twoScrolls('top', 'bottom')), false, 'up and back: no button');
  await waitFor(page, `document.querySelector('.new-below') === null`);

  // From the top (the button shown), down and back up: the button stays.
  await page.evaluate(`(() => {
    const el = document.querySelector('.messages');
    el.scrollTop = 0;
    el.dispatchEvent(new Event('scroll'));
  })()`);
  await waitFor(page, `document.querySelector('.new-below') !== null`);
  t.equal(await page.evaluate(twoScrolls('bottom', 'top')), true, 'down and back up: the button');
  await screenshot(page, t, 'scrolled-up-1280');
  watch.assertClean(t, /WebSocket|status of 401/);
});

t.test('"Jump to the newest" past what was fetched shows the newest message', async (t) => {
  if (NO_CHROMIUM) return;
  const { api, fx } = ts;
  const everyone = ['hamlet', 'othello'].map((n) => fx.users[n]!.id);
  const ch = await createChannel(api, 'othello', 'backlog', { principals: everyone });
  // All unread: the view opens at the first, with 100 after it fetched (not the newest).
  seedChannelMessages(ts, {
    senderId: fx.users.othello!.id,
    streamId: ch,
    topic: 'piles',
    count: 250,
    recipients: everyone,
    text: (i) => `pile ${i}`,
  });
  const { page, watch } = await openApp(b, ts.url, fx, 'hamlet', {
    hash: `#narrow/channel/${ch}-backlog/topic/piles`,
  });
  await waitMessage(page, 'pile 0');
  await page.waitForSelector('.new-below');
  // The button counts the unread messages below the view, those not fetched yet too: the
  // topic's unread count less the unread rows down to the view's bottom edge.
  const counted = `(() => {
    const list = document.querySelector('.messages').getBoundingClientRect();
    const seen = [...document.querySelectorAll('.messages .msg.unread')].filter(
      (r) => r.getBoundingClientRect().top <= list.bottom,
    ).length;
    const topic = [...document.querySelectorAll('.sidebar .nav-item')].find(
      (a) => a.querySelector('.label')?.textContent === 'piles',
    );
    const n = Number(topic.querySelector('.badge').textContent) - seen;
    return { want: '↓ ' + n + ' new messages below', got: document.querySelector('.new-below').textContent };
  })()`;
  await waitFor(page, `(() => { const c = ${counted}; return c.want === c.got; })()`, 10_000).catch(
    () => undefined,
  );
  const c = await page.evaluate<{ want: string; got: string }>(counted);
  t.equal(c.got, c.want, 'the unread below, those not fetched too');
  await page.click('.new-below');
  const newestShown = `(() => {
    const list = document.querySelector('.messages').getBoundingClientRect();
    const last = [...document.querySelectorAll('.messages .msg')].at(-1);
    const r = last?.getBoundingClientRect();
    return last?.textContent.includes('pile 249') && r.top >= list.top && r.bottom <= list.bottom + 1;
  })()`;
  const shown = await waitFor(page, newestShown, 10_000).then(
    () => true,
    () => false,
  );
  t.ok(shown, 'the newest message, in view');
  await page.evaluate(`new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50)))`);
  t.equal(await page.locator('.new-below').count(), 0, 'no button: nothing below');
  t.ok(await page.evaluate(newestShown), 'and it stays there');
  await screenshot(page, t, 'jumped-to-newest-1280');
  watch.assertClean(t, /WebSocket|status of 401/);
});

for (const width of [1280, 390]) {
  t.test(`${width} pixels: "Jump to the newest" with events on the answer's way`, async (t) => {
    if (NO_CHROMIUM) return;
    const { api, fx } = ts;
    const everyone = ['hamlet', 'othello'].map((n) => fx.users[n]!.id);
    const ch = await createChannel(api, 'othello', `arrivals${width}`, { principals: everyone });
    const ids = seedChannelMessages(ts, {
      senderId: fx.users.othello!.id,
      streamId: ch,
      topic: 'heap',
      count: 250,
      recipients: everyone,
      text: (i) => `heap ${i}`,
    });
    const { page, watch } = await openApp(b, ts.url, fx, 'hamlet', {
      hash: `#narrow/channel/${ch}-arrivals${width}/topic/heap`,
      width,
      init: KEEP_SOCKET_FRAMES,
    });
    await waitMessage(page, 'heap 0');
    await page.waitForSelector('.new-below');
    // The newest page is answered (made at once by the server) but handed to the app only once
    // the events below have been handled.
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    let fetched = () => {};
    const answered = new Promise<void>((r) => (fetched = r));
    await page.route(
      (u) => u.pathname === '/json/messages' && u.searchParams.get('anchor') === 'newest',
      async (route) => {
        const response = await route.fetch();
        fetched();
        await held;
        await route.fulfill({ response });
      },
    );
    await page.click('.new-below');
    await answered;
    // A new message, and a change to a message the list shows (a reaction; the read flags the
    // view sends do the same), while the answer is on its way.
    const fresh = await sendChannelMessage(api, 'othello', `arrivals${width}`, 'heap', 'fresh');
    await socketFrame(page, `"id":${fresh}`);
    await api.post('othello', `messages/${ids[0]}/reactions`, { emoji_name: 'octopus' });
    await socketFrame(page, '"reaction"');
    release();
    const newestShown = `(() => {
      const list = document.querySelector('.messages').getBoundingClientRect();
      const last = [...document.querySelectorAll('.messages .msg')].at(-1);
      const r = last?.getBoundingClientRect();
      return last?.dataset.id === '${fresh}' && r.top >= list.top && r.bottom <= list.bottom + 1;
    })()`;
    const shown = await waitFor(page, newestShown, 10_000).then(
      () => true,
      () => false,
    );
    t.ok(shown, 'the message that arrived meanwhile, last and in view');
    const listed = await page.evaluate<number[]>(
      `[...document.querySelectorAll('.messages .msg')].map((e) => Number(e.dataset.id))`,
    );
    t.same(listed.slice(-2), [ids.at(-1), fresh], 'after the newest the answer brought, once');
    t.same(
      listed.filter((id, i) => i > 0 && id <= listed[i - 1]!),
      [],
      'in order, no duplicates',
    );
    await page.evaluate(`new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50)))`);
    t.equal(await page.locator('.new-below').count(), 0, 'no button: nothing below');
    await screenshot(page, t, `jumped-with-arrival-${width}`);
    watch.assertClean(t, /WebSocket|status of 401/);
  });
}

t.test(
  'at the bottom, the view stays there while an image in the newest message loads',
  async (t) => {
    if (NO_CHROMIUM) return;
    const { api, fx } = ts;
    const everyone = ['hamlet', 'othello', 'iago'].map((n) => fx.users[n]!.id);
    const ch = await createChannel(api, 'iago', 'photos', { principals: everyone });
    seedChannelMessages(ts, {
      senderId: fx.users.iago!.id,
      streamId: ch,
      topic: 'trip',
      count: 30,
      recipients: everyone,
      flags: 1,
      text: (i) => `old entry ${i}`,
    });
    const { page, watch } = await openApp(b, ts.url, fx, 'hamlet', {
      hash: `#narrow/channel/${ch}-photos/topic/trip`,
    });
    await waitMessage(page, 'old entry 29');
    const gap = `(() => { const e = document.querySelector('.messages');
    return e.scrollHeight - e.scrollTop - e.clientHeight; })()`;
    t.ok((await page.evaluate<number>(gap)) < 1, 'opened at the bottom');

    // The image is held until the message is shown, then comes and makes the message taller.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await page.route('**/user_uploads/**', async (route) => {
      await held;
      await route.continue();
    });
    const png = await sharp({
      create: { width: 600, height: 400, channels: 3, background: { r: 200, g: 90, b: 30 } },
    })
      .png()
      .toBuffer();
    const up = await upload(api, 'othello', [
      { filename: 'beach.png', data: png, contentType: 'image/png' },
    ]);
    await sendChannelMessage(
      api,
      'othello',
      'photos',
      'trip',
      `The beach: [beach.png](${up.body.url as string})`,
    );
    await waitMessage(page, 'The beach');
    await waitFor(page, `${gap} < 1`);
    const before = await page.evaluate<number>(`document.querySelector('.messages').scrollHeight`);
    release();
    await waitFor(
      page,
      `[...document.querySelectorAll('.msg:last-child .content img')].some((i) => i.complete && i.naturalHeight > 0)`,
    );
    await waitFor(page, `document.querySelector('.messages').scrollHeight > ${before}`);
    // Two frames: what a resize observer does happens before the next paint.
    await page.evaluate(
      'new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))',
    );
    // On a loaded machine the view may settle a few frames later; it must settle at the bottom.
    await waitFor(page, `${gap} < 1`, 5_000).catch(() => undefined);
    t.ok((await page.evaluate<number>(gap)) < 1, 'still at the bottom once the image is shown');
    t.notOk(await page.isVisible('.new-below'), 'no "new messages below"');
    await screenshot(page, t, 'image-loaded-at-bottom');
    watch.assertClean(t, /WebSocket|status of 401/);
  },
);

t.test('the placeholder of an image whose thumbnail is being made is served', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet');
  // The path the server's rendered messages name until the thumbnail is made.
  const r = await page.request.get(`${ts.url}${LOADING_PLACEHOLDER_SRC}`);
  t.equal(r.status(), 200, 'served');
  t.equal(r.headers()['content-type'], 'image/svg+xml', 'as SVG');
  const width = await page.evaluate<number>(`new Promise((resolve) => {
    const img = new Image();
    img.onload = () => resolve(img.naturalWidth);
    img.onerror = () => resolve(-1);
    img.src = ${JSON.stringify(LOADING_PLACEHOLDER_SRC)};
  })`);
  t.ok(width > 0, "an image, shown under the page's Content-Security-Policy");
  watch.assertClean(t, /WebSocket|status of 401/);
});
