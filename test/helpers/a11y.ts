/**
 * Accessibility checks in chromium with axe-core (the devDependency's axe.min.js): the page's
 * Content-Security-Policy forbids string evaluation by the page, but not what the test drives
 * through the browser's DevTools protocol (page.evaluate of a string, as waitFor does): axe's
 * source goes in that way, and runs without eval of its own.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Test } from 'tap';
import type { Page } from 'playwright-core';
import { screenshot } from './browser.js';

const AXE_SOURCE = fs.readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

type Found = { id: string; impact: string; help: string; targets: string[] };

/** axe's violations on the page as it is now. */
export async function violations(page: Page): Promise<Found[]> {
  if (!(await page.evaluate(`typeof window.axe === 'object'`))) await page.evaluate(AXE_SOURCE);
  const all = await page.evaluate<Found[]>(`axe
    .run(document, { resultTypes: ['violations'] })
    .then((r) => r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(' ') + (n.failureSummary ? ' — ' + n.failureSummary.replace(/\\s+/g, ' ').slice(0, 160) : '')),
    })))`);
  return all;
}

/** Asserts none, naming each rule and target found, and keeps a screenshot of the state. */
export async function check(t: Test, page: Page, state: string): Promise<void> {
  const found = await violations(page);
  const grave = found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  const lines = grave.flatMap((v) => v.targets.map((x) => `${v.id} (${v.impact}): ${x}`));
  t.same(lines, [], `${state}: no serious or critical axe violation`);
  // The lesser ones are told, not asserted (a reviewer's list, not a gate).
  for (const v of found.filter((v) => !grave.includes(v)))
    t.comment(`${state}: ${v.id} (${v.impact}) ${v.targets.length}×: ${v.targets[0]}`);
  await screenshot(page, t, state);
}
