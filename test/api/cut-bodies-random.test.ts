/**
 * Bodies cut at random bytes, on any route (Part 1 of issue 29), as a property (fast-check):
 * every endpoint that takes a body, as a member, an owner or without credentials, under /api/v1/
 * or as the browser app sends it under /json/ (session cookie and CSRF token), with its
 * parameters in every encoding Confab reads (multipart with a file part or without, urlencoded,
 * JSON; JSON inside fields) and by Content-Length or chunked, cut at a random byte — declared at
 * the cut, or cut off by a client that half-closes or resets. Each case: an answer when one is
 * due, within 5 s, never a 5xx, errors in the API's format; nothing left in flight or in
 * DATA_DIR/tmp; and at the end the server serves and `PRAGMA integrity_check` is ok.
 *
 * CONFAB_FUZZ_SEED repeats a run (the seed is printed), CONFAB_FUZZ_RUNS multiplies the number of
 * cases (250); a failure prints fast-check's shrunk counterexample (route, identity, encoding,
 * cut, the body) to turn into a regression test.
 */
import fc from 'fast-check';
import t from 'tap';
import { ENDPOINTS } from '../../src/endpoints/index.js';
import { assertSuccess } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import {
  bodyEndpoints,
  describeCut,
  encodeBody,
  sendCut,
  type CutCase,
} from '../helpers/cut-bodies.js';
import { acceptedValues, currentKeys, fuzzScale, fuzzSeed, ODD_VALUES } from '../helpers/fuzz.js';
import { restoreFixtures } from '../helpers/fuzz-run.js';
import { startServer } from '../helpers/server.js';
import { BrowserSession } from '../helpers/session.js';

const RUNS = 250 * fuzzScale();

t.test('bodies cut at random bytes on any route', async (t) => {
  const seed = fuzzSeed();
  t.comment(`fast-check seed ${seed} (CONFAB_FUZZ_SEED=${seed} repeats it), ${RUNS} cases`);
  const ts = await startServer(t);
  const verona = await createChannel(ts.api, 'hamlet', 'Verona');
  const real = {
    stream_id: [String(verona)],
    user_id: Object.values(ts.fx.users).map((u) => String(u.id)),
  };
  const endpoints = bodyEndpoints(ENDPOINTS);
  const accepted = endpoints.map((ep) => acceptedValues(ep, real));

  const arbCase = fc
    .record({
      ep: fc.integer({ min: 0, max: endpoints.length - 1 }),
      who: fc.constantFrom(null, 'hamlet', 'desdemona', 'polonius'),
      browser: fc.boolean(),
      encoding: fc.constantFrom('multipart-file', 'multipart', 'form', 'json' as const),
      transfer: fc.constantFrom('length', 'length', 'chunked' as const),
      ending: fc.constantFrom('complete', 'complete', 'complete', 'fin', 'reset' as const),
      cutAt: fc.double({ min: 0, max: 1, noNaN: true }),
      file: fc.uint8Array({ maxLength: 2000 }),
      chunkSizes: fc.array(fc.integer({ min: 1, max: 700 }), { maxLength: 5 }),
      // Which parameters are sent, and whether each is accepted or odd.
      picks: fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
    })
    .map((r): CutCase => {
      const ep = endpoints[r.ep]!;
      const ok = accepted[r.ep]!;
      const pathNames = new Set(ep.pathParamNames);
      const fields: [string, string][] = [];
      let i = 0;
      for (const key of ep.compiled.known) {
        if (pathNames.has(key) || !(key in ok)) continue;
        const pick = r.picks[i++ % r.picks.length]!;
        const required = ep.compiled.required.includes(key);
        if (!required && pick % 3 === 0) continue;
        const value = ok[key];
        fields.push([
          key,
          value !== null && value !== undefined && pick % 5 !== 0
            ? value
            : ODD_VALUES[pick % ODD_VALUES.length]!,
        ]);
      }
      const path = ep.path
        .split('/')
        .map((seg) =>
          seg.startsWith(':')
            ? encodeURIComponent(ok[seg.slice(1)] ?? '1')
            : seg.startsWith('*')
              ? 'x'
              : seg,
        )
        .join('/');
      const target = r.browser ? path.replace(/^\/api\/v1\//, '/json/') : path;
      const file = Buffer.from(r.file);
      const { body } = encodeBody(r.encoding, fields, file);
      const length =
        r.transfer === 'chunked' && r.ending !== 'complete' ? body.length * 2 : body.length;
      return {
        method: ep.method,
        target,
        who: r.who,
        encoding: r.encoding,
        transfer: r.transfer,
        ending: r.ending,
        cut: Math.floor(r.cutAt * (length + 1)),
        fields,
        file,
        chunkSizes: r.chunkSizes,
      };
    });

  // The browser app's sessions, logged in again when one ended (a case changed a role, or
  // deactivated the user: restoreFixtures undoes that).
  const sessions: Record<string, BrowserSession> = {};
  const login = async (name: string) => {
    const u = ts.fx.users[name]!;
    const { session } = await BrowserSession.login(ts.url, u.email, u.password);
    if (session) sessions[name] = session;
    else delete sessions[name];
  };
  for (const name of ['hamlet', 'desdemona', 'polonius']) await login(name);
  t.equal(Object.keys(sessions).length, 3, 'logged in as the browser app would');

  let cases = 0;
  const statuses = new Map<string, number>();
  try {
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        cases++;
        const { problems, answer } = await sendCut(ts, c, currentKeys(ts), sessions);
        const key = `${c.target.startsWith('/json/') ? 'json ' : ''}${answer?.status ?? 0}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        // A request that did something (a role changed, a user deactivated) is undone, so the
        // next case runs as the role it names.
        if (answer !== null && answer.status === 200) await restoreFixtures(t, ts);
        if (c.who !== null && c.target.startsWith('/json/') && answer?.status === 401)
          await login(c.who);
        if (problems.length > 0) {
          throw new Error(`${problems.join('; ')}\n  ${describeCut(c)}`);
        }
      }),
      { numRuns: RUNS, seed, endOnFailure: false },
    );
    t.pass(`${cases} cases answered well`);
  } catch (err) {
    // fast-check's message names the shrunk counterexample; its cause, what was wrong with it.
    const cause =
      err instanceof Error && err.cause instanceof Error ? `\n${err.cause.message}` : '';
    t.fail(String(err instanceof Error ? err.message : err) + cause);
  }
  t.comment(
    `statuses (0: none, the client went away; "json": under /json/): ` +
      [...statuses]
        .sort()
        .map(([s, n]) => `${s}×${n}`)
        .join(' '),
  );
  // With hamlet's key as it is now: a case may have regenerated it (POST
  // /users/me/api_key/regenerate, answered 200 under /json/).
  const hamlet = { email: ts.fx.users.hamlet!.email, api_key: currentKeys(ts).hamlet! };
  assertSuccess(t, await ts.api.get(hamlet, 'users/me'), 'the server still serves');
  const integrity = ts.server.store.db.prepare('PRAGMA integrity_check').pluck().all();
  t.same(integrity, ['ok'], 'PRAGMA integrity_check: ok');
});
