/**
 * The organization's icon in the web app (web/app/organization.tsx, sidebar.tsx) against the real
 * server: an administrator uploads one from Settings → Organization at 1280 px, and a member's
 * open app (390 px) shows it in the sidebar and in its read-only Organization panel, live from
 * the `realm` icon event; the administrator deletes it and both go back to the initial.
 * Screenshots at 1280 and 390 px.
 */
import sharp from 'sharp';
import t from 'tap';
import { openApp, openSettings, waitDrawerOpen, waitFor } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { assertSuccess } from '../helpers/api.js';
import { startServer } from '../helpers/server.js';

const { b } = browserSuite(t);

const SIDEBAR_ICON = '.sidebar-head img.realm-icon';
const PANEL_ICON = '.org-icon img.org-icon-img';

/** The `src` of the first element matching `selector`, or null. */
const srcOf = (selector: string) =>
  `document.querySelector(${JSON.stringify(selector)})?.getAttribute('src') ?? null`;

t.test('an administrator uploads the icon and a member sees it, live', async (t) => {
  if (NO_CHROMIUM) return;
  const ts = await startServer(t);
  const admin = await openApp(b, ts.url, ts.fx, 'iago');
  const member = await openApp(b, ts.url, ts.fx, 'hamlet', { width: 390, height: 844 });
  const page = admin.page;
  const mp = member.page;

  // Before: the initial, no image; the member's panel has no buttons.
  t.equal(await page.locator(SIDEBAR_ICON).count(), 0, 'no icon image yet');
  await mp.goto(ts.url + '/#settings/organization');
  await mp.waitForSelector('.settings h3:has-text("Organization")');
  await mp.waitForSelector('.org-icon .org-icon-default');
  t.equal(await mp.locator('.org-icon button').count(), 0, 'a member has no icon buttons');

  await openSettings(page, 'Organization');
  await page.waitForSelector('.org-icon .org-icon-default');
  t.equal(await page.locator('.org-icon button:has-text("Delete icon")').count(), 0);
  const image = await sharp({
    create: { width: 240, height: 160, channels: 3, background: '#e07b00' },
  })
    .png()
    .toBuffer();
  const [chooser] = await Promise.all([
    page.waitForEvent('filechooser'),
    page.click('.org-icon button:has-text("Upload icon")'),
  ]);
  await chooser.setFiles({ name: 'crest.png', mimeType: 'image/png', buffer: image });
  await page.waitForSelector('.org-icon [role="status"]:has-text("Uploaded the icon.")');

  const reg = assertSuccess(t, await ts.api.post('hamlet', 'register', {}));
  const url = reg.realm_icon_url as string;
  t.match(url, /^\/user_avatars\/\d+\/realm\/icon-[0-9a-f]{16}\.png$/, 'the server has it');
  await waitFor(page, `${srcOf(SIDEBAR_ICON)} === ${JSON.stringify(url)}`);
  await waitFor(page, `${srcOf(PANEL_ICON)} === ${JSON.stringify(url)}`);
  t.pass('the administrator’s sidebar and panel show it');
  await page.waitForSelector('.org-icon button:has-text("Delete icon")');
  // The image loaded (a square from the server's 100×100 PNG).
  await waitFor(
    page,
    `(() => { const i = document.querySelector('${SIDEBAR_ICON}'); return !!i && i.complete && i.naturalWidth === 100 && i.naturalHeight === 100; })()`,
  );
  await screenshot(page, t, 'organization-icon-admin-1280');

  // The member's open app follows the event: its panel, and its sidebar (the drawer at 390).
  await waitFor(mp, `${srcOf(PANEL_ICON)} === ${JSON.stringify(url)}`);
  await waitFor(mp, `${srcOf(SIDEBAR_ICON)} === ${JSON.stringify(url)}`);
  t.equal(await mp.locator('.org-icon button').count(), 0, 'still no buttons for a member');
  const panelFits = await mp.evaluate(`(() => {
    const r = document.querySelector('.org-icon').getBoundingClientRect();
    return r.left >= 0 && r.right <= window.innerWidth;
  })()`);
  t.ok(panelFits, 'the icon section fits at 390 px');
  await screenshot(mp, t, 'organization-icon-member-390');
  await mp.goto(ts.url + '/#feed');
  await mp.click('button[aria-label="Open the sidebar"]');
  await waitDrawerOpen(mp);
  await waitFor(
    mp,
    `(() => { const i = document.querySelector('${SIDEBAR_ICON}'); return !!i && i.complete && i.naturalWidth === 100; })()`,
  );
  await screenshot(mp, t, 'sidebar-icon-member-390');

  // Deleted: both back to the initial.
  await page.click('.org-icon button:has-text("Delete icon")');
  await page.waitForSelector('.org-icon [role="status"]:has-text("Deleted the icon.")');
  await waitFor(page, `document.querySelector('${SIDEBAR_ICON}') === null`);
  await waitFor(mp, `document.querySelector('${SIDEBAR_ICON}') === null`);
  t.pass('the icon is gone from both sidebars');
  t.equal(
    assertSuccess(t, await ts.api.post('hamlet', 'register', {})).realm_icon_source,
    'G',
    'the server is back to the default',
  );
  admin.watch.assertClean(t, /WebSocket|status of 401/);
  member.watch.assertClean(t, /WebSocket|status of 401/);
});
