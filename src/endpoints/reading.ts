/**
 * Reading operations: marking everything, a channel or a topic as read; deleting a topic; read
 * receipts; which messages match a narrow; whether a user is subscribed to a channel; muting
 * users; the legacy topic-muting endpoint. Reference: views/message_flags.py,
 * views/read_receipts.py, views/message_fetch.py (messages_in_narrow_backend),
 * views/streams.py (delete_in_topic), views/users.py (get_subscription_backend),
 * views/muted_users.py, views/user_topics.py (update_muted_topic).
 *
 * Work over many messages runs as a loop of bounded batches in the realm actor (see
 * src/mutations/reading.ts): each batch is its own transaction, so other requests interleave and
 * nothing holds the write queue for long. POST /mark_all_as_read and delete_topic stop starting
 * batches after `batchTimeBudgetMs` and answer `complete: false` (clients repeat the request).
 */
import { z } from 'zod';
import { endpoint } from '../http/endpoint.js';
import type { RealmRuntime } from '../../actors/registry.js';
import { canonicalTopic } from '../lib/channel-rules.js';
import { MAX_TOPIC_LENGTH } from '../lib/limits.js';
import { InvalidChannelIdError, JsonableError, NoSuchUserError } from '../lib/errors.js';
import { escapeHtml } from '../lib/html.js';
import { parseNarrowParam } from '../lib/narrow.js';
import { int, intList, json, oneOf, pathInt, str } from '../lib/params.js';
import { highlightHtml } from '../lib/search.js';
import { messageQuery, resolveNarrow } from '../queries/message-fetch.js';
import { accessMessage } from '../queries/messages.js';
import { readReceipts, userHasMessageInTopic } from '../queries/reading.js';
import type { ReadScope } from '../mutations/reading.js';

/** Marks the scope read batch by batch; false when the time budget ran out first. */
async function markReadUntilDone(
  realm: RealmRuntime,
  userId: number,
  scope: ReadScope,
  budgetMs: number | null,
): Promise<boolean> {
  const start = performance.now();
  for (;;) {
    const r = await realm.ask('message.mark_read', { user_id: userId, scope });
    if (r.done) return true;
    if (budgetMs !== null && performance.now() - start >= budgetMs) return false;
  }
}

/** POST /api/v1/mark_all_as_read */
export const markAllAsRead = endpoint({
  method: 'POST',
  path: '/api/v1/mark_all_as_read',
  params: z.object({}),
  handle: async ({ server, realm, user }) => {
    const complete = await markReadUntilDone(
      realm,
      user.id,
      { kind: 'all' },
      server.config.batchTimeBudgetMs,
    );
    return { complete };
  },
});

/** POST /api/v1/mark_stream_as_read */
export const markStreamAsRead = endpoint({
  method: 'POST',
  path: '/api/v1/mark_stream_as_read',
  params: z.object({ stream_id: int() }),
  handle: async ({ realm, user }, p) => {
    const ch = realm.view.channels.byId(p.stream_id);
    if (!ch || !realm.view.channels.may(user.id, ch, 'content')) throw new InvalidChannelIdError();
    await markReadUntilDone(realm, user.id, { kind: 'channel', stream_id: ch.id }, null);
    return {};
  },
});

/** POST /api/v1/mark_topic_as_read */
export const markTopicAsRead = endpoint({
  method: 'POST',
  path: '/api/v1/mark_topic_as_read',
  params: z.object({ stream_id: int(), topic_name: str() }),
  handle: async ({ server, realm, user }, p) => {
    const ch = realm.view.channels.byId(p.stream_id);
    if (!ch || !realm.view.channels.may(user.id, ch, 'content')) throw new InvalidChannelIdError();
    const topic = canonicalTopic(p.topic_name);
    if (topic !== '' && !userHasMessageInTopic(server.store, user.id, ch.id, topic)) {
      throw new JsonableError(`No such topic '${p.topic_name}'`);
    }
    await markReadUntilDone(realm, user.id, { kind: 'topic', stream_id: ch.id, topic }, null);
    return {};
  },
});

/** POST /api/v1/streams/{stream_id}/delete_topic */
export const deleteTopic = endpoint({
  method: 'POST',
  path: '/api/v1/streams/:stream_id/delete_topic',
  params: z.object({ stream_id: pathInt(), topic_name: str() }),
  handle: async ({ server, realm, user }, p) => {
    const topic = canonicalTopic(p.topic_name);
    const start = performance.now();
    for (;;) {
      const r = await realm.ask('topic.delete', {
        acting_user_id: user.id,
        stream_id: p.stream_id,
        topic,
      });
      if (r.done) return { complete: true };
      if (performance.now() - start >= server.config.batchTimeBudgetMs) return { complete: false };
    }
  },
});

/** GET /api/v1/messages/{message_id}/read_receipts */
export const getReadReceipts = endpoint({
  method: 'GET',
  path: '/api/v1/messages/:message_id/read_receipts',
  params: z.object({ message_id: pathInt() }),
  handle: ({ server, realm, user }, p) => {
    const { store } = server;
    const view = realm.view;
    const { row } = accessMessage(store, view, user.id, p.message_id, false);
    if (!view.settings.enable_read_receipts) {
      throw new JsonableError('Read receipts are disabled in this organization.');
    }
    return { user_ids: readReceipts(store, view, user.id, row) };
  },
});

/**
 * GET /api/v1/messages/matches_narrow — of the given messages the user received, those the
 * narrow matches, with the search highlighting GET /messages would give them.
 */
export const messagesMatchNarrow = endpoint({
  method: 'GET',
  path: '/api/v1/messages/matches_narrow',
  params: z.object({ msg_ids: intList(), narrow: json(z.unknown()) }),
  handle: ({ server, realm, user }, p) => {
    const { store } = server;
    const view = realm.view;
    const narrow = p.narrow === null ? [] : parseNarrowParam(p.narrow);
    const resolved = resolveNarrow(view, store, user, narrow);
    // Only messages the user actually received (as the reference): no history.
    const q = { ...messageQuery(view, user, resolved), includeHistory: false };
    const ids = [...new Set(p.msg_ids)];
    const messages: Record<string, { match_content: string; match_subject: string }> = {};
    if (ids.length === 0) return { messages };
    const search = resolved.search;
    for (const row of store.messageSearch.messages(q, { dir: 'ids', ids })) {
      const subject = escapeHtml(row.topic);
      messages[String(row.id)] = search
        ? {
            match_content: highlightHtml(row.rendered_content, search),
            match_subject: highlightHtml(subject, search),
          }
        : { match_content: row.rendered_content, match_subject: subject };
    }
    return { messages };
  },
});

/** GET /api/v1/users/{user_id}/subscriptions/{stream_id} */
export const getSubscriptionStatus = endpoint({
  method: 'GET',
  path: '/api/v1/users/:user_id/subscriptions/:stream_id',
  params: z.object({ user_id: pathInt(), stream_id: pathInt() }),
  handle: ({ realm, user }, p) => {
    const view = realm.view;
    const target = view.user(p.user_id);
    if (!target || target.is_bot) throw new NoSuchUserError();
    if (!target.is_active) throw new JsonableError('User is deactivated');
    const ch = view.channels.byId(p.stream_id);
    if (!ch || !view.channels.may(user.id, ch, 'metadata')) throw new InvalidChannelIdError();
    return { is_subscribed: view.channels.isSubscribed(target.id, ch.id) };
  },
});

/** POST /api/v1/users/me/muted_users/{muted_user_id} */
export const muteUser = endpoint({
  method: 'POST',
  path: '/api/v1/users/me/muted_users/:muted_user_id',
  params: z.object({ muted_user_id: pathInt() }),
  handle: async ({ realm, user }, p) => {
    const r = await realm.ask('user.mute', { user_id: user.id, muted_user_id: p.muted_user_id });
    // The muted user's remaining unread messages, in further batches.
    if (!r.done) {
      await markReadUntilDone(realm, user.id, { kind: 'sender', sender_id: p.muted_user_id }, null);
    }
    return {};
  },
});

/** DELETE /api/v1/users/me/muted_users/{muted_user_id} */
export const unmuteUser = endpoint({
  method: 'DELETE',
  path: '/api/v1/users/me/muted_users/:muted_user_id',
  params: z.object({ muted_user_id: pathInt() }),
  handle: ({ realm, user }, p) =>
    realm.ask('user.unmute', { user_id: user.id, muted_user_id: p.muted_user_id }),
});

/**
 * PATCH /api/v1/users/me/subscriptions/muted_topics (deprecated): `add` sets the topic's
 * visibility policy to muted, `remove` clears it — POST /user_topics with policy 1 or 0.
 */
export const updateMutedTopic = endpoint({
  method: 'PATCH',
  path: '/api/v1/users/me/subscriptions/muted_topics',
  params: z.object({
    stream_id: int().optional(),
    stream: str().optional(),
    topic: str({ max: MAX_TOPIC_LENGTH }),
    op: oneOf(['add', 'remove']),
  }),
  handle: async ({ realm, user }, p) => {
    if (p.stream_id === undefined && p.stream === undefined) {
      throw new JsonableError("Please supply 'stream'.");
    }
    if (p.stream_id !== undefined && p.stream !== undefined) {
      throw new JsonableError("Please choose one: 'stream' or 'stream_id'.");
    }
    let streamId: number;
    if (p.stream !== undefined) {
      const channels = realm.view.channels;
      const ch = channels.byName(p.stream);
      const usable =
        ch !== undefined &&
        !ch.deactivated &&
        (p.op === 'add'
          ? channels.may(user.id, ch, 'content')
          : channels.may(user.id, ch, 'metadata'));
      if (!usable) throw new JsonableError(`Invalid channel name '${p.stream}'`);
      streamId = ch.id;
    } else {
      streamId = p.stream_id!;
    }
    await realm.ask('user_topic.set', {
      acting_user_id: user.id,
      stream_id: streamId,
      topic: p.topic,
      visibility_policy: p.op === 'add' ? 1 : 0,
    });
    return {};
  },
});
