/**
 * The browser-test harness: Debian's chromium driven through playwright-core (no browser
 * download), against the real server on an ephemeral port with a fresh data directory.
 *
 *   const { b } = browserSuite(t);                // top of the file (browser-suite.ts): skipped
 *                                                 // with a note without chromium, else one
 *                                                 // chromium for the file, closed at its end
 *   // in each test (after `if (NO_CHROMIUM) return;`):
 *   const { url, fx } = await startServer(t);     // or startServer(t, { webDir }) for a fixture
 *   const page = await b.newPage();               // a fresh context (cookies, storage) per page
 *   const watch = await watchPage(page);          // console errors, CSP violations, Basic challenges
 *   await page.goto(url);
 *   await screenshot(page, t, 'login');           // .tap/screenshots/<test file>/<name>.png
 *   watch.assertClean(t);
 *
 * One browser per test file (launching costs a second or more; launch it in `t.before`); pages
 * and contexts are cheap, and those a test opened are closed when it ends.
 * Each launch gets a fresh profile (playwright's temporary user-data-dir, removed on close), and
 * runs headless without GPU, QUIC, first-run pages or any background traffic to outside hosts.
 * CHROMIUM_PATH overrides `/usr/bin/chromium`.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import {
  chromium,
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type Page,
} from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where the suite's screenshots go (gitignored with the rest of .tap/). */
export const SCREENSHOT_DIR = path.resolve('.tap', 'screenshots');

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
];

export function chromiumAvailable(): boolean {
  try {
    fs.accessSync(CHROMIUM_PATH, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why this machine cannot run the browser tests (null: it can). A browser test file starts with
 * `if (NO_CHROMIUM) t.plan(0, NO_CHROMIUM);` (browserSuite does it; CI installs Debian's chromium:
 * .ci/run).
 */
export const NO_CHROMIUM = chromiumAvailable()
  ? null
  : `no chromium at ${CHROMIUM_PATH} (apt-get install chromium): browser tests skipped`;

export type TestBrowser = {
  browser: Browser;
  /** A page in a context of its own (no cookies or storage shared with other pages). */
  newPage(opts?: BrowserContextOptions): Promise<Page>;
  /** A context of its own, for tests that open several pages as one user (tabs). */
  newContext(opts?: BrowserContextOptions): Promise<BrowserContext>;
  /**
   * The same browser for a test that runs beside the file's other tests (a file with `t.jobs`
   * above 1): the contexts opened through it are closed when `sub` ends, and only then (those
   * opened through the file's own `newPage`/`newContext` are closed when any of its tests ends).
   */
  of(sub: Test): TestBrowser;
};

/** How long a test file with a browser may run in all (its waits bound themselves). */
const FILE_TIMEOUT_MS = 360_000;

/**
 * Chromium for this test, closed at its teardown (check NO_CHROMIUM first). Launched for the
 * whole file (`t` the root test, in `t.before`), it raises the file's time limit to
 * FILE_TIMEOUT_MS.
 */
export async function launchBrowser(t: Test): Promise<TestBrowser> {
  if (NO_CHROMIUM) throw new Error(NO_CHROMIUM);
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
    // The server is on loopback: nothing should need longer, but a loaded CI machine is slow.
    timeout: 60_000,
  });
  t.teardown(() => browser.close());
  // A file that drives a browser runs for a minute or more, longer on a loaded machine: more
  // than the runner's default per file (.taprc), which would cut it off with nothing wrong.
  if (t.parent === undefined) t.setTimeout(FILE_TIMEOUT_MS);
  // A file's browser outlives its tests: each test's pages are closed when it ends, so that apps
  // whose server is gone do not keep reconnecting (and holding a renderer each) while the next
  // tests run.
  const open = new Set<BrowserContext>();
  t.afterEach(async (ended) => {
    if (ended.parent !== t) return;
    const contexts = [...open];
    open.clear();
    await Promise.all(contexts.map((c) => c.close().catch(() => {})));
  });
  const contextFor = async (opts: BrowserContextOptions, owner: Test | null) => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...opts });
    context.setDefaultTimeout(30_000);
    if (owner) {
      owner.teardown(() => context.close().catch(() => {}));
      return context;
    }
    open.add(context);
    context.on('close', () => open.delete(context));
    return context;
  };
  const made = (owner: Test | null): TestBrowser => ({
    browser,
    newContext: (opts = {}) => contextFor(opts, owner),
    newPage: async (opts = {}) => (await contextFor(opts, owner)).newPage(),
    of: (sub) => made(sub),
  });
  return made(null);
}

/** A file-system-safe name for the current test file and test. */
function slug(s: string): string {
  return s
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80);
}

/**
 * Saves a full-page screenshot as .tap/screenshots/<test file>/<name>.png and returns its path
 * (look at them: the file tool shows PNGs).
 */
export async function screenshot(page: Page, t: Test, name: string): Promise<string> {
  const file = slug(path.basename(process.argv[1] ?? 'test', '.js'));
  const dir = path.join(SCREENSHOT_DIR, file);
  fs.mkdirSync(dir, { recursive: true });
  const out = path.join(dir, `${slug(name)}.png`);
  await page.screenshot({ path: out, fullPage: true });
  t.comment(`screenshot: ${path.relative(process.cwd(), out)}`);
  return out;
}

export type PageWatch = {
  /** Messages the page logged as errors (console.error, failed loads Chromium reports). */
  consoleErrors: string[];
  /** Exceptions thrown by the page's scripts. */
  pageErrors: string[];
  /** Content-Security-Policy violations the page reported (directive and blocked URI). */
  cspViolations: string[];
  /**
   * Responses the page received with a `WWW-Authenticate: Basic` challenge: each would open the
   * browser's own password dialog in a desktop browser.
   */
  basicChallenges: string[];
  /** Asserts none of the above happened (besides `allowConsole` matches). */
  assertClean(t: Test, allowConsole?: RegExp): void;
};

/**
 * Watches a page (from before its first navigation) for what a user would notice: errors,
 * blocked content, login dialogs.
 */
export async function watchPage(page: Page): Promise<PageWatch> {
  const watch: PageWatch = {
    consoleErrors: [],
    pageErrors: [],
    cspViolations: [],
    basicChallenges: [],
    assertClean(t, allowConsole) {
      const errors = watch.consoleErrors.filter((m) => !allowConsole?.test(m));
      t.same(errors, [], 'no console errors');
      t.same(watch.pageErrors, [], 'no script errors');
      t.same(watch.cspViolations, [], 'no Content-Security-Policy violation');
      t.same(watch.basicChallenges, [], 'no Basic challenge (no browser login dialog)');
    },
  };
  page.on('console', (msg) => {
    if (msg.type() === 'error') watch.consoleErrors.push(msg.text());
  });
  page.on('pageerror', (err) => watch.pageErrors.push(String(err)));
  page.on('response', (res) => {
    const challenge = res.headers()['www-authenticate'];
    if (challenge !== undefined && /^\s*basic\b/i.test(challenge))
      watch.basicChallenges.push(`${res.status()} ${res.url()}`);
  });
  // CSP violations are events inside the page: a binding carries them out.
  await page.exposeBinding('__confabCspViolation', (_source, text: string) => {
    watch.cspViolations.push(text);
  });
  // (Scripts run in the page are strings: the tests' TypeScript has no DOM types.)
  await page.addInitScript(`document.addEventListener('securitypolicyviolation', (e) => {
    window.__confabCspViolation(e.effectiveDirective + ' ' + (e.blockedURI || '(inline)'));
  });`);
  return watch;
}

/** The cookies of a page's context for `url`, by name. */
export async function cookiesOf(page: Page, url: string): Promise<Map<string, string>> {
  const cookies = await page.context().cookies(url);
  return new Map(cookies.map((c) => [c.name, c.value]));
}

/**
 * Fills a login form (the app's or a fixture's: fields `username` and `password`, a submit
 * button) and submits it.
 */
export async function fillLogin(page: Page, email: string, password: string): Promise<void> {
  await page.fill('input[name="username"]', email);
  await page.fill('input[name="password"]', password);
  await page.click('button[type="submit"]');
}

/** A fetch from the page (its cookies, its origin): the status and WWW-Authenticate header. */
export function fetchInPage(
  page: Page,
  url: string,
): Promise<{ status: number; challenge: string }> {
  return page.evaluate(`fetch(${JSON.stringify(url)}).then((r) => ({
    status: r.status,
    challenge: r.headers.get('www-authenticate') ?? '',
  }))`);
}
