/**
 * The web app in chromium: a rendered code block too wide for its message scrolls sideways, and
 * the keyboard reaches it (axe's "scrollable-region-focusable"): such a block is a Tab stop and
 * its arrow keys scroll it; a block that fits is no Tab stop. Whether a block is too wide follows
 * the window: the same block at 390 and at 1280 pixels.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { violations } from '../helpers/a11y.js';
import { openApp, waitFor, waitMessage } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { createChannel } from '../helpers/channels.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';

const { b } = browserSuite(t);

/** A line of 70 characters: wider than a message at 390, narrower than one at 1280. */
const MEDIUM = 'const answer = computeTheAnswer(question, { carefully: true }); // ok';
const WIDE = 'x'.repeat(400);

/** Each code block of the message with `text`: its tabindex, and whether it overflows. */
function blocks(page: Page, text: string): Promise<{ tab: string | null; wide: boolean }[]> {
  return page.evaluate(`[...document.querySelectorAll('.msg')]
    .filter((m) => m.textContent.includes(${JSON.stringify(text)}))
    .flatMap((m) => [...m.querySelectorAll('.content pre')])
    .map((p) => ({ tab: p.getAttribute('tabindex'), wide: p.scrollWidth > p.clientWidth }))`);
}

t.test(
  'a wide code block is a Tab stop and scrolls by its arrow keys; a short one is not',
  async (t) => {
    if (NO_CHROMIUM) return;
    const ts = await startServer(t);
    const general = await createChannel(ts.api, 'iago', 'general');
    await ts.api.post('hamlet', 'users/me/subscriptions', {
      subscriptions: JSON.stringify([{ name: 'general' }]),
    });
    await sendChannelMessage(
      ts.api,
      'iago',
      'general',
      'code',
      'Three blocks:\n```\nshort()\n```\n```\n' + WIDE + '\n```\n```\n' + MEDIUM + '\n```',
    );
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      width: 390,
      height: 844,
      hash: `#narrow/channel/${general}-general`,
    });
    await waitMessage(page, 'Three blocks');
    await waitFor(
      page,
      `document.querySelectorAll('.msg .content pre[tabindex="0"]').length === 2`,
    );
    t.same(
      await blocks(page, 'Three blocks'),
      [
        { tab: null, wide: false },
        { tab: '0', wide: true },
        { tab: '0', wide: true },
      ],
      '390: the two wide blocks are Tab stops, the short one is not',
    );
    const found = await violations(page);
    t.same(
      found.filter((v) => v.id === 'scrollable-region-focusable').flatMap((v) => v.targets),
      [],
      'axe: every scrollable region is focusable',
    );
    // Focused (as Tab leaves it), its arrow keys scroll it.
    const wide = page.locator('.msg .content pre[tabindex="0"]').first();
    await wide.focus();
    t.equal(await page.evaluate<number>(`document.activeElement.scrollLeft`), 0);
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('End');
    await waitFor(
      page,
      `document.activeElement.tagName === 'PRE' && document.activeElement.scrollLeft > 0`,
    );
    t.pass('the arrow keys scroll it');
    await screenshot(page, t, 'code-block-focused-390');

    // At 1280 the medium block fits: no longer a Tab stop; the widest still is.
    await page.setViewportSize({ width: 1280, height: 800 });
    await waitFor(
      page,
      `document.querySelectorAll('.msg .content pre[tabindex="0"]').length === 1`,
    );
    t.same(
      await blocks(page, 'Three blocks'),
      [
        { tab: null, wide: false },
        { tab: '0', wide: true },
        { tab: null, wide: false },
      ],
      '1280: only the block still too wide',
    );
    await screenshot(page, t, 'code-blocks-1280');
    watch.assertClean(t);
  },
);
