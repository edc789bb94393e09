/**
 * A browser test file's shared set-up (test/browser): skipped with a note without chromium, one
 * chromium for the file, and, when asked, the file's one real server (browser.ts, server.ts) with
 * its realm's settings, channels and members, then the file's own data. All made in the file's
 * `t.before` and closed at its end (launchBrowser's and startServer's teardowns).
 *
 *   const { b, ts } = browserSuite(t, {
 *     server: { maxFileUploadBytes: 1024 * 1024 },   // or `true`; omitted: each test starts its own
 *     realm: { enable_read_receipts: true },          // setRealmSettings, before the channels
 *     channels: { general: { by: 'iago', members: ['hamlet', 'othello'] } },   // in this order
 *     seed: async ({ ts, channels }) => {             // the file's own data, last
 *       general = channels.general;
 *       await sendChannelMessage(ts.api, 'othello', 'general', 'lunch', 'Lunch at noon?');
 *     },
 *   });
 *   t.test('…', async (t) => {
 *     if (NO_CHROMIUM) return;
 *     const { page } = await openApp(b, ts.url, ts.fx, 'hamlet');
 *
 * A file whose tests run side by side (`t.jobs = 4` after this call: tests that mostly wait on
 * the app's timers, each with its own server) opens its pages through `b.of(t)`, closed when
 * that test ends rather than when any test of the file ends.
 *
 * Call it at the top of the file, before its tests. `b` and `ts` stand for the browser and the
 * server made before the first test: read them in the tests (or in `seed`), not at the file's top
 * level, where they are not made yet (reading them there throws, saying so).
 */
import type { Test } from 'tap';
import type { ServerOptions } from '../../src/server.js';
import type { StoredRealmSettings } from '../../src/lib/realm-settings.js';
import type { Params } from './api.js';
import { launchBrowser, NO_CHROMIUM, type TestBrowser } from './browser.js';
import { createChannel, setRealmSettings } from './channels.js';
import { startServer, type TestServer } from './server.js';

/** A channel the set-up makes: `by` creates it, with the fixture users `members` subscribed. */
export type SuiteChannel = {
  by: string;
  members: readonly string[];
  /** More of POST /users/me/subscriptions (invite_only, …). */
  params?: Params;
};

export type Suite<C extends string> = {
  /** The file's chromium. */
  b: TestBrowser;
  /** The file's server (with `server` only). */
  ts: TestServer;
  /** The ids of the channels made, by name. */
  channels: Record<C, number>;
};

export type SuiteOptions<C extends string> = {
  /** The file's server, with these options on top of the tests' (true: none). */
  server?: ServerOptions | true;
  /** Realm settings written before the channels are made (setRealmSettings). */
  realm?: StoredRealmSettings;
  /** Channels to make, in this order, once the server is up. */
  channels?: Record<C, SuiteChannel>;
  /** The file's own data, made last. */
  seed?: (s: Suite<C>) => Promise<void> | void;
};

/** The browser, server and channels of a test file, made in its `t.before` (see above). */
export function browserSuite<C extends string = never>(
  t: Test,
  opts: SuiteOptions<C> = {},
): Suite<C> {
  if (NO_CHROMIUM) t.plan(0, NO_CHROMIUM);
  if ((opts.realm || opts.channels) && !opts.server)
    throw new Error('browserSuite: realm settings and channels need the file’s server (`server`)');
  let browser: TestBrowser | undefined;
  let server: TestServer | undefined;
  const made = (): TestBrowser => {
    if (browser) return browser;
    throw new Error('browserSuite: the browser is launched in t.before; use it in a test');
  };
  const up = (): TestServer => {
    if (server) return server;
    throw new Error(
      opts.server
        ? 'browserSuite: the server is started in t.before; use it in a test'
        : 'browserSuite: this file has no server of its own (`server` not given)',
    );
  };
  const suite: Suite<C> = {
    b: {
      get browser() {
        return made().browser;
      },
      newPage: (o) => made().newPage(o),
      newContext: (o) => made().newContext(o),
      of: (sub) => made().of(sub),
    },
    ts: {
      get server() {
        return up().server;
      },
      get events() {
        return up().events;
      },
      get url() {
        return up().url;
      },
      get api() {
        return up().api;
      },
      get fx() {
        return up().fx;
      },
      get dataDir() {
        return up().dataDir;
      },
    },
    channels: {} as Record<C, number>,
  };
  t.before(async () => {
    if (NO_CHROMIUM) return;
    browser = await launchBrowser(t);
    if (opts.server) {
      const ts = await startServer(t, opts.server === true ? {} : opts.server);
      server = ts;
      if (opts.realm) setRealmSettings(ts, opts.realm);
      for (const [name, c] of Object.entries<SuiteChannel>(opts.channels ?? {})) {
        const principals = c.members.map((n) => ts.fx.users[n]!.id);
        suite.channels[name as C] = await createChannel(ts.api, c.by, name, {
          principals,
          ...c.params,
        });
      }
    }
    await opts.seed?.(suite);
  });
  return suite;
}
