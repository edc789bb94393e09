/**
 * Personal message flags: POST /messages/flags (a list of messages) and
 * POST /messages/flags/narrow (a range of a narrow). Reference: views/message_flags.py.
 *
 * Flags by narrow: the range is capped at MAX_MESSAGES_PER_UPDATE messages per request (as the
 * reference; clients continue from `first_processed_id` / `last_processed_id`), the range's
 * messages are read here, and the update runs in the realm actor in batches of at most
 * FLAG_UPDATE_BATCH messages, each batch its own transaction (and its own
 * `update_message_flags` event): no request holds the write queue for long.
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import { JsonableError } from '../lib/errors.js';
import { editableFlagBit, MESSAGE_FLAG_BITS } from '../lib/message-flags.js';
import { parseNarrowParam } from '../lib/narrow.js';
import { bool, intList, json, nonNegativeInt, str } from '../lib/params.js';
import {
  fetchRange,
  firstUnreadAnchor,
  messageQuery,
  parseAnchor,
  resolveNarrow,
} from '../queries/message-fetch.js';
import type { RealmRuntime } from '../../actors/registry.js';

/** Most messages one flags-by-narrow request processes (the reference's cap). */
export const MAX_MESSAGES_PER_UPDATE = 5000;
/** Most messages one transaction updates. */
export const FLAG_UPDATE_BATCH = 1000;

function checkOp(op: string): 'add' | 'remove' {
  if (op !== 'add' && op !== 'remove') {
    throw new JsonableError(`Invalid message flag operation: '${op}'`);
  }
  return op;
}

/** Runs the update in batches; returns the total number of changed messages. */
async function updateInBatches(
  realm: RealmRuntime,
  userId: number,
  op: 'add' | 'remove',
  flag: string,
  bit: number,
  ids: readonly number[],
): Promise<{ count: number; ignored: number[] }> {
  let count = 0;
  const ignored = new Set<number>();
  for (let i = 0; i < ids.length || i === 0; i += FLAG_UPDATE_BATCH) {
    const r = await realm.ask('message.flags.update', {
      user_id: userId,
      op,
      flag,
      bit,
      messages: ids.slice(i, i + FLAG_UPDATE_BATCH),
    });
    count += r.count;
    for (const id of r.ignored_because_not_subscribed_channels) ignored.add(id);
  }
  return { count, ignored: [...ignored].sort((a, b) => a - b) };
}

/** POST /api/v1/messages/flags */
export const updateMessageFlags = endpoint({
  method: 'POST',
  path: '/api/v1/messages/flags',
  params: z.object({ messages: intList(), op: str(), flag: str() }),
  handle: async ({ realm, user }, p) => {
    const bit = editableFlagBit(p.flag);
    const op = checkOp(p.op);
    const r = await updateInBatches(realm, user.id, op, p.flag, bit, p.messages);
    const out: Record<string, unknown> = { messages: p.messages };
    if (bit === MESSAGE_FLAG_BITS.read && op === 'remove') {
      out.ignored_because_not_subscribed_channels = r.ignored;
    }
    return out;
  },
});

/** POST /api/v1/messages/flags/narrow */
export const updateMessageFlagsForNarrow = endpoint({
  method: 'POST',
  path: '/api/v1/messages/flags/narrow',
  params: z.object({
    anchor: str(),
    include_anchor: bool().default(true),
    num_before: nonNegativeInt(),
    num_after: nonNegativeInt(),
    narrow: json(z.unknown()),
    op: str(),
    flag: str(),
  }),
  handle: async ({ server, realm, user }, p) => {
    const anchor = parseAnchor(p.anchor, false);
    if (p.num_before > 0 && p.num_after > 0 && !p.include_anchor) {
      throw new JsonableError('The anchor can only be excluded at an end of the range');
    }
    const bit = editableFlagBit(p.flag);
    const op = checkOp(p.op);
    // Clamp so that num_before + num_after ≤ MAX_MESSAGES_PER_UPDATE (as the reference).
    const numBefore = Math.min(
      p.num_before,
      Math.max(MAX_MESSAGES_PER_UPDATE - p.num_after, MAX_MESSAGES_PER_UPDATE / 2),
    );
    const numAfter = Math.min(p.num_after, MAX_MESSAGES_PER_UPDATE - numBefore);
    const narrow = p.narrow === null ? [] : parseNarrowParam(p.narrow);
    const { store } = server;
    const view = realm.view;
    const resolved = resolveNarrow(view, store, user, narrow);
    const q = messageQuery(view, user, resolved);
    const start = anchor ?? firstUnreadAnchor(store, view, user, resolved);
    const range = fetchRange(
      (r) => store.messageSearch.ids(q, r),
      start,
      numBefore,
      numAfter,
      p.include_anchor,
    );
    const ids = range.rows.map((r) => r.id);
    const r = await updateInBatches(realm, user.id, op, p.flag, bit, ids);
    const out: Record<string, unknown> = {
      processed_count: ids.length,
      updated_count: r.count,
      first_processed_id: ids.length > 0 ? ids[0] : null,
      last_processed_id: ids.length > 0 ? ids[ids.length - 1] : null,
      found_oldest: range.found_oldest,
      found_newest: range.found_newest,
    };
    if (bit === MESSAGE_FLAG_BITS.read && op === 'remove') {
      out.ignored_because_not_subscribed_channels = r.ignored;
    }
    return out;
  },
});
