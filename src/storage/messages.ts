/**
 * SQL for messages, who received them (user_messages and their flags), direct conversations
 * (direct_message_groups), the full-text index, and the per-user summaries the register snapshot
 * and GET /users/me show. Narrow queries (GET /messages) are built in ./message-search.ts.
 */
import type { DB } from './db.js';
import type { IdSource } from './ids.js';
import type { ChannelActivity } from './topics.js';
import type { UnreadStatements } from './unread.js';

export type MessageRow = {
  id: number;
  realm_id: number;
  sender_id: number;
  stream_id: number | null;
  dm_group_id: number | null;
  topic: string;
  content: string;
  rendered_content: string;
  date_sent: number;
  last_edit_time: number | null;
  last_moved_time: number | null;
  edit_history: string | null;
  has_attachment: number;
  has_image: number;
  has_link: number;
  sending_client: string;
};

/** A message row with the viewer's flags (null: the viewer has no user_messages row). */
export type FetchedMessageRow = MessageRow & { flags: number | null };

/**
 * What a message listing (GET /messages, src/storage/message-search.ts) reads of a row: what a
 * message object shows, without the columns it does not (the realm, known to the caller, and the
 * `has_*` search columns). Every column read costs a value made for JavaScript, a tenth of a
 * 100-message fetch's time in SQLite's call.
 */
export type ListedMessageRow = ShownMessageRow & { flags: number | null };

/** The columns of a message row that its message object shows (formatMessage). */
export type ShownMessageRow = Omit<
  MessageRow,
  'realm_id' | 'has_attachment' | 'has_image' | 'has_link'
>;

/** `type`: the reference's Message.MessageType (1 normal, 2 resolve notice; default 1). */
export type NewMessage = Omit<
  MessageRow,
  'id' | 'last_edit_time' | 'last_moved_time' | 'edit_history'
> & {
  type?: number;
};

/** The columns every message query returns, in this order (m = messages). */
export const MESSAGE_COLUMNS = `m.id, m.realm_id, m.sender_id, m.stream_id, m.dm_group_id, m.topic,
  m.content, m.rendered_content, m.date_sent, m.last_edit_time, m.last_moved_time, m.edit_history,
  m.has_attachment, m.has_image, m.has_link, m.sending_client`;

export type UnreadRow = {
  message_id: number;
  flags: number;
  sender_id: number;
  stream_id: number | null;
  dm_group_id: number | null;
  topic: string;
};

/** Most direct conversations whose members the store keeps in memory. */
const DM_MEMBERS_CACHE_SIZE = 100_000;

/**
 * Each user's newest received message id, remembered between reads (`GET /users/me` asks for it
 * on every call). An entry is forgotten whenever that user's rows are written, and all are
 * forgotten when rows are deleted by message or replayed from the cluster log, so the next read
 * asks SQLite again: a rolled-back write can leave nothing stale behind, because a forgotten
 * entry is only ever refilled from what the database holds.
 */
export class ReceivedMaxima {
  private readonly byUser = new Map<number, number>();
  constructor(private readonly capacity = 100_000) {}
  get(userId: number, load: () => number): number {
    let max = this.byUser.get(userId);
    if (max === undefined) {
      max = load();
      if (this.byUser.size >= this.capacity) this.byUser.clear();
      this.byUser.set(userId, max);
    }
    return max;
  }
  forget(userId: number): void {
    this.byUser.delete(userId);
  }
  forgetAll(): void {
    this.byUser.clear();
  }
}

export function messageStatements(
  db: DB,
  ids: IdSource,
  maxima: ReceivedMaxima,
  activity: ChannelActivity,
  unreadIndex: UnreadStatements,
) {
  const dmMembers = new Map<number, readonly number[]>();
  const insert = db.prepare<
    [
      number | null,
      number,
      number,
      number | null,
      number | null,
      string,
      string,
      string,
      number,
      number,
      number,
      number,
      string,
      number,
    ],
    void
  >(
    `INSERT INTO messages (id, realm_id, sender_id, stream_id, dm_group_id, topic, content,
       rendered_content, date_sent, has_attachment, has_image, has_link, sending_client, type)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertUserMessage = db.prepare<[number, number, number], void>(
    'INSERT INTO user_messages (user_id, message_id, flags) VALUES (?, ?, ?)',
  );
  // add_new_user_history (src/mutations/new-user-history.ts): one statement. Per channel, only
  // its newest @limit messages are looked at (a range of messages_stream from the id of its
  // @limit-th newest); of those, the messages sent after @since, the newest @limit of all the
  // channels, minus any the user has a row for; the newest @unread of those stay unread.
  const insertHistory = db.prepare<
    [
      {
        user: number;
        channels: string;
        since: number;
        limit: number;
        unread: number;
        unreadFlags: number;
        readFlags: number;
      },
    ],
    void
  >(
    `INSERT INTO user_messages (user_id, message_id, flags)
     SELECT @user, fresh.id,
       CASE WHEN ROW_NUMBER() OVER (ORDER BY fresh.id DESC) <= @unread
         THEN @unreadFlags ELSE @readFlags END
     FROM (
       SELECT recent.id FROM (
         SELECT m.id FROM json_each(@channels) c
         JOIN messages m INDEXED BY messages_stream
           ON m.stream_id = c.value
          AND m.id >= COALESCE(
            (SELECT b.id FROM messages b INDEXED BY messages_stream WHERE b.stream_id = c.value
             ORDER BY b.id DESC LIMIT 1 OFFSET @limit - 1), 0)
         WHERE m.date_sent > @since
         ORDER BY m.id DESC LIMIT @limit
       ) recent
       WHERE NOT EXISTS (
         SELECT 1 FROM user_messages u WHERE u.user_id = @user AND u.message_id = recent.id)
     ) fresh
     ORDER BY fresh.id`,
  );
  const insertSearch = db.prepare<[number, string, string], void>(
    'INSERT INTO messages_fts (rowid, topic, body) VALUES (?, ?, ?)',
  );
  const deleteSearch = db.prepare<[number], void>('DELETE FROM messages_fts WHERE rowid = ?');
  const byId = db.prepare<[number], MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.id = ?`,
  );
  const byIdWithFlags = db.prepare<[number, number], FetchedMessageRow>(
    `SELECT ${MESSAGE_COLUMNS}, um.flags AS flags FROM messages m
     LEFT JOIN user_messages um ON um.user_id = ? AND um.message_id = m.id
     WHERE m.id = ?`,
  );
  const userMessageFlags = db
    .prepare<[number, number], number>(
      'SELECT flags FROM user_messages WHERE user_id = ? AND message_id = ?',
    )
    .pluck();
  const userMessageFlagsIn = db.prepare<[number, string], { message_id: number; flags: number }>(
    `SELECT message_id, flags FROM user_messages
     WHERE user_id = ? AND message_id IN (SELECT value FROM json_each(?))`,
  );
  const messagesIn = db.prepare<[string], MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.id IN (SELECT value FROM json_each(?))
     ORDER BY m.id`,
  );
  const recipientsOf = db
    .prepare<[number], number>('SELECT user_id FROM user_messages WHERE message_id = ?')
    .pluck();
  const setFlag = db.prepare<[number, number, number, string], void>(
    `UPDATE user_messages SET flags = flags | ?
     WHERE user_id = ? AND (flags & ?) = 0 AND message_id IN (SELECT value FROM json_each(?))`,
  );
  const clearFlag = db.prepare<[number, number, number, string], void>(
    `UPDATE user_messages SET flags = flags & ~?
     WHERE user_id = ? AND (flags & ?) <> 0 AND message_id IN (SELECT value FROM json_each(?))`,
  );
  const deleteUserMessages = db.prepare<[number], void>(
    'DELETE FROM user_messages WHERE message_id = ?',
  );
  const deleteReactions = db.prepare<[number], void>('DELETE FROM reactions WHERE message_id = ?');
  const deleteSubmessages = db.prepare<[number], void>(
    'DELETE FROM submessages WHERE message_id = ?',
  );
  const deleteMessage = db.prepare<[number], void>('DELETE FROM messages WHERE id = ?');
  const updateHasAttachment = db.prepare<[number, number], void>(
    'UPDATE messages SET has_attachment = ? WHERE id = ?',
  );

  const groupByKey = db
    .prepare<[number, string], number>(
      'SELECT id FROM direct_message_groups WHERE realm_id = ? AND user_ids = ?',
    )
    .pluck();
  const insertGroup = db.prepare<[number | null, number, string, number], void>(
    'INSERT INTO direct_message_groups (id, realm_id, user_ids, size) VALUES (?, ?, ?, ?)',
  );
  const insertGroupMember = db.prepare<[number, number], void>(
    'INSERT INTO direct_message_group_members (group_id, user_id) VALUES (?, ?)',
  );
  const groupMembers = db
    .prepare<[number], string>('SELECT user_ids FROM direct_message_groups WHERE id = ?')
    .pluck();
  const hasMessagesInGroup = db
    .prepare<[number], number>('SELECT EXISTS (SELECT 1 FROM messages WHERE dm_group_id = ?)')
    .pluck();

  const topicSenders = db
    .prepare<[number, string], number>(
      `SELECT DISTINCT sender_id FROM messages
       WHERE stream_id = ? AND topic = ? COLLATE NOCASE`,
    )
    .pluck();
  const topicReactors = db
    .prepare<[number, string], number>(
      `SELECT DISTINCT r.user_id FROM reactions r JOIN messages m ON m.id = r.message_id
       WHERE m.stream_id = ? AND m.topic = ? COLLATE NOCASE`,
    )
    .pluck();

  const firstInTopic = db
    .prepare<[number, string], number>(
      `SELECT MIN(id) FROM messages WHERE stream_id = ? AND topic = ? COLLATE NOCASE`,
    )
    .pluck();
  const firstInTopicForUser = db
    .prepare<[number, number, string], number>(
      `SELECT MIN(m.id) FROM messages m
       JOIN user_messages um ON um.message_id = m.id AND um.user_id = ?
       WHERE m.stream_id = ? AND m.topic = ? COLLATE NOCASE`,
    )
    .pluck();

  const maxForUser = db
    .prepare<[number], number | null>('SELECT MAX(message_id) FROM user_messages WHERE user_id = ?')
    .pluck();
  // The newest unread rows in two parts (./unread.ts): above the watermark, from user_messages
  // itself; at or below it, from unread_messages. `limit` counts rows before the channel filter:
  // the part above returns its rows of unsubscribed channels too, marked `hidden` (its row count
  // is what it used of `limit`), and `unread` leaves them out.
  const unreadShown = `SELECT um.message_id AS message_id, um.flags AS flags, m.sender_id AS sender_id,
            m.stream_id AS stream_id, m.dm_group_id AS dm_group_id, m.topic AS topic`;
  const unsubscribed = `m.stream_id IS NOT NULL AND EXISTS (
       SELECT 1 FROM subscriptions s WHERE s.user_id = @user AND s.stream_id = m.stream_id AND s.active = 0)`;
  const unreadAbove = db.prepare<
    [{ user: number; watermark: number; limit: number }],
    UnreadRow & { hidden: 0 | 1 }
  >(
    `${unreadShown}, ${unsubscribed} AS hidden
     FROM (SELECT message_id, flags FROM user_messages
           WHERE user_id = @user AND message_id > @watermark AND (flags & 1) = 0
           ORDER BY message_id DESC LIMIT @limit) um
     JOIN messages m ON m.id = um.message_id
     ORDER BY um.message_id`,
  );
  const unreadBelow = db.prepare<[{ user: number; watermark: number; limit: number }], UnreadRow>(
    `${unreadShown}
     FROM (SELECT u.message_id AS message_id, x.flags AS flags FROM unread_messages u
           CROSS JOIN user_messages x ON x.user_id = u.user_id AND x.message_id = u.message_id
           WHERE u.user_id = @user AND u.message_id <= @watermark
           ORDER BY u.message_id DESC LIMIT @limit) um
     JOIN messages m ON m.id = um.message_id
     WHERE m.stream_id IS NULL OR NOT EXISTS (
       SELECT 1 FROM subscriptions s WHERE s.user_id = @user AND s.stream_id = m.stream_id AND s.active = 0)
     ORDER BY um.message_id`,
  );
  const unreadIn = db.prepare<[number, string], UnreadRow>(
    `SELECT um.message_id AS message_id, um.flags AS flags, m.sender_id AS sender_id,
            m.stream_id AS stream_id, m.dm_group_id AS dm_group_id, m.topic AS topic
     FROM user_messages um JOIN messages m ON m.id = um.message_id
     WHERE um.user_id = ? AND um.message_id IN (SELECT value FROM json_each(?))
     ORDER BY um.message_id`,
  );
  const starred = db
    .prepare<[number, number], number>(
      `SELECT message_id FROM user_messages INDEXED BY user_messages_starred
       WHERE user_id = ? AND (flags & 2) <> 0 ORDER BY message_id LIMIT ?`,
    )
    .pluck();
  const recentConversations = db.prepare<
    [number, number],
    { dm_group_id: number; max_message_id: number }
  >(
    `SELECT m.dm_group_id AS dm_group_id, MAX(m.id) AS max_message_id
     FROM (SELECT message_id FROM user_messages INDEXED BY user_messages_private
           WHERE user_id = ? AND (flags & 512) <> 0 ORDER BY message_id DESC LIMIT ?) um
     JOIN messages m ON m.id = um.message_id
     GROUP BY m.dm_group_id ORDER BY max_message_id DESC`,
  );

  return {
    /** Inserts a message; returns its id. */
    insert(m: NewMessage): number {
      activity.forget(m.stream_id);
      const info = insert.run(
        ids.nextId('messages'),
        m.realm_id,
        m.sender_id,
        m.stream_id,
        m.dm_group_id,
        m.topic,
        m.content,
        m.rendered_content,
        m.date_sent,
        m.has_attachment,
        m.has_image,
        m.has_link,
        m.sending_client,
        m.type ?? 1,
      );
      return Number(info.lastInsertRowid);
    },
    /** One user_messages row per recipient; `flags[i]` belongs to `userIds[i]`. */
    insertUserMessages(
      messageId: number,
      userIds: readonly number[],
      flags: readonly number[],
    ): void {
      for (let i = 0; i < userIds.length; i++) {
        maxima.forget(userIds[i]!);
        insertUserMessage.run(userIds[i]!, messageId, flags[i]!);
      }
    },
    insertUserMessage(userId: number, messageId: number, flags: number): void {
      maxima.forget(userId);
      insertUserMessage.run(userId, messageId, flags);
    },
    /**
     * Gives `userId` rows for the newest `limit` messages sent after `since` to `channelIds`
     * (none it has already): the newest `unread` of them with `unreadFlags`, the others with
     * `readFlags`. One INSERT ... SELECT; returns how many rows it wrote.
     */
    insertHistory(h: {
      userId: number;
      channelIds: readonly number[];
      since: number;
      limit: number;
      unread: number;
      unreadFlags: number;
      readFlags: number;
    }): number {
      if (h.channelIds.length === 0 || h.limit <= 0) return 0;
      maxima.forget(h.userId);
      return insertHistory.run({
        user: h.userId,
        channels: JSON.stringify(h.channelIds),
        since: h.since,
        limit: h.limit,
        unread: h.unread,
        unreadFlags: h.unreadFlags,
        readFlags: h.readFlags,
      }).changes;
    },
    /** Adds a message to the full-text index. */
    index: (messageId: number, topic: string, body: string): void =>
      void insertSearch.run(messageId, topic, body),
    byId: (id: number): MessageRow | undefined => byId.get(id),
    /** The message with `userId`'s flags (null when the user has no row for it). */
    byIdWithFlags: (userId: number, id: number): FetchedMessageRow | undefined =>
      byIdWithFlags.get(userId, id),
    /** `userId`'s flags on a message, or undefined without a user_messages row. */
    userFlags: (userId: number, messageId: number): number | undefined =>
      userMessageFlags.get(userId, messageId),
    userFlagsIn: (userId: number, ids: readonly number[]): Map<number, number> =>
      new Map(
        userMessageFlagsIn.all(userId, JSON.stringify(ids)).map((r) => [r.message_id, r.flags]),
      ),
    /** The messages with these ids (those that exist), ascending. */
    byIds: (ids: readonly number[]): MessageRow[] => messagesIn.all(JSON.stringify(ids)),
    /** Everyone with a user_messages row for the message. */
    recipients: (messageId: number): number[] => recipientsOf.all(messageId),
    /** Sets `bit` on the user's rows for `ids` (only rows without it). Returns the row count. */
    setFlag: (userId: number, ids: readonly number[], bit: number): number =>
      setFlag.run(bit, userId, bit, JSON.stringify(ids)).changes,
    clearFlag: (userId: number, ids: readonly number[], bit: number): number =>
      clearFlag.run(bit, userId, bit, JSON.stringify(ids)).changes,
    /** Records whether the message links uploads it was able to claim. */
    setHasAttachment(id: number, has: boolean): void {
      updateHasAttachment.run(has ? 1 : 0, id);
    },
    /**
     * Deletes a message with everything that hangs off it (rows, reactions, submessages, index
     * entry).
     */
    delete(id: number): void {
      maxima.forgetAll();
      activity.forgetAll();
      deleteUserMessages.run(id);
      deleteReactions.run(id);
      deleteSubmessages.run(id);
      deleteSearch.run(id);
      deleteMessage.run(id);
    },

    /** The direct conversation of a set of users (key: sorted ids), if it exists. */
    dmGroupByKey: (realmId: number, key: string): number | undefined =>
      groupByKey.get(realmId, key),
    /** Creates a direct conversation with its members; returns its id. */
    createDmGroup(realmId: number, key: string, members: readonly number[]): number {
      const id = Number(
        insertGroup.run(ids.nextId('direct_message_groups'), realmId, key, members.length)
          .lastInsertRowid,
      );
      for (const u of members) insertGroupMember.run(id, u);
      return id;
    },
    /**
     * The member ids of a direct conversation (ascending). Cached with this store: a
     * conversation's members never change once it exists.
     */
    dmGroupMembers(groupId: number): readonly number[] {
      let members = dmMembers.get(groupId);
      if (members) return members;
      const key = groupMembers.get(groupId);
      members = key === undefined || key === '' ? [] : key.split(',').map(Number);
      if (dmMembers.size >= DM_MEMBERS_CACHE_SIZE) dmMembers.clear();
      if (members.length > 0) dmMembers.set(groupId, members);
      return members;
    },
    dmGroupHasMessages: (groupId: number): boolean => hasMessagesInGroup.get(groupId) === 1,

    /**
     * The first message of a topic (null: none); with `userId`, the first one that user
     * received (for channels whose history is not public to subscribers).
     */
    firstInTopic(streamId: number, topic: string, userId: number | null = null): number | null {
      return (
        (userId === null
          ? firstInTopic.get(streamId, topic)
          : firstInTopicForUser.get(userId, streamId, topic)) ?? null
      );
    },
    /** Who took part in a topic (sent a message in it or reacted to one). */
    topicParticipants(streamId: number, topic: string): Set<number> {
      const out = new Set(topicSenders.all(streamId, topic));
      for (const u of topicReactors.all(streamId, topic)) out.add(u);
      return out;
    },

    /** The newest message the user received, or -1. */
    maxMessageIdFor: (userId: number): number =>
      maxima.get(userId, () => maxForUser.get(userId) ?? -1),
    /** Forgets every remembered newest id (after rows were written behind this store's back). */
    forgetReceivedMaxima: (): void => maxima.forgetAll(),
    /**
     * The user's newest `limit` unread messages, oldest first, leaving out channels the user
     * has unsubscribed from.
     */
    unread(userId: number, limit: number): UnreadRow[] {
      const watermark = unreadIndex.watermark();
      const rows = unreadAbove.all({ user: userId, watermark, limit });
      const above: UnreadRow[] = [];
      for (const r of rows) if (r.hidden === 0) above.push(r);
      const rest = limit - rows.length;
      if (rest <= 0) return above;
      const below = unreadBelow.all({ user: userId, watermark, limit: rest });
      return below.length === 0 ? above : below.concat(above);
    },
    /** Like `unread`, for given messages whatever their flags. */
    unreadDetailsOf: (userId: number, ids: readonly number[]): UnreadRow[] =>
      unreadIn.all(userId, JSON.stringify(ids)),
    starredIds: (userId: number, limit: number): number[] => starred.all(userId, limit),
    /** Direct conversations among the user's newest `limit` direct messages, newest first. */
    recentConversations: (userId: number, limit: number) => recentConversations.all(userId, limit),
  };
}
export type MessageStatements = ReturnType<typeof messageStatements>;
