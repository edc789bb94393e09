/**
 * SQL for what the channel area reads from messages (topic lists, a channel's first message and
 * recent activity) and for users' per-topic preferences (`user_topics`).
 */
import type { DB } from './db.js';

export type TopicMaxRow = { topic: string; max_id: number };

export type UserTopicRow = {
  user_id: number;
  stream_id: number;
  topic: string;
  visibility_policy: number;
  last_updated: number;
};

/**
 * Each channel's first message id and newest message's date (register lists every channel with
 * both, so a realm of thousands of channels would ask SQLite thousands of times per register).
 * Filled only outside a transaction, so it holds only committed facts; a channel's entry is
 * forgotten when a message is sent to it, and all are forgotten on moves, deletions, log replay
 * and realm import.
 */
export class ChannelActivity {
  private readonly byChannel = new Map<number, ActivityRow>();
  /** Channels seen with a committed message: one more message leaves their first one as it is. */
  private readonly hasMessages = new Set<number>();
  /**
   * Bumped whenever a channel's first message id may change (a message to a channel not known to
   * have one, a move, a deletion, replay, import): lists built from many channels' first ids
   * (the register's shared channel list) compare it instead of asking each channel again.
   */
  firstVersion = 0;
  constructor(private readonly capacity = 100_000) {}
  get(db: DB, channelId: number, load: () => ActivityRow): ActivityRow {
    const cached = this.byChannel.get(channelId);
    if (cached) return cached;
    const row = load();
    if (!db.inTransaction) {
      if (this.byChannel.size >= this.capacity) this.byChannel.clear();
      this.byChannel.set(channelId, row);
      if (this.hasMessages.size >= this.capacity) this.hasMessages.clear();
      if (row.first !== null) this.hasMessages.add(channelId);
    }
    return row;
  }
  forget(channelId: number | null): void {
    if (channelId === null) return;
    this.byChannel.delete(channelId);
    if (!this.hasMessages.has(channelId)) this.firstVersion++;
  }
  forgetAll(): void {
    this.byChannel.clear();
    this.hasMessages.clear();
    this.firstVersion++;
  }
}

type ActivityRow = { first: number | null; last: number | null };

export function topicStatements(db: DB, activityCache: ChannelActivity) {
  // Grouped by exact topic; callers merge case variants (the newest spelling wins).
  const historyAll = db.prepare<[number], TopicMaxRow>(
    `SELECT topic, MAX(id) AS max_id FROM messages WHERE stream_id = ?
     GROUP BY topic ORDER BY max_id DESC`,
  );
  const historyReceived = db.prepare<[number, number], TopicMaxRow>(
    `SELECT m.topic AS topic, MAX(m.id) AS max_id
     FROM user_messages um JOIN messages m ON m.id = um.message_id
     WHERE um.user_id = ? AND m.stream_id = ?
     GROUP BY m.topic ORDER BY max_id DESC`,
  );
  const activity = db.prepare<[number, number], ActivityRow>(
    `SELECT (SELECT MIN(id) FROM messages WHERE stream_id = ?) AS first,
            (SELECT date_sent FROM messages WHERE stream_id = ? ORDER BY id DESC LIMIT 1) AS last`,
  );
  const hasNamedTopic = db
    .prepare<[number], number>(
      `SELECT EXISTS (SELECT 1 FROM messages WHERE stream_id = ? AND topic <> '')`,
    )
    .pluck();

  const userTopicsOfUser = db.prepare<[number], UserTopicRow>(
    'SELECT * FROM user_topics WHERE user_id = ? ORDER BY stream_id, topic',
  );
  const userTopic = db.prepare<[number, number, string], UserTopicRow>(
    'SELECT * FROM user_topics WHERE user_id = ? AND stream_id = ? AND topic = ?',
  );
  const upsertUserTopic = db.prepare<UserTopicRow, void>(
    `INSERT INTO user_topics (user_id, stream_id, topic, visibility_policy, last_updated)
     VALUES (@user_id, @stream_id, @topic, @visibility_policy, @last_updated)
     ON CONFLICT (user_id, stream_id, topic) DO UPDATE SET
       topic = excluded.topic, visibility_policy = excluded.visibility_policy,
       last_updated = excluded.last_updated`,
  );
  const deleteUserTopic = db.prepare<[number, number, string], void>(
    'DELETE FROM user_topics WHERE user_id = ? AND stream_id = ? AND topic = ?',
  );

  return {
    /** After a write the channel activity cache cannot follow (replay, import). */
    forgetActivity: (): void => activityCache.forgetAll(),
    /** After a message is added to (or edited in) a channel by other means than insert(). */
    forgetChannelActivity: (channelId: number | null): void => activityCache.forget(channelId),
    /** ChannelActivity.firstVersion: changes whenever a channel's first message id may. */
    firstMessageVersion: (): number => activityCache.firstVersion,
    /** Every topic of a channel with its newest message id, newest first. */
    topicsOfStream: (streamId: number): TopicMaxRow[] => historyAll.all(streamId),
    /** The topics of the messages a user received in a channel (protected history). */
    topicsReceivedByUser: (userId: number, streamId: number): TopicMaxRow[] =>
      historyReceived.all(userId, streamId),
    /** A channel's first message id and the date of its newest message (null: no messages). */
    activity(streamId: number): ActivityRow {
      return activityCache.get(
        db,
        streamId,
        () => activity.get(streamId, streamId) ?? { first: null, last: null },
      );
    },
    hasNamedTopic: (streamId: number): boolean => hasNamedTopic.get(streamId) === 1,

    userTopicsOfUser: (userId: number): UserTopicRow[] => userTopicsOfUser.all(userId),
    userTopic: (userId: number, streamId: number, topic: string): UserTopicRow | undefined =>
      userTopic.get(userId, streamId, topic),
    setUserTopic: (row: UserTopicRow): void => void upsertUserTopic.run(row),
    clearUserTopic: (userId: number, streamId: number, topic: string): void =>
      void deleteUserTopic.run(userId, streamId, topic),
  };
}
export type TopicStatements = ReturnType<typeof topicStatements>;
