/**
 * The fan-out of one committed event to the queues that take it (called by EventQueues.publish,
 * synchronously after the commit): each event is adapted and serialized once per client variant
 * (./filter.ts, ./wire.ts) and appended to every accepting queue of every user it names. Message
 * events carry per-recipient parts (flags, recipient_id, the sender's local id) in a Tail shared
 * by every queue whose copy differs the same way. This is the hottest path of the server
 * (docs/benchmarks.md `fanout`): no allocation per queue beyond the entry.
 */
import { adaptEvent, messageVariant, VARIANT_MASK } from './filter.js';
import { SharedEvent, Tail } from './wire.js';
import type { OutboundEvent } from '../lib/events.js';
import type { QueueHandle } from './queue.js';

/** Where events go: the queues by user and the all_public_streams ones by realm. */
export type FanoutTargets = {
  readonly byUser: { get(userId: number): readonly QueueHandle[] | undefined };
  readonly allPublic: { get(realmId: number): Iterable<QueueHandle> | undefined };
  /** Called after each append (bounds, consumers to feed). */
  appended(rt: QueueHandle): void;
};

export function deliver(to: FanoutTargets, realmId: number, ev: OutboundEvent): void {
  const event = ev.event;
  const mask = VARIANT_MASK[event.type] ?? 0;
  const variants = new Map<number, SharedEvent[]>();
  const flags = event.type === 'update_message' ? ev.flags : undefined;
  const tails = flags ? new Map<string, Tail>() : null;
  // Indexed loops: `for...of` makes an iterator and a result object per step until V8 optimizes
  // this function, and a realm-wide event may be the first in a while (one per queue per event).
  const users = ev.users;
  for (let u = 0; u < users.length; u++) {
    const userId = users[u]!;
    const list = to.byUser.get(userId);
    if (!list) continue;
    for (let q = 0; q < list.length; q++) {
      const rt = list[q]!;
      if (rt.realmId !== realmId || !rt.filter.accepts(event)) continue;
      const key = rt.filter.bits & mask;
      let shared = variants.get(key);
      if (!shared) {
        shared = adaptEvent(event, key).map((e) => SharedEvent.of(e));
        variants.set(key, shared);
      }
      let tail: Tail | null = null;
      if (flags) {
        const f = flags[userId] ?? [];
        const json = ',"flags":' + JSON.stringify(f);
        tail = tails!.get(json) ?? null;
        if (!tail) tails!.set(json, (tail = new Tail(json, { top: { flags: f } })));
      }
      for (let i = 0; i < shared.length; i++) rt.queue.push(shared[i]!, tail);
      to.appended(rt);
    }
  }
}

export function deliverMessage(to: FanoutTargets, realmId: number, ev: OutboundEvent): void {
  const d = ev.message!;
  const message = ev.event.message as Record<string, unknown>;
  const recipientId = message.recipient_id;
  const variants = new Map<number, { shared: SharedEvent; view: Record<string, unknown> }>();
  const flagsJson = new Map<string, string>();
  const tails = new Map<string, Tail>();
  const reached = new Set<QueueHandle>();
  const mask = VARIANT_MASK.message!;

  const offer = (rt: QueueHandle, userId: number, flags: readonly string[]) => {
    if (reached.has(rt) || rt.realmId !== realmId || !rt.filter.wantsMessages) return;
    const key = rt.filter.bits & mask;
    let v = variants.get(key);
    if (!v) {
      const view = messageVariant(message, key, d.rawContent, d.senderAvatarIsExternal);
      v = { shared: SharedEvent.openMessage(view), view };
      variants.set(key, v);
    }
    if (!rt.filter.narrowAccepts(v.view, flags)) return;
    reached.add(rt);
    const rid = d.recipientIdFor?.[userId] ?? recipientId;
    const fkey = flags.join('\0');
    let fjson = flagsJson.get(fkey);
    if (fjson === undefined) flagsJson.set(fkey, (fjson = JSON.stringify(flags)));
    // The sender's own queue only (checked here, where the queue is: in a cluster the request
    // may have reached another node than the queue's).
    const local =
      d.senderQueueId !== undefined &&
      d.localId !== undefined &&
      rt.id === d.senderQueueId &&
      userId === message.sender_id;
    const tkey = `${String(rid)}\0${fkey}${local ? '\0local' : ''}`;
    let tail = tails.get(tkey);
    if (!tail) {
      let json = ',"recipient_id":' + JSON.stringify(rid) + '},"flags":' + fjson;
      const top: Record<string, unknown> = { flags };
      if (local) {
        json += ',"local_message_id":' + JSON.stringify(d.localId);
        top.local_message_id = d.localId;
      }
      tail = new Tail(json, { message: { recipient_id: rid }, top });
      tails.set(tkey, tail);
    }
    rt.queue.push(v.shared, tail);
    to.appended(rt);
  };

  for (const userId of ev.users) {
    const list = to.byUser.get(userId);
    if (!list) continue;
    const flags = ev.flags?.[userId] ?? [];
    for (const rt of list) offer(rt, userId, flags);
  }
  if (d.publicChannel) {
    for (const rt of to.allPublic.get(realmId) ?? []) offer(rt, rt.userId, []);
  }
}
