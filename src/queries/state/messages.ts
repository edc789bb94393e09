/**
 * Register snapshot fields of the message area: `max_message_id`, `unread_msgs`,
 * `starred_messages`, `recent_private_conversations`, `realm_emoji`. Reference: lib/events.py
 * fetch_initial_state_data.
 */
import type { StateContributor } from '../initial-state.js';
import { realmEmojiDict, realmEmojiRows } from '../realm-emoji.js';
import { dmGroupMembers } from '../messages.js';
import { unreadMsgs } from '../unread.js';

/** Starred message ids the snapshot lists at most. */
const MAX_STARRED = 10_000;
/** Recent conversations come from this many of the user's newest direct messages. */
const RECENT_CONVERSATIONS_LIMIT = 1000;

/** `max_message_id`: the newest message the user received (-1: none). */
export const maxMessageIdState: StateContributor = {
  types: ['message'],
  fill(req, state) {
    state.max_message_id = req.user ? req.store.messages.maxMessageIdFor(req.user.id) : -1;
  },
};

/** `unread_msgs`, when both `message` and `update_message_flags` are wanted. */
export const unreadMsgsState: StateContributor = {
  types: ['message', 'update_message_flags'],
  fill(req, state) {
    const want = req.fetchEventTypes;
    if (want !== null && !(want.has('message') && want.has('update_message_flags'))) return;
    state.unread_msgs = req.user
      ? unreadMsgs(req.store, req.realm, req.user.id, {
          allowEmptyTopicName: req.capabilities.empty_topic_name,
        })
      : { count: 0, pms: [], streams: [], huddles: [], mentions: [], old_unreads_missing: false };
  },
};

export const starredMessagesState: StateContributor = {
  types: ['starred_messages'],
  fill(req, state) {
    state.starred_messages = req.user
      ? req.store.messages.starredIds(req.user.id, MAX_STARRED)
      : [];
  },
};

/** `recent_private_conversations`: newest first; `user_ids` without the user ([] for self). */
export const recentConversationsState: StateContributor = {
  types: ['recent_private_conversations'],
  fill(req, state) {
    const user = req.user;
    state.recent_private_conversations = user
      ? req.store.messages.recentConversations(user.id, RECENT_CONVERSATIONS_LIMIT).map((c) => ({
          max_message_id: c.max_message_id,
          user_ids: dmGroupMembers(req.store, c.dm_group_id).filter((id) => id !== user.id),
        }))
      : [];
  },
};

export const realmEmojiState: StateContributor = {
  types: ['realm_emoji'],
  fill(req, state) {
    state.realm_emoji = realmEmojiDict(realmEmojiRows(req.store, req.realm));
  },
};

export const MESSAGE_STATE_CONTRIBUTORS: readonly StateContributor[] = [
  maxMessageIdState,
  unreadMsgsState,
  starredMessagesState,
  recentConversationsState,
  realmEmojiState,
];
