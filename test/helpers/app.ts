/**
 * Driving the real web app (dist/web, built by `npm test`) in chromium: log a fixture user in,
 * wait until the app is live, open a settings panel, read what the sidebar and the message list
 * show. The browser and
 * the page watch come from test/helpers/browser.ts (web-server's harness).
 */
import type { Page } from 'playwright-core';
import type { TestBrowser } from './browser.js';
import { watchPage, type PageWatch } from './browser.js';
import type { Fixture } from './fixtures.js';

export type AppPage = { page: Page; watch: PageWatch };

/** A page of its own, logged in as `who` through the login form, opened at `hash` (All messages). */
export async function openApp(
  b: TestBrowser,
  url: string,
  fx: Fixture,
  who: string,
  opts: {
    hash?: string;
    width?: number;
    height?: number;
    dark?: boolean;
    /** Page-side JavaScript run before the page's own in every document (addInitScript). */
    init?: string;
    /** Done to the page before it loads (e.g. `page.clock.install()`). */
    setup?: (page: Page) => Promise<void>;
  } = {},
): Promise<AppPage> {
  const page = await b.newPage({
    viewport: { width: opts.width ?? 1280, height: opts.height ?? 800 },
    colorScheme: opts.dark ? 'dark' : 'light',
  });
  if (opts.init) await page.addInitScript(opts.init);
  if (opts.setup) await opts.setup(page);
  const watch = await watchPage(page);
  // No view named: All messages ('#feed'), not the user's home view (the Inbox by default).
  await page.goto(url + '/' + (opts.hash ?? '#feed'));
  const user = fx.users[who]!;
  await page.fill('input[name="username"]', user.email);
  await page.fill('input[name="password"]', user.password);
  await page.click('button[type="submit"]');
  await waitLive(page);
  return { page, watch };
}

/**
 * Until `expression` (JavaScript, evaluated in the page) is true: polled from here, because the
 * page's Content-Security-Policy forbids the string evaluation `page.waitForFunction` uses. The
 * limit bounds a broken test; it is not a timing assertion.
 */
export async function waitFor(page: Page, expression: string, limitMs = 30_000): Promise<void> {
  const start = Date.now();
  while (!(await page.evaluate(expression))) {
    if (Date.now() - start > limitMs) throw new Error(`gave up waiting for: ${expression}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Page-side JavaScript for openApp's `init`: every frame of the app's event socket is kept, as
 * text, in `window.frames_` (to wait until the app has handled an event: `socketFrame`).
 */
export const KEEP_SOCKET_FRAMES = `(() => {
  const Native = window.WebSocket;
  window.frames_ = [];
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => window.frames_.push(String(e.data)));
    }
  };
})()`;

/** Until the app has had a frame of its event socket that contains `text`. */
export function socketFrame(page: Page, text: string): Promise<void> {
  return waitFor(page, `window.frames_.some((f) => f.includes(${JSON.stringify(text)}))`);
}

/**
 * Until the app shows its messages with a live event queue, or, opened with no view named, the
 * user's home view when it is the Inbox (the default) or Recent conversations (no list there).
 */
export async function waitLive(page: Page): Promise<void> {
  await page.waitForSelector(
    '.app[data-status="live"] :is(.messages[aria-busy="false"], .inbox-view, .recent-view)',
  );
}

/**
 * Until the view's title (above the list) names `name`: the app has swapped to that view. A
 * navigation (a click on a link or a sidebar entry, `location.hash = …`, `page.goto` to another
 * fragment, back and forward) reaches the app in a hashchange task of its own: until then the
 * list on screen is still the old view's, which may hold the very message a test waits for.
 * Wait for this before waiting for a message both views can show.
 */
export function waitForTitle(page: Page, name: string): Promise<void> {
  return waitFor(
    page,
    `document.querySelector('.title')?.textContent.includes(${JSON.stringify(name)})`,
  );
}

/**
 * Settings open at a panel by the link its nav names it with (`panel`, as "Bots"): the dialog
 * opened from the sidebar's foot first when it is not open yet, then the panel's heading awaited.
 */
export async function openSettings(page: Page, panel: string): Promise<void> {
  if ((await page.locator('.settings').count()) === 0)
    await page.click('.sidebar-foot button[aria-label="Settings"]');
  await page.click(`.settings nav a:has-text("${panel}")`);
  await page.waitForSelector(`.settings h3:has-text("${panel}")`);
}

/**
 * Until a narrow screen's drawer (the sidebar) has slid all the way in: visible, and at the left
 * edge (it is drawn from its first frame of the slide on, off by up to its width).
 */
export function waitDrawerOpen(page: Page): Promise<void> {
  return waitFor(
    page,
    `(() => {
      const s = document.querySelector('.sidebar');
      return !!s && getComputedStyle(s).visibility === 'visible' && s.getBoundingClientRect().x >= 0;
    })()`,
  );
}

/** The unread count a sidebar entry shows (0 when none). */
export async function sidebarCount(page: Page, label: string): Promise<number> {
  return page.evaluate(`(() => {
    for (const a of document.querySelectorAll('.sidebar .nav-item')) {
      if (a.querySelector('.label')?.textContent?.trim() !== ${JSON.stringify(label)}) continue;
      const b = a.querySelector('.badge');
      return b ? Number(b.textContent) : 0;
    }
    return -1;
  })()`);
}

/** Waits until a sidebar entry shows `n` unread. */
export async function waitCount(page: Page, label: string, n: number): Promise<void> {
  await waitFor(
    page,
    `(() => {
    for (const a of document.querySelectorAll('.sidebar .nav-item')) {
      if (a.querySelector('.label')?.textContent?.trim() !== ${JSON.stringify(label)}) continue;
      const b = a.querySelector('.badge');
      return (b ? Number(b.textContent) : 0) === ${n};
    }
    return false;
  })()`,
  );
}

/** An attribute (or the text, for `null`) of every element matching `selector`, in order. */
export function pluck(
  page: Page,
  selector: string,
  attribute: string | null = null,
): Promise<string[]> {
  const get =
    attribute === null
      ? "(e.textContent || '').trim()"
      : `e.getAttribute(${JSON.stringify(attribute)}) || ''`;
  return page.evaluate(
    `[...document.querySelectorAll(${JSON.stringify(selector)})].map((e) => ${get})`,
  );
}

/** The text of each message in the list, in order. */
export function messageTexts(page: Page): Promise<string[]> {
  return pluck(page, '.messages .msg .content');
}

/** Until a message with this text is in the list. */
export async function waitMessage(page: Page, text: string): Promise<void> {
  await waitFor(
    page,
    `[...document.querySelectorAll('.messages .msg .content')].some((e) => e.textContent.includes(${JSON.stringify(text)}))`,
  );
}

/** How many messages the DOM holds. */
export function domMessages(page: Page): Promise<number> {
  return page.$$eval('.messages .msg', (els) => els.length);
}
