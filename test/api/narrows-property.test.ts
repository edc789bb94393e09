/**
 * Narrows, as a property (fast-check) against the real server: any narrow — known and unknown
 * operators, operands naming channels, topics, users and messages that exist or not, of the
 * wrong type, negated, search strings of odd characters, many terms — given to GET /messages,
 * GET /messages/matches_narrow and POST /messages/flags/narrow, with any anchor, is answered
 * within 5 s and never 5xx (errors in the API's format, BAD_NARROW for what does not resolve);
 * the database passes `PRAGMA integrity_check` at the end. CONFAB_FUZZ_SEED, CONFAB_FUZZ_RUNS as
 * for every fuzz test (docs/robustness.md).
 */
import fc from 'fast-check';
import t from 'tap';
import { assertSuccess } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { fuzzScale, fuzzSeed } from '../helpers/fuzz.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer } from '../helpers/server.js';

t.test('any narrow is answered well', async (t) => {
  const seed = fuzzSeed();
  t.comment(`fast-check seed ${seed} (CONFAB_FUZZ_SEED=${seed} repeats it)`);
  const { api, fx, server } = await startServer(t);
  const verona = await createChannel(api, 'hamlet', 'Verona');
  const ids: number[] = [];
  for (const content of ['hello world', 'a **b** c', '😀 é the end', 'http://x.co']) {
    ids.push(await sendChannelMessage(api, 'hamlet', verona, 'topic one', content));
  }
  const users = Object.values(fx.users);
  const operand = fc.oneof(
    fc.constantFrom(
      'Verona',
      'verona',
      'nowhere',
      'topic one',
      '',
      ' ',
      'dm',
      'private',
      'starred',
      'unread',
      'mentioned',
      'resolved',
      'followed',
      'muted',
      'link',
      'image',
      'attachment',
      'reaction',
      users[0]!.email,
      'nobody@zulip.com',
      `${users[0]!.email},${users[1]!.email}`,
      '"quoted phrase"',
      'hello wor',
      '\u0000',
      '%',
      '_',
      '*',
      '"',
      "'",
      '\\',
      '😀',
      'x'.repeat(2000),
    ),
    fc.constantFrom(verona, ids[0]!, ...users.map((u) => u.id), -1, 0, 2 ** 53, 1e300),
    fc.array(fc.constantFrom(...users.map((u) => u.id), -1, 0, 99999), { maxLength: 4 }),
    fc.string({ unit: 'binary', maxLength: 20 }),
    fc.constantFrom(null, true, {}, [[]], 1.5),
  );
  const operator = fc.oneof(
    fc.constantFrom(
      'channel',
      'stream',
      'channels',
      'streams',
      'topic',
      'subject',
      'sender',
      'dm',
      'pm-with',
      'dm-including',
      'group-pm-with',
      'is',
      'in',
      'has',
      'search',
      'id',
      'near',
      'with',
      'bogus',
    ),
    fc.string({ maxLength: 6 }),
  );
  // Mostly terms of known operators with operands of their type (so the query layer gets them),
  // and some of anything.
  const plausible = fc.oneof(
    fc.record({
      operator: fc.constantFrom('channel', 'topic', 'sender', 'is', 'has', 'search', 'dm', 'in'),
      operand: fc.constantFrom(
        'Verona',
        'topic one',
        'nowhere',
        users[0]!.email,
        'starred',
        'unread',
        'private',
        'link',
        'hello',
        '"hello world"',
        'é 😀',
        '%_*',
        'home',
      ),
      negated: fc.boolean(),
    }),
    fc.record({
      operator: fc.constantFrom('id', 'near', 'channel', 'sender', 'dm-including'),
      operand: fc.constantFrom(verona, ids[1]!, users[1]!.id, 99999),
      negated: fc.boolean(),
    }),
  );
  const term = fc.oneof(
    { weight: 12, arbitrary: plausible },
    fc.record(
      { operator, operand, negated: fc.oneof(fc.boolean(), fc.constant('yes')) },
      { requiredKeys: ['operator', 'operand'] },
    ),
    fc.tuple(operator, operand),
  );
  const narrow = fc.oneof(
    { weight: 8, arbitrary: fc.array(term, { maxLength: 6 }).map((n) => JSON.stringify(n)) },
    {
      weight: 1,
      arbitrary: fc.array(term, { minLength: 90, maxLength: 120 }).map((n) => JSON.stringify(n)),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
  );
  const anchor = fc.oneof(
    fc.constantFrom('newest', 'oldest', 'first_unread', 'newest', '-1', '0', 'x'),
    fc.constantFrom(...ids.map(String)),
  );
  const request = fc.record({
    narrow,
    anchor,
    before: fc.constantFrom('0', '1', '5', '1000', '5', '-1'),
    after: fc.constantFrom('0', '1', '5', '1000'),
    kind: fc.constantFrom('messages', 'matches', 'flags'),
    who: fc.constantFrom('hamlet', 'desdemona', 'polonius'),
  });
  let cases = 0;
  const statuses = new Map<number, number>();
  const refusals = new Map<string, number>();
  try {
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        cases++;
        const started = performance.now();
        const res =
          r.kind === 'messages'
            ? await api.get(r.who, 'messages', {
                narrow: r.narrow,
                anchor: r.anchor,
                num_before: r.before,
                num_after: r.after,
              })
            : r.kind === 'matches'
              ? await api.get(r.who, 'messages/matches_narrow', {
                  narrow: r.narrow,
                  msg_ids: JSON.stringify(ids),
                })
              : await api.post(r.who, 'messages/flags/narrow', {
                  narrow: r.narrow,
                  anchor: r.anchor,
                  num_before: r.before,
                  num_after: r.after,
                  op: 'add',
                  flag: 'starred',
                });
        const ms = performance.now() - started;
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status >= 400) {
          const key = String(res.body.msg).replace(/\d+/g, 'N').slice(0, 50);
          refusals.set(key, (refusals.get(key) ?? 0) + 1);
        }
        const problems: string[] = [];
        if (res.status >= 500) problems.push(`status ${res.status}`);
        if (ms > 5000) problems.push(`answered after ${Math.round(ms)} ms`);
        if (res.status >= 400 && (res.body.result !== 'error' || typeof res.body.code !== 'string'))
          problems.push('an error not in the API format');
        if (problems.length > 0) {
          throw new Error(`${problems.join('; ')}: ${res.text.slice(0, 300)}`);
        }
      }),
      { numRuns: 300 * fuzzScale(), seed, endOnFailure: true },
    );
    t.pass(`${cases} narrows answered well`);
  } catch (err) {
    const cause =
      err instanceof Error && err.cause instanceof Error ? `\n${err.cause.message}` : '';
    t.fail(String(err instanceof Error ? err.message : err) + cause);
  }
  t.comment(`statuses: ${[...statuses].map(([s, n]) => `${s}×${n}`).join(' ')}`);
  if (process.env.CONFAB_FUZZ_STATS) {
    const top = [...refusals].sort((a, b) => b[1] - a[1]).slice(0, 15);
    t.comment(`refusals: ${top.map(([m, n]) => `${n}× ${m}`).join(' | ')}`);
  }
  assertSuccess(t, await api.get('hamlet', 'users/me'), 'the server still serves');
  const integrity = server.store.db.prepare('PRAGMA integrity_check').pluck().all();
  t.same(integrity, ['ok'], 'PRAGMA integrity_check: ok');
});
