/**
 * `reasked` (src/cluster/jetstream.ts): a JetStream question sent while a stream or the meta group
 * elects a leader is never answered, so a question still unanswered is asked again beside the
 * first, every REASK_MS and at once when the log stream has elected a leader (`kick`); the first
 * attempt to settle decides. The questions are played by hand: each attempt is a promise the test
 * settles. No timing is asserted: waits are for the state checked.
 */
import t from 'tap';
import { kick, reasked, type Reasks } from '../../src/cluster/jetstream.js';

type Attempt = { resolve: (v: number) => void; reject: (e: Error) => void };

function asker() {
  const attempts: Attempt[] = [];
  const ask = () => new Promise<number>((resolve, reject) => attempts.push({ resolve, reject }));
  return { attempts, ask };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(what: string, ok: () => boolean, ms = 10_000) {
  for (const deadline = Date.now() + ms; !ok(); await sleep(5))
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
}

t.test(
  'an unanswered question is asked again beside the first; the first answer decides',
  async (t) => {
    const q = asker();
    const answer = reasked(q.ask, 20, 10);
    await until('a second attempt', () => q.attempts.length >= 2);
    q.attempts[1]!.resolve(42);
    t.equal(await answer, 42, 'the second attempt answered');
    const asked = q.attempts.length;
    q.attempts[0]!.resolve(7); // the first, answered late: ignored
    await sleep(60);
    t.equal(q.attempts.length, asked, 'no attempt after the answer');
  },
);

t.test('a refusal settles it too (the caller decides whether to ask again)', async (t) => {
  const q = asker();
  const answer = reasked(q.ask, 20, 10);
  await until('an attempt', () => q.attempts.length >= 1);
  q.attempts[0]!.reject(Object.assign(new Error('no leader'), { code: '503' }));
  await t.rejects(answer, { message: 'no leader' });
});

t.test('at most `most` attempts are in flight', async (t) => {
  const q = asker();
  const answer = reasked(q.ask, 1, 3);
  await until('three attempts', () => q.attempts.length >= 3);
  await sleep(50);
  t.equal(q.attempts.length, 3, 'no fourth');
  q.attempts[2]!.resolve(1);
  t.equal(await answer, 1);
});

t.test('a kick (the log stream elected a leader) asks again at once', async (t) => {
  const q = asker();
  const reasks: Reasks = new Set();
  // A pace no test waits for: only the kick can make the second attempt.
  const answer = reasked(q.ask, 3_600_000, 10, reasks);
  await until('the first attempt', () => q.attempts.length === 1);
  t.equal(reasks.size, 1, 'waiting for a kick');
  kick(reasks);
  await until('a second attempt', () => q.attempts.length === 2);
  q.attempts[1]!.resolve(5);
  t.equal(await answer, 5);
  t.equal(reasks.size, 0, 'no longer waiting once answered');
  kick(reasks);
  await sleep(20);
  t.equal(q.attempts.length, 2, 'a kick after the answer asks nothing');
});
