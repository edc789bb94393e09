/**
 * A forwarded command is run at most once across a change of owner (src/cluster/forwarding.ts
 * `askOwner`, docs/cluster.md "Faults"), with the owners played by hand over a fake NATS
 * connection (the real `answerForwarded`, each owner with its own ForwardOutcomes, as two nodes
 * have). A "no responders" answer (nobody subscribed to the realm's commands when that send
 * arrived) tells about that send only: an earlier one may have reached the owner that was
 * there, which ran it. On the code before this test, such an answer had the forwarding node send
 * the command afresh until a new owner subscribed, which did not know its id and ran it again.
 */
import t from 'tap';
import type { ClusterLink } from '../../src/cluster/link.js';
import { answerForwarded, Forwarder, ForwardOutcomes } from '../../src/cluster/forwarding.js';

type Msg = { data: Uint8Array; headers?: { code: number } };
type Callback = (err: unknown, msg: Msg & { respond?: (d: Uint8Array) => void }) => void;

/** An owner node: runs what it is sent through answerForwarded, counting runs. */
type Owner = {
  runs: number;
  /** Whether its answers reach the forwarding node (false: lost on a frozen server). */
  heard: boolean;
  outcomes: ForwardOutcomes;
  /** Called as it receives a command (before running it). */
  onReceive?: () => void;
};

function owner(): Owner {
  return { runs: 0, heard: true, outcomes: new ForwardOutcomes() };
}

/**
 * A fake NATS: inboxes by subject, and at most one owner subscribed to the realm's commands at a
 * time (`serving`); a publish with nobody serving is answered "no responders" (an empty message
 * with status 503), as nats-server does.
 */
function fakeNats() {
  const inboxes = new Map<string, Callback>();
  const state: { serving: Owner | null } = { serving: null };
  const deliver = (reply: string, msg: Msg) => setTimeout(() => inboxes.get(reply)?.(null, msg), 2);
  const link = {
    node: 'n2',
    names: { cmd: 'confab.cmd', queues: 'confab.queue' },
    nc: {
      subscribe: (subject: string, o: { callback: Callback }) => {
        inboxes.set(subject, o.callback);
        return { unsubscribe: () => inboxes.delete(subject) };
      },
      publish: (_subject: string, body: Uint8Array, o: { reply: string }) => {
        const to = state.serving;
        if (to === null) {
          deliver(o.reply, { data: new Uint8Array(0), headers: { code: 503 } });
          return;
        }
        setTimeout(() => {
          to.onReceive?.();
          void answerForwarded(
            body,
            async () => {
              to.runs++;
              await new Promise((r) => setTimeout(r, 20));
              return { data: { done: true }, seq: 0 };
            },
            (d) => {
              if (to.heard) deliver(o.reply, { data: d });
            },
            to.outcomes,
          );
        }, 2);
      },
    },
  } as unknown as ClusterLink;
  return { link, state };
}

function forwarder(link: ClusterLink) {
  return new Forwarder({
    link,
    queues: {} as never,
    owns: () => false,
    runHere: () => Promise.reject(new Error('not the owner')),
    position: () => 0,
    waitApplied: () => Promise.resolve(),
  });
}

t.test('no owner for a while (failover): waited for, then run once', async (t) => {
  const { link, state } = fakeNats();
  const b = owner();
  setTimeout(() => (state.serving = b), 300);
  const data = await forwarder(link).forward(1, 'send', {});
  t.same(data, { done: true }, "the new owner's answer");
  t.equal(b.runs, 1, 'run once');
});

t.test(
  'received by an owner that then gave the realm up, its word lost: never run again by the next',
  async (t) => {
    const { link, state } = fakeNats();
    const a = owner();
    const b = owner();
    // The owner's answers are lost (its NATS server froze under its replies), and right after it
    // received the command it no longer serves the realm; the next owner subscribes 300 ms later.
    a.heard = false;
    a.onReceive = () => {
      state.serving = null;
      setTimeout(() => (state.serving = b), 300);
    };
    state.serving = a;
    const outcome = await forwarder(link)
      .forward(1, 'send', {})
      .then(
        (d) => ({ answered: d }),
        (e: { httpStatus?: number }) => ({ status: e.httpStatus }),
      );
    t.equal(a.runs, 1, 'the first owner ran it');
    t.equal(b.runs, 0, 'the next owner did not run it again');
    t.same(outcome, { status: 503 }, 'its outcome unknown here: 503 (Retry-After)');
  },
);

t.test('said received, then no owner when asked again: 503, not run anew', async (t) => {
  const { link, state } = fakeNats();
  const a = owner();
  const b = owner();
  // The owner says it received the command and runs it; its answer is lost. The forwarding node's
  // connection then moves (a repeat is asked), with nobody serving the realm; a new owner comes.
  let received = 0;
  a.onReceive = () => {
    received++;
    setTimeout(() => {
      a.heard = false;
    }, 1);
  };
  state.serving = a;
  const f = forwarder(link);
  const moved = (f as unknown as { moved: Set<() => void> }).moved;
  const p = f.forward(1, 'send', {}).then(
    (d) => ({ answered: d }),
    (e: { httpStatus?: number }) => ({ status: e.httpStatus }),
  );
  await new Promise((r) => setTimeout(r, 100));
  t.equal(received, 1, 'received once');
  state.serving = null;
  setTimeout(() => (state.serving = b), 200);
  for (const k of [...moved]) k();
  const outcome = await p;
  t.equal(a.runs, 1, 'the first owner ran it');
  t.equal(b.runs, 0, 'the next owner did not run it again');
  t.same(outcome, { status: 503 }, 'its outcome unknown here: 503');
});
