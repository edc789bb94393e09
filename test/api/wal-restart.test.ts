/**
 * Sends while the background checkpointer empties the WAL (src/storage/checkpointer.ts,
 * "Restarting the WAL"): the real server, several senders at once (so sends are group-committed
 * and the commit hold applies to them), until the thread has held commits and emptied the WAL;
 * then every acknowledged send is in a subscriber's event queue, once, in order, and after a
 * restart on the same data every one is in the channel. Nothing here is timed.
 */
import t from 'tap';
import { poll, register, type Ev } from '../helpers/events.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { CLUSTER_MODE, restartServer, startServer } from '../helpers/server.js';
import { createChannel } from '../helpers/channels.js';
import type { ApiClient } from '../helpers/api.js';

const SENDERS = ['hamlet', 'othello', 'iago', 'desdemona'];

/** The channel's message ids, oldest first (pages of 1,000). */
async function channelIds(api: ApiClient, channel: string): Promise<number[]> {
  const ids: number[] = [];
  for (let anchor: number | string = 0; ;) {
    const r = await api.get('hamlet', 'messages', {
      anchor,
      num_before: 0,
      num_after: 1000,
      include_anchor: false,
      narrow: [{ operator: 'channel', operand: channel }],
    });
    if (r.status !== 200) throw new Error(`fetch failed: ${r.status} ${r.text}`);
    const got = (r.body.messages as { id: number }[]).map((m) => m.id);
    ids.push(...got);
    if (r.body.found_newest === true || got.length === 0) return ids;
    anchor = got[got.length - 1]!;
  }
}

t.test(
  'sends while the WAL is emptied under a commit hold: all delivered once, in order, and kept',
  { skip: CLUSTER_MODE && 'cluster mode: the store checked is n1 only' },
  async (t) => {
    const ts = await startServer(t);
    const { api, server } = ts;
    const channel = 'wal restart';
    await createChannel(api, 'hamlet', channel, {
      principals: JSON.stringify(Object.values(ts.fx.users).map((u) => u.id)),
    });
    const queue = await register(t, api, 'hamlet', { event_types: JSON.stringify(['message']) });

    // The subscriber reads its queue while the sends go on (so it never nears its bounds, however
    // many sends a loaded machine takes to get there), acknowledging what it has read.
    let sending = true;
    const seen: number[] = [];
    const reader = (async () => {
      for (let last = queue.last_event_id; ;) {
        // Read before the poll is asked: an empty answer is final only for a poll asked after the
        // last send was answered (one answered empty just before the last sends, and read after
        // them on a loaded machine, would end the reader with those sends unread).
        const sent = !sending;
        const res = await poll(api, 'hamlet', queue.queue_id, last, true);
        if (res.status !== 200) throw new Error(`GET /events: ${res.status} ${res.text}`);
        const got = res.body.events as Ev[];
        for (const e of got) seen.push((e.message as { id: number }).id);
        if (got.length > 0) last = got[got.length - 1]!.id;
        else if (sent) return;
        else await new Promise((r) => setTimeout(r, 5));
      }
    })();

    // Long messages of distinct words (each fills pages of the message table and the search
    // index), from four senders at once, until the thread has emptied the WAL twice.
    const acked: number[] = [];
    const words = (n: number) =>
      Array.from({ length: 600 }, (_, i) => `w${n.toString(36)}x${i.toString(36)}`).join(' ');
    let n = 0;
    const deadline = Date.now() + 300_000;
    const emptied = () => server.store.checkpointStats.restarts >= 2;
    try {
      await Promise.all(
        SENDERS.map(async (who) => {
          while (!emptied()) {
            if (Date.now() > deadline)
              throw new Error(`never emptied: ${JSON.stringify(server.store.checkpointStats)}`);
            acked.push(await sendChannelMessage(api, who, channel, 'load', words(n++)));
          }
        }),
      );
    } finally {
      // In one process a send's event is in the queues before the send is answered: once the
      // last answer is in, a poll that finds nothing has read them all.
      sending = false;
    }
    await reader;
    const stats = server.store.checkpointStats;
    t.ok(stats.holds >= 2 && stats.restarts >= 2, `the WAL was emptied: ${JSON.stringify(stats)}`);
    t.ok(acked.length > 0, `${acked.length} sends acknowledged`);
    acked.sort((a, b) => a - b);
    t.same(seen, acked, 'every acknowledged send delivered once, in order');

    await server.close();
    const again = await restartServer(t, ts.dataDir, ts.fx);
    t.same(await channelIds(again.api, channel), acked, 'and every one kept after a restart');
  },
);
