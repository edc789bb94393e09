/**
 * The web app in chromium: a message sent where the view does not show it (another topic than
 * the topic read) says so above the compose box, as the reference's "Sent! Your message is
 * outside your current view.", with a link to its conversation; one sent into the view does not.
 */
import t from 'tap';
import { messageTexts, openApp, waitFor, waitMessage } from '../helpers/app.js';
import { NO_CHROMIUM, screenshot } from '../helpers/browser.js';
import { browserSuite } from '../helpers/browser-suite.js';
import { sendChannelMessage } from '../helpers/messages.js';

const { b, ts, channels } = browserSuite(t, {
  server: {},
  channels: { general: { by: 'iago', members: ['hamlet', 'othello', 'iago'] } },
  seed: async () => {
    await sendChannelMessage(ts.api, 'othello', 'general', 'lunch', 'Lunch at noon?');
  },
});

for (const width of [1280, 390]) {
  t.test(`sent outside the view: the notice and its link (${width} px)`, async (t) => {
    if (NO_CHROMIUM) return;
    const { page, watch } = await openApp(b, ts.url, ts.fx, 'hamlet', {
      hash: `#narrow/channel/${channels.general}-general/topic/lunch`,
      width,
    });
    await waitMessage(page, 'Lunch at noon?');
    await page.waitForSelector('#compose-topic');

    // Into the topic read: shown, no notice.
    await page.fill('#compose-text', `Noon is fine ${width}`);
    await page.keyboard.press('Enter');
    await waitMessage(page, `Noon is fine ${width}`);
    t.equal(await page.locator('.sent-outside').count(), 0, 'sent into the view: no notice');

    // Another topic: not in this view.
    await page.fill('#compose-topic', `dinner ${width}`);
    await page.fill('#compose-text', `And dinner? ${width}`);
    await page.keyboard.press('Enter');
    await page.waitForSelector('.sent-outside');
    t.match(
      await page.textContent('.sent-outside'),
      `Sent! Your message is outside your current view. Go to #general › dinner ${width}`,
      'the notice, and where the message went',
    );
    t.notOk(
      (await messageTexts(page)).some((m) => m.includes('And dinner?')),
      'the view does not show it',
    );
    await screenshot(page, t, `sent-outside-${width}`);
    await page.click('.sent-outside a');
    await waitMessage(page, `And dinner? ${width}`);
    await waitFor(page, `location.hash.includes('dinner')`);
    t.equal(await page.locator('.sent-outside').count(), 0, 'gone in the view it led to');
    watch.assertClean(t, /WebSocket|status of 401/);
  });
}
