/**
 * web/state/drafts-sync.ts with a fake /drafts and hand-moved timers: the user's changes go to
 * the server once the typing stops (POST, then PATCH, DELETE when emptied), one request at a
 * time per conversation (a change during one is sent after it); none while the setting is off;
 * the server's drafts (register's, another browser's events) come into the browser's, unless
 * the browser's is newer or being changed; a removal elsewhere removes it here; a failure keeps
 * the draft and the next change tries again; a deletion that fails is tried again by itself
 * (a pause doubled up to a bound, then at the next load) and the draft stays deleted meanwhile,
 * unless the server refused it for good.
 */
import t from 'tap';
import { ApiError, NetworkError } from '../../src/client/api.js';
import { Drafts, type DraftTo, type StorageLike } from '../../web/state/drafts.js';
import {
  DraftSync,
  fromServer,
  REMOVE_RETRY_MAX_MS,
  REMOVE_RETRY_MS,
  SYNC_DELAY_MS,
  toServer,
  type DraftValues,
  type ServerDraft,
} from '../../web/state/drafts-sync.js';
import { FakeTimers } from '../helpers/fake-timers.js';

type Call = [string, number | null, DraftValues | null];

/** A browser's storage, kept over a "reload" (a second setup given the same one). */
function memoryStorage(): StorageLike & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return {
    map,
    getItem: (k) => map.get(k) ?? null,
    setItem: (k, v) => void map.set(k, v),
    removeItem: (k) => void map.delete(k),
  };
}

function setup(
  opts: {
    enabled?: () => boolean;
    mayKeep?: (to: DraftTo) => boolean;
    storage?: StorageLike;
    clock?: FakeTimers;
  } = {},
) {
  const clock = opts.clock ?? new FakeTimers();
  const drafts = new Drafts(opts.storage ?? null, '1@x', clock.now);
  const calls: Call[] = [];
  let nextId = 100;
  /** true: refused with a plain error; an error: that one. */
  let fail: boolean | Error = false;
  /** Requests answered only when released (to change a draft while one is on its way). */
  const held: (() => void)[] = [];
  let hold = false;
  const answer = <T>(v: T): Promise<T> =>
    new Promise((resolve, reject) => {
      const go = () =>
        fail ? reject(fail instanceof Error ? fail : new Error('refused')) : resolve(v);
      if (hold) held.push(go);
      else go();
    });
  const sync = new DraftSync(
    drafts,
    {
      create: (d) => {
        calls.push(['create', null, d]);
        return answer(++nextId);
      },
      edit: (id, d) => {
        calls.push(['edit', id, d]);
        return answer(undefined);
      },
      remove: (id) => {
        calls.push(['remove', id, null]);
        return answer(undefined);
      },
    },
    clock.timers,
    1,
    opts.enabled ?? (() => true),
    opts.mayKeep,
  );
  drafts.onChange = (to) => sync.changed(to);
  return {
    clock,
    drafts,
    sync,
    calls,
    held,
    setFail: (v: boolean | Error) => (fail = v),
    setHold: (v: boolean) => (hold = v),
  };
}

const flush = () => new Promise((r) => setImmediate(r));
const topic: DraftTo = { type: 'stream', streamId: 9, topic: 'plans' };
const dm: DraftTo = { type: 'direct', userIds: [4, 7] };

t.test('the conversion both ways', (t) => {
  t.same(toServer({ to: topic, content: 'hi', updated: 1_700_000_000_999 }), {
    type: 'stream',
    to: [9],
    topic: 'plans',
    content: 'hi',
    timestamp: 1_700_000_000,
  });
  t.same(toServer({ to: dm, content: 'yo', updated: 0 }), {
    type: 'private',
    to: [4, 7],
    topic: '',
    content: 'yo',
    timestamp: 0,
  });
  const d = (x: Partial<ServerDraft>): ServerDraft => ({
    id: 1,
    type: 'stream',
    to: [9],
    topic: 'plans',
    content: 'c',
    timestamp: 0,
    ...x,
  });
  t.same(fromServer(d({}), 1), topic);
  t.same(fromServer(d({ type: 'private', to: [4, 7], topic: '' }), 1), dm);
  t.same(fromServer(d({ type: 'private', to: [] }), 1), { type: 'direct', userIds: [1] }, 'self');
  t.equal(fromServer(d({ type: '', to: [] }), 1), null, 'no conversation: kept out');
  t.end();
});

t.test('changes go once the typing stops: POST, PATCH, DELETE', async (t) => {
  const { clock, drafts, calls } = setup();
  drafts.set(topic, 'h');
  drafts.set(topic, 'he');
  drafts.set(topic, 'hello');
  clock.advance(SYNC_DELAY_MS - 1);
  t.equal(calls.length, 0, 'nothing while typing');
  clock.advance(1);
  await flush();
  t.same(
    calls.map((c) => [c[0], c[2]?.content]),
    [['create', 'hello']],
    'one POST with the last text',
  );
  drafts.set(topic, 'hello there');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  t.same(calls[1], ['edit', 101, toServer(drafts.entry(topic)!)], 'then a PATCH of that one');
  drafts.set(topic, '');
  await flush();
  t.same(calls[2], ['remove', 101, null], 'emptied: deleted at once, no pause');
  drafts.set(dm, 'new');
  drafts.delete(dm);
  clock.advance(SYNC_DELAY_MS);
  await flush();
  t.equal(calls.length, 3, 'made and gone before it was sent: nothing to tell');
  t.end();
});

t.test('one request at a time per conversation', async (t) => {
  const { clock, drafts, calls, held, setHold } = setup();
  setHold(true);
  drafts.set(topic, 'first');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  drafts.set(topic, 'second');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  t.equal(calls.length, 1, 'the second waits for the first');
  setHold(false);
  held.shift()!();
  await flush();
  await flush();
  t.same(
    calls.map((c) => [c[0], c[1], c[2]?.content]),
    [
      ['create', null, 'first'],
      ['edit', 101, 'second'],
    ],
    'then a PATCH of the one created, not a second POST',
  );
  t.end();
});

t.test('a draft sent, scheduled or deleted never comes back', async (t) => {
  const { clock, drafts, sync, calls, held, setHold } = setup();
  /** The server's copy of a draft of the browser's, as its events carry it. */
  const echo = (id: number, to: DraftTo): ServerDraft => ({
    id,
    ...toServer(drafts.entry(to) ?? { to, content: 'gone', updated: clock.now() }),
  });

  // Sent before the pause ends: the pending save is dropped, nothing reaches the server.
  drafts.set(dm, 'See you then');
  clock.advance(SYNC_DELAY_MS - 1);
  drafts.delete(dm);
  clock.advance(SYNC_DELAY_MS);
  await flush();
  t.same(calls, [], 'no POST for a draft gone before its pause ended');

  // Sent while its POST is on its way: the draft it created is deleted once its id is known; the
  // POST's echo (the add event) arriving after all that does not bring it back.
  setHold(true);
  drafts.set(dm, 'See you then');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  const added = echo(101, dm);
  drafts.delete(dm);
  await flush();
  t.same(
    calls.map((c) => c[0]),
    ['create'],
    'the deletion waits for the POST',
  );
  held.shift()!();
  await flush();
  await flush();
  t.same(
    calls.map((c) => [c[0], c[1]]),
    [
      ['create', null],
      ['remove', 101],
    ],
    'then the draft it created is deleted',
  );
  sync.onEvent({ type: 'drafts', op: 'add', drafts: [added] });
  t.equal(drafts.get(dm), '', 'its echo during the DELETE: not back');
  held.shift()!();
  await flush();
  sync.onEvent({ type: 'drafts', op: 'add', drafts: [added] });
  t.equal(drafts.get(dm), '', 'its echo after the DELETE: not back');
  sync.load([added]);
  t.equal(drafts.get(dm), '', 'nor from a snapshot taken before the DELETE');
  sync.onEvent({ type: 'drafts', op: 'remove', draft_id: 101 });
  t.equal(drafts.size, 0);

  // Deleted (or scheduled) while a PATCH is on its way: the PATCH's echo comes after the DELETE.
  setHold(false);
  drafts.set(topic, 'Agenda');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  t.same(calls.at(-1)?.slice(0, 2), ['create', null]);
  setHold(true);
  drafts.set(topic, 'Agenda for Monday');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  const updated = echo(102, topic);
  drafts.set(topic, '');
  held.shift()!();
  await flush();
  await flush();
  t.same(calls.at(-1), ['remove', 102, null], 'deleted after the PATCH');
  held.shift()!();
  await flush();
  sync.onEvent({ type: 'drafts', op: 'update', draft: updated });
  t.equal(drafts.get(topic), '', 'the PATCH’s late echo: not back');

  // Typed again in that conversation: a new draft (POST), not a PATCH of the deleted one.
  setHold(false);
  drafts.set(topic, 'Agenda, again');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  t.same(calls.at(-1)?.slice(0, 2), ['create', null], 'a new one created');
  t.equal(drafts.get(topic), 'Agenda, again');

  // Another browser's drafts still come in.
  sync.onEvent({
    type: 'drafts',
    op: 'add',
    drafts: [{ ...echo(500, dm), content: 'From the laptop', timestamp: 0 }],
  });
  t.equal(drafts.get(dm), 'From the laptop', 'another browser’s draft taken');
  t.end();
});

t.test('a channel the user no longer sees: its draft stays in the browser', async (t) => {
  let sees = true;
  const { clock, drafts, calls } = setup({ mayKeep: (to) => to.type !== 'stream' || sees });
  drafts.set(topic, 'About the plans');
  sees = false; // removed from the channel before the pause ended
  clock.advance(SYNC_DELAY_MS);
  await flush();
  t.same(calls, [], 'not sent (the server would refuse it)');
  t.equal(drafts.get(topic), 'About the plans', 'kept here');
  drafts.set(dm, 'Still here');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  t.same(
    calls.map((c) => c[0]),
    ['create'],
    'a direct message’s draft still goes',
  );
  t.end();
});

t.test('the setting off: nothing sent', async (t) => {
  let on = false;
  const { clock, drafts, calls } = setup({ enabled: () => on });
  drafts.set(topic, 'private thoughts');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  t.equal(calls.length, 0);
  on = true;
  drafts.set(topic, 'shared thoughts');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  t.equal(calls.length, 1, 'on again: sent');
  t.end();
});

t.test('the server’s drafts come in, unless the browser’s is newer or changing', async (t) => {
  const { clock, drafts, sync, calls } = setup();
  const now = Math.floor(clock.now() / 1000);
  drafts.set(dm, 'mine, newer');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  calls.length = 0;
  sync.load([
    { id: 7, type: 'stream', to: [9], topic: 'plans', content: 'from the laptop', timestamp: now },
    { id: 8, type: 'private', to: [4, 7], topic: '', content: 'older', timestamp: now - 60 },
    { id: 9, type: '', to: [], topic: '', content: 'nowhere', timestamp: now },
  ]);
  t.equal(drafts.get(topic), 'from the laptop', 'taken');
  t.equal(drafts.get(dm), 'mine, newer', 'the browser’s newer one kept');
  t.equal(drafts.size, 2, 'none without a conversation');
  t.equal(calls.length, 0, 'taking the server’s sends nothing back');

  clock.advance(5000);
  sync.onEvent({
    type: 'drafts',
    op: 'update',
    draft: {
      id: 7,
      type: 'stream',
      to: [9],
      topic: 'plans',
      content: 'edited there',
      timestamp: Math.floor(clock.now() / 1000),
    },
  });
  t.equal(drafts.get(topic), 'edited there', 'another browser’s edit');
  drafts.set(topic, 'typing here');
  sync.onEvent({
    type: 'drafts',
    op: 'update',
    draft: {
      id: 7,
      type: 'stream',
      to: [9],
      topic: 'plans',
      content: 'stale echo',
      timestamp: Math.floor(clock.now() / 1000) + 1,
    },
  });
  t.equal(drafts.get(topic), 'typing here', 'not over what is being typed');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  t.same(calls.at(-1)?.slice(0, 2), ['edit', 7], 'the server’s id used');

  sync.onEvent({ type: 'drafts', op: 'remove', draft_id: 7 });
  t.equal(drafts.get(topic), '', 'removed elsewhere: removed here');
  sync.onEvent({ type: 'drafts', op: 'remove', draft_id: 12345 });
  t.equal(drafts.size, 1, 'an unknown id changes nothing');
  t.end();
});

t.test('a failure keeps the draft; the next change tries again', async (t) => {
  const { clock, drafts, calls, setFail } = setup();
  setFail(true);
  drafts.set(topic, 'one');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  t.equal(drafts.get(topic), 'one');
  setFail(false);
  drafts.set(topic, 'two');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  t.same(
    calls.map((c) => c[0]),
    ['create', 'create'],
    'created on the next change',
  );
  // The server lost it (deleted elsewhere before the event came): created anew.
  setFail(true);
  drafts.set(topic, 'three');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  setFail(false);
  drafts.set(topic, 'four');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  t.same(
    calls.map((c) => c[0]),
    ['create', 'create', 'edit', 'create'],
  );
  t.end();
});

const busy = () => new ApiError(503, { result: 'error', msg: 'Busy', code: 'BAD_REQUEST' }, null);

t.test('a deletion that fails is tried again, the draft kept deleted meanwhile', async (t) => {
  const { clock, drafts, sync, calls, setFail } = setup();
  drafts.set(topic, 'Agenda');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  t.same(calls.at(-1)?.slice(0, 2), ['create', null]);
  const copy: ServerDraft = { id: 101, ...toServer(drafts.entry(topic)!) };
  const removes = () => calls.filter((c) => c[0] === 'remove').length;

  setFail(busy());
  drafts.delete(topic);
  await flush();
  t.equal(removes(), 1, 'the DELETE, refused (503)');
  t.same(sync.unremoved, [101], 'left to do');
  sync.onEvent({ type: 'drafts', op: 'update', draft: copy });
  sync.load([copy]);
  t.equal(drafts.get(topic), '', 'meanwhile the server’s copy does not bring it back');
  t.equal(removes(), 2, 'a snapshot that still has it: tried again at once');
  await flush();

  // Then after a pause doubled at each failure: 2 s, 4 s, 8 s ...
  clock.advance(REMOVE_RETRY_MS - 1);
  await flush();
  t.equal(removes(), 2, 'not before its pause');
  clock.advance(1);
  await flush();
  t.equal(removes(), 3, 'after 2 s');
  setFail(new NetworkError('offline'));
  clock.advance(2 * REMOVE_RETRY_MS);
  await flush();
  t.equal(removes(), 4, 'after 4 s (no answer at all: tried again too)');
  clock.advance(4 * REMOVE_RETRY_MS);
  await flush();
  t.equal(removes(), 5, 'after 8 s');
  // Bounded: never more than REMOVE_RETRY_MAX_MS apart.
  for (let i = 0; i < 8; i++) {
    clock.advance(REMOVE_RETRY_MAX_MS);
    await flush();
  }
  t.equal(removes(), 13, 'then once a minute at most, each time');
  t.equal(drafts.get(topic), '', 'still deleted here');

  setFail(false);
  clock.advance(REMOVE_RETRY_MAX_MS);
  await flush();
  t.equal(removes(), 14, 'taken');
  t.same(sync.unremoved, [], 'nothing left to do');
  clock.advance(10 * REMOVE_RETRY_MAX_MS);
  await flush();
  t.equal(removes(), 14, 'and not sent again');
  t.equal(clock.pending, 0, 'no timer left');
  t.end();
});

t.test('a deletion refused for good, or taken though its answer was lost, is done', async (t) => {
  const { clock, drafts, sync, calls, setFail } = setup();
  drafts.set(topic, 'one');
  drafts.set(dm, 'two');
  clock.advance(SYNC_DELAY_MS);
  await flush();
  setFail(
    new ApiError(404, { result: 'error', msg: 'Draft does not exist', code: 'NOT_FOUND' }, null),
  );
  drafts.delete(topic);
  await flush();
  t.same(sync.unremoved, [], '404: the server has no such draft, nothing to try again');
  setFail(busy());
  drafts.delete(dm);
  await flush();
  t.same(sync.unremoved, [102], 'a 503: to try again');
  sync.onEvent({ type: 'drafts', op: 'remove', draft_id: 102 });
  t.same(sync.unremoved, [], 'its remove event: taken after all');
  clock.advance(REMOVE_RETRY_MAX_MS);
  await flush();
  t.equal(calls.filter((c) => c[0] === 'remove').length, 2, 'not sent again');
  t.end();
});

t.test(
  'a deletion not taken before the page closed: kept deleted, tried at the next load',
  async (t) => {
    const storage = memoryStorage();
    const clock = new FakeTimers();
    const first = setup({ storage, clock });
    first.drafts.set(dm, 'See you then');
    clock.advance(SYNC_DELAY_MS);
    await flush();
    const copy: ServerDraft = { id: 101, ...toServer(first.drafts.entry(dm)!) };
    first.setFail(new NetworkError('offline'));
    first.drafts.delete(dm);
    await flush();
    first.sync.stop();
    t.equal(clock.pending, 0, 'stopped: no timer left');

    // The next load: the server's snapshot still has the draft.
    const next = setup({ storage, clock });
    t.equal(next.drafts.get(dm), '', 'not in the browser’s drafts');
    next.sync.load([copy]);
    t.equal(next.drafts.get(dm), '', 'nor brought back by the snapshot');
    await flush();
    t.same(next.calls, [['remove', 101, null]], 'the DELETE sent again at once');
    t.same(next.sync.unremoved, [], 'taken');
    t.same(
      [...storage.map.keys()].filter((k) => k.includes('removing')),
      [],
      'nothing kept',
    );

    // Another page left one the server no longer has: its 404 ends it.
    storage.setItem('confab.drafts.1@x.removing', '[77, "x"]');
    const third = setup({ storage, clock });
    t.same(third.sync.unremoved, [77], 'the kept id read back (a bad entry left out)');
    third.setFail(
      new ApiError(404, { result: 'error', msg: 'Draft does not exist', code: 'NOT_FOUND' }, null),
    );
    third.sync.load([]);
    await flush();
    t.same(third.calls, [['remove', 77, null]], 'tried at the registration');
    t.same(third.sync.unremoved, [], 'the server has none: done');
    t.equal(storage.getItem('confab.drafts.1@x.removing'), null, 'nothing kept');

    // Stopped (logged out) while a try is on its way: no timer after it fails.
    const fourth = setup({ storage, clock });
    fourth.drafts.set(topic, 'x');
    clock.advance(SYNC_DELAY_MS);
    await flush();
    fourth.setHold(true);
    fourth.setFail(busy());
    fourth.drafts.delete(topic);
    await flush();
    fourth.sync.stop();
    fourth.held.shift()!();
    await flush();
    t.equal(clock.pending, 0, 'no timer once stopped');
    t.same(fourth.sync.unremoved, [101], 'left for the next registration');
    fourth.setHold(false);
    fourth.setFail(false);
    fourth.sync.load([]);
    await flush();
    t.same(fourth.sync.unremoved, [], 'taken at the next registration');
    t.end();
  },
);
