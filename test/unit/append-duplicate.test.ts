/**
 * An append asked again after an unanswered attempt (src/cluster/jetstream.ts appendSurely,
 * appendFirst) is acknowledged only by what the log holds, never by JetStream's answer that its
 * message id is a duplicate. nats-server 2.10 records an append's message id on the stream leader
 * before proposing it to the raft group, with sequence 0 until it commits, and answers a repeat
 * meanwhile with `{"seq": 0, "duplicate": true}` (docs/cluster.md "Faults": an acknowledged write
 * lost after two servers thawed). A leader frozen with the proposal in flight answers so when it
 * thaws; the next leader may then drop the proposal and take another entry in its place. The code
 * before this test took that answer as the append landing at sequence 0: the owner answered
 * "success" for a write the log never held. With the stream leader played by hand: what it has
 * committed (the log), the ids it has staged, the proposal in flight.
 */
import t from 'tap';
import {
  appendFirst,
  appendSurely,
  clusterNames,
  isWrongLastSequence,
  type Entry,
} from '../../src/cluster/jetstream.js';

const names = clusterNames();
const subject = `${names.log}.1`;
const entry: Entry = {
  k: 'batch',
  node: 'n1',
  inc: 'i1',
  term: 7,
  changes: [],
  events: [],
  ended: [],
};
const timeout = () => Object.assign(new Error('TIMEOUT'), { code: 'TIMEOUT' });
const wrongLast = (seq: number) =>
  Object.assign(new Error(`wrong last sequence: ${seq}`), { api_error: { err_code: 10071 } });
const noMessage = () =>
  Object.assign(new Error('no message found'), { api_error: { err_code: 10037 } });

/**
 * A replicated stream as its leader answers, nats-server 2.10's way: a publish is checked against
 * its expected last sequence on the subject (or the stream's) as far as the log holds, then
 * against the ids staged for deduplication, then proposed. `frozen` publishes are proposed and
 * never answered (the leader froze); the others commit at once unless the proposal of an earlier
 * one is in flight.
 */
function leader(frozen: number) {
  const log: { subject: string; msgId: string }[] = [{ subject, msgId: 'before' }];
  const staged = new Map<string, number>();
  let inFlight: { subject: string; msgId: string } | null = null;
  let publishes = 0;
  const answers: string[] = [];
  const lastOn = (subj: string) => {
    for (let i = log.length - 1; i >= 0; i--) if (log[i]!.subject === subj) return i + 1;
    return 0;
  };
  const js = {
    publish: (subj: string, _d: Uint8Array, o: { headers: Map<string, string> }) => {
      publishes++;
      const msgId = o.headers.get('Nats-Msg-Id')!;
      // (nats.js's headers answer '' for a header that is not there.)
      const bySubject = o.headers.get('Nats-Expected-Last-Subject-Sequence') || undefined;
      const byStream = o.headers.get('Nats-Expected-Last-Sequence') || undefined;
      if (bySubject !== undefined && Number(bySubject) !== lastOn(subj)) {
        answers.push('wrong last');
        return Promise.reject(wrongLast(lastOn(subj)));
      }
      const dup = staged.get(msgId);
      if (dup !== undefined) {
        answers.push(`duplicate ${dup}`);
        return Promise.resolve({ stream: names.stream, seq: dup, duplicate: true });
      }
      if (byStream !== undefined && Number(byStream) !== log.length) {
        answers.push('wrong last');
        return Promise.reject(wrongLast(log.length));
      }
      staged.set(msgId, 0);
      if (publishes <= frozen) {
        inFlight = { subject: subj, msgId };
        answers.push('proposed, unanswered');
        return Promise.reject(timeout());
      }
      log.push({ subject: subj, msgId });
      staged.set(msgId, log.length);
      answers.push(`acknowledged ${log.length}`);
      return Promise.resolve({ stream: names.stream, seq: log.length, duplicate: false });
    },
  };
  const jsm = {
    streams: {
      getMessage: (_s: string, q: { seq: number; next_by_subj?: string }) => {
        for (let i = q.seq - 1; i < log.length; i++) {
          const m = log[i]!;
          if (q.next_by_subj !== undefined && m.subject !== q.next_by_subj) continue;
          if (q.next_by_subj === undefined && i !== q.seq - 1) break;
          return Promise.resolve({ seq: i + 1, header: { get: () => m.msgId } });
        }
        return Promise.reject(noMessage());
      },
    },
  };
  return {
    js: js as never,
    jsm: jsm as never,
    log,
    answers,
    /** The proposal in flight commits (a quorum took it). */
    commit() {
      if (!inFlight) return;
      log.push(inFlight);
      staged.set(inFlight.msgId, log.length);
      inFlight = null;
    },
    /** The next leader's log lacks the proposal: it is dropped, another entry takes its place. */
    drop(other: string) {
      inFlight = null;
      log.push({ subject, msgId: other });
    },
  };
}

/** appendSurely after the log's first entry, acting after each attempt: `after(n)`. */
function append(s: ReturnType<typeof leader>, after: (n: number) => void) {
  let attempts = 0;
  return appendSurely(s.js, s.jsm, names, 1, entry, 1, 'm1', () => {
    after(++attempts);
    return attempts < 50;
  });
}

t.test(
  'a duplicate answer for a proposal the next leader drops acknowledges nothing',
  async (t) => {
    // Attempt 1 is proposed and the leader freezes; it thaws and answers the repeat as a duplicate
    // (sequence 0); the servers then elect a leader whose log lacks the proposal, and another
    // node's lease marker takes its place.
    const s = leader(1);
    const got = await append(s, (n) => {
      if (n === 2) s.drop('marker of n3');
    }).then(
      (seq) => `acknowledged at ${seq}`,
      (err: unknown) => (isWrongLastSequence(err) ? 'refused' : `failed: ${String(err)}`),
    );
    t.equal(got, 'refused', 'refused: another entry took its place');
    t.same(
      s.answers.slice(0, 2),
      ['proposed, unanswered', 'duplicate 0'],
      'as nats-server 2.10 answers',
    );
    t.same(
      s.log.map((m) => m.msgId),
      ['before', 'marker of n3'],
      'the log never held it',
    );
  },
);

t.test('a duplicate answer, the proposal committed later: its own sequence', async (t) => {
  // The thawed leader answers "duplicate, 0" while the proposal waits for a quorum, then commits.
  const s = leader(1);
  const seq = await append(s, (n) => {
    if (n === 3) s.commit();
  });
  t.equal(seq, 2, 'the sequence the log holds it at, once it holds it');
  t.same(s.answers.slice(0, 3), ['proposed, unanswered', 'duplicate 0', 'duplicate 0']);
  t.same(
    s.log.map((m) => m.msgId),
    ['before', 'm1'],
    'once',
  );
});

t.test('the first entry: a duplicate answer is looked at in the log too', async (t) => {
  const landed = leader(1);
  let attempts = 0;
  const first = appendFirst(landed.js, landed.jsm, names, 1, entry, 1, 'm1', Date.now(), 1);
  // appendFirst has no hook between attempts: the proposal commits once the duplicate was seen.
  const until = setInterval(() => {
    if (landed.answers.includes('duplicate 0') && attempts++ === 0) landed.commit();
  }, 1);
  t.equal(await first, 2, 'its own sequence once committed, never 0');
  clearInterval(until);

  const dropped = leader(1);
  const refused = appendFirst(dropped.js, dropped.jsm, names, 1, entry, 1, 'm1', Date.now(), 1);
  const drop = setInterval(() => {
    if (dropped.answers.includes('duplicate 0')) {
      clearInterval(drop);
      dropped.drop('first realm of n2');
    }
  }, 1);
  await t.rejects(refused, /wrong last sequence/, "refused: another node's entry is there");
  clearInterval(drop);
});
