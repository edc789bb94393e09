/**
 * A forwarded write's wait for its entry to be applied on the forwarding node
 * (src/cluster/forwarding.ts `Forwarder.forward`; docs/cluster.md "The log and what a node
 * applies"), with the owner played by hand over a fake NATS connection. The owner answers at once;
 * what varies is when this node's copy applies the entry. On the code before the bound, a copy that
 * never reached the entry held the write's answer for ever.
 */
import t from 'tap';
import type { ClusterLink } from '../../src/cluster/link.js';
import { Forwarder } from '../../src/cluster/forwarding.js';
import { pack } from '../../src/lib/pack.js';

type Callback = (err: unknown, msg: { data: Uint8Array; headers?: unknown }) => void;

/** A link whose owner says it received each command, then answers `data` at log position `seq`. */
function ownerAnswering(data: unknown, seq: number): ClusterLink {
  const inboxes = new Map<string, Callback>();
  return {
    node: 'n2',
    names: { cmd: 'confab.cmd', queues: 'confab.queue' },
    nc: {
      subscribe: (subject: string, o: { callback: Callback }) => {
        inboxes.set(subject, o.callback);
        return { unsubscribe: () => inboxes.delete(subject) };
      },
      publish: (_subject: string, _body: Uint8Array, o: { reply: string }) => {
        setTimeout(() => {
          inboxes.get(o.reply)?.(null, { data: pack({ received: true }) });
          inboxes.get(o.reply)?.(null, { data: pack({ ok: true, data, seq }) });
        }, 5);
      },
    },
  } as unknown as ClusterLink;
}

function forwarder(
  link: ClusterLink,
  waitApplied: (seq: number) => Promise<void>,
  ms?: number,
  stuck?: (f: () => void) => () => void,
) {
  return new Forwarder({
    link,
    queues: {} as never,
    owns: () => false,
    runHere: () => Promise.reject(new Error('not the owner')),
    position: () => 0,
    waitApplied,
    ...(ms === undefined ? {} : { appliedWaitMs: ms }),
    ...(stuck === undefined ? {} : { stuck }),
  });
}

/** `p`'s value, or 'hung' when it has not settled within `ms` (a bound on a hang, not a speed). */
function within<T>(p: Promise<T>, ms: number): Promise<T | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<'hung'>((r) => (timer = setTimeout(() => r('hung'), ms))),
  ]).finally(() => clearTimeout(timer));
}

t.test('the answer waits until this node has applied the write', async (t) => {
  const asked: number[] = [];
  let applied = false;
  const f = forwarder(ownerAnswering({ id: 7 }, 12), (seq) => {
    asked.push(seq);
    return new Promise<void>((r) =>
      setTimeout(() => {
        applied = true;
        r();
      }, 100),
    );
  });
  const data = await within(f.forward(1, 'send', {}), 10_000);
  t.same(data, { id: 7 }, "the owner's answer");
  t.same(asked, [12], "waited for the write's log position");
  t.ok(applied, 'answered once applied here (read-your-writes)');
});

t.test(
  'a copy that cannot reach the write: answered after the wait, as the owner answered',
  async (t) => {
    // The local copy never applies it (its log consumer is gone): on the old code, no answer ever.
    const f = forwarder(
      ownerAnswering({ id: 9 }, 40),
      () => new Promise<void>(() => undefined),
      200,
    );
    const data = await within(f.forward(1, 'send', {}), 10_000);
    t.same(data, { id: 9 }, 'the write happened: its answer is given, not held');
  },
);

t.test('a copy seen not catching up: answered then, not after the whole wait', async (t) => {
  // The applier's progress watch calls a stall 100 ms in; the wait itself would last a minute.
  let listening = 0;
  const stuck = (f: () => void) => {
    listening++;
    const timer = setTimeout(f, 100);
    return () => {
      listening--;
      clearTimeout(timer);
    };
  };
  const never = () => new Promise<void>(() => undefined);
  const f = forwarder(ownerAnswering({ id: 4 }, 8), never, 60_000, stuck);
  const data = await within(f.forward(1, 'send', {}), 10_000);
  t.same(data, { id: 4 }, "the owner's answer");
  t.equal(listening, 0, 'no longer listening');
});
