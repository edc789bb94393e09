/**
 * The settings overlay's scrolling in chromium. At 1280 pixels the list of panels and the panel
 * sit side by side and scroll each on its own, as in the reference's settings overlay. A long
 * panel (Organization, as an administrator sees it) scrolled to its end by the mouse wheel leaves
 * the list where it was: its entries are still in view and a click on one opens that panel. The
 * dialog itself never scrolls, and the panel's title and the close button stay at its top. Before,
 * the whole dialog scrolled, so the list's entries went up out of view with the panel's top and
 * left an empty column. A list taller than the dialog (a short window) scrolls on its own and
 * leaves the panel where it was. At 390 pixels the list stands above the panel and the dialog
 * scrolls as a whole, as before: the panel's end can be reached and the list is back at the top.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, waitFor } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';

const { b, ts } = browserSuite(t, { server: true });

type Box = { top: number; bottom: number };
type Layout = {
  dialog: { scrollTop: number; scrollHeight: number; clientHeight: number } & Box;
  nav: { scrollTop: number; scrollHeight: number; clientHeight: number };
  section: { scrollTop: number; scrollHeight: number; clientHeight: number };
  /** Each list entry's box, by its address. */
  links: Record<string, Box>;
  title: Box;
  close: Box;
  /** The panel's last element (its end). */
  last: Box;
};

/** Where the dialog's parts are now (boxes in the window's coordinates). */
function layout(page: Page): Promise<Layout> {
  return page.evaluate(`(() => {
    const box = (e) => { const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom }; };
    const scroll = (e) => ({ scrollTop: e.scrollTop, scrollHeight: e.scrollHeight, clientHeight: e.clientHeight });
    const d = document.querySelector('.settings');
    const section = d.querySelector('section');
    const links = {};
    for (const a of d.querySelectorAll('nav a.nav-item')) links[a.getAttribute('href')] = box(a);
    return {
      dialog: { ...scroll(d), ...box(d) },
      nav: scroll(d.querySelector('nav')),
      section: scroll(section),
      links,
      title: box(document.querySelector('#panel-title')),
      close: box(d.querySelector('button.close')),
      last: box(section.lastElementChild),
    };
  })()`);
}

/** Whether a box lies within another (a pixel's rounding allowed). */
const within = (inner: Box, outer: Box) =>
  inner.top >= outer.top - 1 && inner.bottom <= outer.bottom + 1;

/** Turns the mouse wheel over an element until `done` (page-side) holds. */
async function wheelOver(page: Page, selector: string, done: string): Promise<void> {
  const r = (await page.locator(selector).boundingBox())!;
  await page.mouse.move(r.x + r.width / 2, r.y + Math.min(r.height / 2, 200));
  for (let i = 0; i < 40 && !(await page.evaluate(done)); i++) await page.mouse.wheel(0, 400);
  await waitFor(page, done);
}

/** Until an element's scrollTop holds still (a wheel's scrolling is animated). */
async function settled(page: Page, selector: string): Promise<number> {
  let last = -1;
  for (;;) {
    const now = await page.evaluate<number>(`document.querySelector('${selector}').scrollTop`);
    if (now === last) return now;
    last = now;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const SECTION_AT_END = `(() => {
  const s = document.querySelector('.settings section');
  return s.scrollTop > 0 && s.scrollTop + s.clientHeight >= s.scrollHeight - 1;
})()`;

t.test('1280 px: the list and the panel scroll each on its own', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago', {
    hash: '#settings/organization',
  });
  await waitFor(page, `document.querySelector('#panel-title')?.textContent === 'Organization'`);
  let l = await layout(page);
  t.ok(l.section.scrollHeight > l.section.clientHeight, 'the panel is longer than the dialog');
  t.equal(l.dialog.scrollHeight, l.dialog.clientHeight, 'the dialog itself has nothing to scroll');

  // The panel scrolled to its end by the wheel over it.
  await wheelOver(page, '.settings section', SECTION_AT_END);
  await settled(page, '.settings section');
  l = await layout(page);
  t.equal(l.dialog.scrollTop, 0, 'the dialog did not scroll');
  t.equal(l.nav.scrollTop, 0, 'nor did the list');
  for (const id of ['#settings/account', '#settings/organization', '#settings/users'])
    t.ok(within(l.links[id]!, l.dialog), `the list's ${id} is in view beside the panel's end`);
  t.ok(l.last.bottom <= l.dialog.bottom, "the panel's end is in view");
  t.ok(within(l.title, l.dialog) && within(l.close, l.dialog), 'its title and close button too');
  t.ok(l.close.bottom <= l.title.bottom + 1, 'the close button over the title, not the fields');
  await screenshot(page, t, 'organization-scrolled-1280');

  // An entry of the list, clicked there: its panel.
  await page.click('.settings nav a.nav-item[href="#settings/users"]');
  await waitFor(page, `document.querySelector('#panel-title')?.textContent === 'Users'`);
  t.equal(await page.evaluate('location.hash'), '#settings/users', 'the Users panel');
  watch.assertClean(t);
});

t.test('1280 px, a short window: the list scrolls on its own too', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago', {
    hash: '#settings/organization',
    height: 520,
  });
  await waitFor(page, `document.querySelector('#panel-title')?.textContent === 'Organization'`);
  let l = await layout(page);
  t.ok(l.nav.scrollHeight > l.nav.clientHeight, 'the list is longer than the dialog');
  await wheelOver(
    page,
    '.settings section',
    `document.querySelector('.settings section').scrollTop > 100`,
  );
  const panelAt = await settled(page, '.settings section');
  await wheelOver(
    page,
    '.settings nav',
    `(() => { const n = document.querySelector('.settings nav');
      return n.scrollTop + n.clientHeight >= n.scrollHeight - 1; })()`,
  );
  await settled(page, '.settings nav');
  l = await layout(page);
  t.equal(l.dialog.scrollTop, 0, 'the dialog did not scroll');
  t.equal(l.section.scrollTop, panelAt, 'the panel stayed where it was');
  const ids = Object.keys(l.links);
  t.ok(within(l.links[ids[ids.length - 1]!]!, l.dialog), "the list's last entry in view");
  await screenshot(page, t, 'short-window-list-scrolled-1280');
  watch.assertClean(t);
});

t.test('390 px: the list above the panel, the dialog scrolling as a whole', async (t) => {
  if (NO_CHROMIUM) return;
  const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago', {
    hash: '#settings/organization',
    width: 390,
    height: 844,
  });
  await waitFor(page, `document.querySelector('#panel-title')?.textContent === 'Organization'`);
  let l = await layout(page);
  t.ok(l.links['#settings/organization']!.bottom <= l.title.top, 'the list above the panel');
  t.ok(l.dialog.scrollHeight > l.dialog.clientHeight, 'the dialog scrolls');
  await screenshot(page, t, 'organization-top-390');
  await wheelOver(
    page,
    '.settings section',
    `(() => { const d = document.querySelector('.settings');
      return d.scrollTop > 0 && d.scrollTop + d.clientHeight >= d.scrollHeight - 1; })()`,
  );
  l = await layout(page);
  t.ok(l.last.bottom <= l.dialog.bottom, "the panel's end reached, not cut off");
  await screenshot(page, t, 'organization-end-390');
  await page.evaluate(`document.querySelector('.settings').scrollTop = 0`);
  l = await layout(page);
  t.ok(within(l.links['#settings/users']!, l.dialog), 'the list back at the top');
  await page.click('.settings nav a.nav-item[href="#settings/users"]');
  await waitFor(page, `document.querySelector('#panel-title')?.textContent === 'Users'`);
  watch.assertClean(t);
});
