/**
 * The cluster's first entry (the first realm, ClusterNode.bootstrap) is appended patiently
 * (src/cluster/jetstream.ts appendFirst): a cluster just started answers a publish with a timeout
 * or "no responders" while its stream elects a leader, and the node gave up at once and stopped
 * (the same class as the CI failure on "the log stream has no leader" at start, e9f6a79). With
 * JetStream played by hand: unanswered attempts are asked again with the same expectation and
 * message id; an attempt that landed unanswered is recognised by its id when the repeat is
 * refused; another node's first entry is a refusal; other failures are passed on at once.
 */
import t from 'tap';
import {
  appendFirst,
  appendSurely,
  clusterNames,
  type Entry,
} from '../../src/cluster/jetstream.js';

const names = clusterNames();
const entry: Entry = { k: 'lease', node: 'n1', inc: 'i1', term: 0 };
const noResponders = () => Object.assign(new Error('503'), { code: '503' });
const timeout = () => Object.assign(new Error('TIMEOUT'), { code: 'TIMEOUT' });
const wrongLast = () =>
  Object.assign(new Error('wrong last sequence'), { api_error: { err_code: 10071 } });

/** A stream whose publishes answer with `answers` in turn (then normally); its log. */
function stream(answers: ('no-responders' | 'timeout' | 'timeout-landed' | 'other')[]) {
  const log: { msgId: string }[] = [];
  const seen: { expect: string | undefined; msgId: string | undefined }[] = [];
  const js = {
    publish: (_s: string, _d: Uint8Array, o: { headers: Map<string, string> }) => {
      const msgId = o.headers.get('Nats-Msg-Id')!;
      const expect = o.headers.get('Nats-Expected-Last-Sequence');
      seen.push({ expect, msgId });
      const a = answers.shift();
      if (a === 'no-responders') return Promise.reject(noResponders());
      if (a === 'timeout') return Promise.reject(timeout());
      if (a === 'other') return Promise.reject(new Error('permissions violation'));
      if (String(log.length) !== expect) return Promise.reject(wrongLast());
      log.push({ msgId });
      if (a === 'timeout-landed') return Promise.reject(timeout());
      return Promise.resolve({ seq: log.length });
    },
  };
  const jsm = {
    streams: {
      getMessage: (_s: string, q: { seq: number }) => {
        const m = log[q.seq - 1];
        if (!m)
          return Promise.reject(
            Object.assign(new Error('no message'), { api_error: { err_code: 10037 } }),
          );
        return Promise.resolve({ seq: q.seq, header: { get: () => m.msgId } });
      },
    },
  };
  return { js: js as never, jsm: jsm as never, log, seen };
}

t.test('unanswered attempts are asked again with the same expectation and id', async (t) => {
  const s = stream(['no-responders', 'timeout', 'no-responders']);
  const seq = await appendFirst(s.js, s.jsm, names, 1, entry, 0, 'm1', Date.now(), 1);
  t.equal(seq, 1, 'appended once the stream answers');
  t.same(s.log, [{ msgId: 'm1' }], 'once');
  t.ok(
    s.seen.every((a) => a.expect === '0' && a.msgId === 'm1'),
    'every attempt expects the empty stream, with one message id',
  );
});

t.test('an attempt that landed unanswered is recognised by its id', async (t) => {
  const s = stream(['timeout-landed']);
  t.equal(await appendFirst(s.js, s.jsm, names, 1, entry, 0, 'm1', Date.now(), 1), 1);
  t.same(s.log, [{ msgId: 'm1' }], 'not appended twice');
});

t.test("another node's first entry is a refusal", async (t) => {
  const s = stream(['timeout']);
  s.log.push({ msgId: 'other' });
  await t.rejects(
    appendFirst(s.js, s.jsm, names, 1, entry, 0, 'm1', Date.now(), 1),
    /wrong last sequence/,
    'refused after looking at the entry there',
  );
  const fresh = stream([]);
  fresh.log.push({ msgId: 'other' });
  await t.rejects(
    appendFirst(fresh.js, fresh.jsm, names, 1, entry, 0, 'm1', Date.now(), 1),
    /wrong last sequence/,
    'and at once without an unanswered attempt',
  );
});

t.test('other failures, and no answer past the patience, are passed on', async (t) => {
  const s = stream(['other']);
  await t.rejects(
    appendFirst(s.js, s.jsm, names, 1, entry, 0, 'm1', Date.now(), 1),
    /permissions violation/,
  );
  const late = stream(['timeout']);
  await t.rejects(
    appendFirst(late.js, late.jsm, names, 1, entry, 0, 'm1', Date.now() - 100_000, 1),
    /TIMEOUT/,
    'started longer ago than the startup patience',
  );
});

t.test("an append's connection is checked before its attempt times out", async (t) => {
  // A frozen NATS server answers nothing: the connection check (a ping, then another server) starts
  // 0.3 s into the attempt, not at its 1 s timeout (before: at the timeout, 0.7 s later).
  const seen: string[] = [];
  const js = {
    publish: (_s: string, _d: Uint8Array, o: { timeout: number }) =>
      new Promise((_, reject) =>
        setTimeout(() => {
          seen.push('timeout');
          reject(timeout());
        }, o.timeout),
      ),
  };
  await t.rejects(
    appendSurely(
      js as never,
      {} as never,
      names,
      1,
      entry,
      0,
      'm1',
      () => false,
      () => void seen.push('check'),
      1000,
    ),
    /TIMEOUT/,
  );
  t.same(seen.slice(0, 2), ['check', 'timeout'], 'checked first, then timed out');
});
