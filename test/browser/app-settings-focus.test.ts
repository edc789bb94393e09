/**
 * The settings' focus when the panel changes by its address, in chromium: the browser's back and
 * forward, or a link to `#settings/<panel>`, move the focus (and its ring) to the shown panel's
 * link in the list, as a click there leaves it; before, it stayed on the link chosen last (or
 * fell to the page's body with the panel it was in). Both widths: 1280 and 390 pixels.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { openApp, waitFor } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';

const { b, ts } = browserSuite(t, { server: true });

/** The settings list's link of a panel. */
const link = (id: string) => `.settings nav a.nav-item[href="#settings/${id}"]`;

/** Waits for a panel by its title. */
const shown = (page: Page, title: string) =>
  waitFor(page, `document.querySelector('#panel-title')?.textContent === ${JSON.stringify(title)}`);

/** Which panel's link has the focus (its address), or what has it instead. */
const focusedLink = (page: Page) =>
  page.evaluate<string>(`(() => {
    const e = document.activeElement;
    if (!e || e === document.body) return 'body';
    return e.closest('.settings nav') ? e.getAttribute('href') : e.tagName.toLowerCase();
  })()`);

/** Whether the focused element shows the focus ring (the browser's :focus-visible). */
const ringShown = (page: Page) =>
  page.evaluate<boolean>(`!!document.activeElement?.matches(':focus-visible')`);

for (const width of [1280, 390]) {
  t.test(`${width} px: the focus follows the panel changed by its address`, async (t) => {
    if (NO_CHROMIUM) return;
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'iago', {
      hash: '#settings/account',
      width,
      height: width === 390 ? 844 : 800,
    });
    await shown(page, 'Account');
    await waitFor(page, `!!document.activeElement?.closest('.settings')`);
    t.equal(await focusedLink(page), '#settings/account', 'opened: on the panel shown');

    // Chosen by keyboard in the list: Display, then Users.
    await page.focus(link('display'));
    await page.keyboard.press('Enter');
    await shown(page, 'Display');
    t.equal(await focusedLink(page), '#settings/display');
    await page.focus(link('users'));
    await page.keyboard.press('Enter');
    await shown(page, 'Users');
    t.equal(await focusedLink(page), '#settings/users');

    // The browser's back and forward: the focus goes along, its ring with it.
    await page.goBack();
    await shown(page, 'Display');
    t.equal(await focusedLink(page), '#settings/display', 'back: on the panel shown again');
    t.ok(await ringShown(page), 'with its ring');
    await screenshot(page, t, `settings-back-${width}`);
    await page.goBack();
    await shown(page, 'Account');
    t.equal(await focusedLink(page), '#settings/account', 'back again');
    await page.goForward();
    await shown(page, 'Display');
    t.equal(await focusedLink(page), '#settings/display', 'forward');

    // From inside the panel (its control focused), a link to another panel: that panel's link.
    await page.locator('.settings section').locator('input, button, select').first().focus();
    t.not(await focusedLink(page), '#settings/display', 'a control of the panel focused');
    await page.evaluate(`location.hash = '#settings/organization'`);
    await shown(page, 'Organization');
    t.equal(
      await focusedLink(page),
      '#settings/organization',
      'the panel it was in gone: on the new one (not the body)',
    );
    await screenshot(page, t, `settings-by-link-${width}`);

    // A click in the list: the focus where the click put it.
    await page.click(link('account'));
    await shown(page, 'Account');
    t.equal(await focusedLink(page), '#settings/account', 'a click: on the link clicked');
    watch.assertClean(t, /WebSocket/);
    await page.close();
  });
}
