/** SQL for channels (`streams`), subscriptions, default channels and channel folders. */
import type { DB } from './db.js';
import type { IdSource, WithId } from './ids.js';

export type StreamRow = {
  id: number;
  realm_id: number;
  name: string;
  description: string;
  rendered_description: string;
  date_created: number;
  creator_id: number | null;
  deactivated: number;
  invite_only: number;
  history_public_to_subscribers: number;
  is_web_public: number;
  message_retention_days: number | null;
  topics_policy: string;
  folder_id: number | null;
  can_add_subscribers_group: string;
  can_remove_subscribers_group: string;
  can_administer_channel_group: string;
  can_send_message_group: string;
  can_subscribe_group: string;
  can_delete_any_message_group: string;
  can_delete_own_message_group: string;
};

export type NewStream = Omit<StreamRow, 'id'>;

export type SubscriptionRow = {
  user_id: number;
  stream_id: number;
  active: number;
  color: string;
  is_muted: number;
  pin_to_top: number;
  desktop_notifications: number | null;
  audible_notifications: number | null;
  push_notifications: number | null;
  email_notifications: number | null;
  wildcard_mentions_notify: number | null;
};

/** Columns of `streams` a channel update may change (by name, never from user input). */
export const UPDATABLE_STREAM_COLUMNS = [
  'name',
  'description',
  'rendered_description',
  'deactivated',
  'invite_only',
  'history_public_to_subscribers',
  'is_web_public',
  'message_retention_days',
  'topics_policy',
  'folder_id',
  'can_add_subscribers_group',
  'can_remove_subscribers_group',
  'can_administer_channel_group',
  'can_send_message_group',
  'can_subscribe_group',
  'can_delete_any_message_group',
  'can_delete_own_message_group',
] as const;
export type UpdatableStreamColumn = (typeof UPDATABLE_STREAM_COLUMNS)[number];

/** Personal subscription settings (POST /users/me/subscriptions/properties). */
export const SUBSCRIPTION_PROPERTY_COLUMNS = [
  'color',
  'is_muted',
  'pin_to_top',
  'desktop_notifications',
  'audible_notifications',
  'push_notifications',
  'email_notifications',
  'wildcard_mentions_notify',
] as const;
export type SubscriptionPropertyColumn = (typeof SUBSCRIPTION_PROPERTY_COLUMNS)[number];

export type ChannelFolderRow = {
  id: number;
  realm_id: number;
  name: string;
  description: string;
  rendered_description: string;
  creator_id: number | null;
  date_created: number;
  is_archived: number;
};

const STREAM_COLUMNS = [
  'realm_id',
  'name',
  'description',
  'rendered_description',
  'date_created',
  'creator_id',
  'deactivated',
  'invite_only',
  'history_public_to_subscribers',
  'is_web_public',
  'message_retention_days',
  'topics_policy',
  'folder_id',
  'can_add_subscribers_group',
  'can_remove_subscribers_group',
  'can_administer_channel_group',
  'can_send_message_group',
  'can_subscribe_group',
  'can_delete_any_message_group',
  'can_delete_own_message_group',
] as const;

export function channelStatements(db: DB, ids: IdSource) {
  const insert = db.prepare<NewStream & WithId, void>(
    `INSERT INTO streams (id, ${STREAM_COLUMNS.join(', ')}) VALUES (@id, ${STREAM_COLUMNS.map((c) => '@' + c).join(', ')})`,
  );
  const byId = db.prepare<[number], StreamRow>('SELECT * FROM streams WHERE id = ?');
  const byRealm = db.prepare<[number], StreamRow>(
    'SELECT * FROM streams WHERE realm_id = ? ORDER BY id',
  );
  const updates = new Map(
    UPDATABLE_STREAM_COLUMNS.map((c) => [
      c,
      db.prepare<[unknown, number], void>(`UPDATE streams SET ${c} = ? WHERE id = ?`),
    ]),
  );

  const subsByRealm = db.prepare<[number], SubscriptionRow>(
    `SELECT s.* FROM subscriptions s JOIN streams t ON t.id = s.stream_id WHERE t.realm_id = ?
     ORDER BY s.stream_id, s.user_id`,
  );
  const subsByStream = db.prepare<[number], SubscriptionRow>(
    'SELECT * FROM subscriptions WHERE stream_id = ? ORDER BY user_id',
  );
  const sub = db.prepare<[number, number], SubscriptionRow>(
    'SELECT * FROM subscriptions WHERE user_id = ? AND stream_id = ?',
  );
  const insertSub = db.prepare<[number, number, string], void>(
    'INSERT INTO subscriptions (user_id, stream_id, active, color) VALUES (?, ?, 1, ?)',
  );
  const setSubActive = db.prepare<[number, number, number], void>(
    'UPDATE subscriptions SET active = ? WHERE user_id = ? AND stream_id = ?',
  );
  const subUpdates = new Map(
    SUBSCRIPTION_PROPERTY_COLUMNS.map((c) => [
      c,
      db.prepare<[unknown, number, number], void>(
        `UPDATE subscriptions SET ${c} = ? WHERE user_id = ? AND stream_id = ?`,
      ),
    ]),
  );
  const colorsOfUser = db
    .prepare<[number], string>('SELECT color FROM subscriptions WHERE user_id = ?')
    .pluck();

  const defaultsByRealm = db
    .prepare<[number], number>(
      'SELECT stream_id FROM default_streams WHERE realm_id = ? ORDER BY stream_id',
    )
    .pluck();
  const addDefault = db.prepare<[number, number], void>(
    'INSERT OR IGNORE INTO default_streams (realm_id, stream_id) VALUES (?, ?)',
  );
  const removeDefault = db.prepare<[number, number], void>(
    'DELETE FROM default_streams WHERE realm_id = ? AND stream_id = ?',
  );

  const insertFolder = db.prepare<Omit<ChannelFolderRow, 'id' | 'is_archived'> & WithId, void>(
    `INSERT INTO channel_folders (id, realm_id, name, description, rendered_description, creator_id, date_created)
     VALUES (@id, @realm_id, @name, @description, @rendered_description, @creator_id, @date_created)`,
  );
  const foldersByRealm = db.prepare<[number], ChannelFolderRow>(
    'SELECT * FROM channel_folders WHERE realm_id = ? ORDER BY id',
  );

  const allSubscriberIds = db
    .prepare<[number], number>('SELECT user_id FROM subscriptions WHERE stream_id = ?')
    .pluck();

  return {
    insert: (s: NewStream): number =>
      Number(insert.run({ ...s, id: ids.nextId('streams') }).lastInsertRowid),
    byId: (id: number): StreamRow | undefined => byId.get(id),
    byRealm: (realmId: number): StreamRow[] => byRealm.all(realmId),
    update(id: number, column: UpdatableStreamColumn, value: string | number | null): void {
      updates.get(column)!.run(value, id);
    },

    subscriptionsByRealm: (realmId: number): SubscriptionRow[] => subsByRealm.all(realmId),
    subscriptionsByStream: (streamId: number): SubscriptionRow[] => subsByStream.all(streamId),
    /** Everyone with a subscription row (active or not) for the channel. */
    allSubscriberIds: (streamId: number): number[] => allSubscriberIds.all(streamId),
    subscription: (userId: number, streamId: number): SubscriptionRow | undefined =>
      sub.get(userId, streamId),
    /** Subscribes (a new row, or reactivating an old one that keeps its personal settings). */
    subscribe(userId: number, streamId: number, color: string): void {
      if (sub.get(userId, streamId)) setSubActive.run(1, userId, streamId);
      else insertSub.run(userId, streamId, color);
    },
    unsubscribe: (userId: number, streamId: number): void =>
      void setSubActive.run(0, userId, streamId),
    setSubscriptionProperty(
      userId: number,
      streamId: number,
      column: SubscriptionPropertyColumn,
      value: string | number | null,
    ): void {
      subUpdates.get(column)!.run(value, userId, streamId);
    },
    colorsOfUser: (userId: number): string[] => colorsOfUser.all(userId),

    defaultStreamIds: (realmId: number): number[] => defaultsByRealm.all(realmId),
    addDefaultStream: (realmId: number, streamId: number): void =>
      void addDefault.run(realmId, streamId),
    removeDefaultStream: (realmId: number, streamId: number): void =>
      void removeDefault.run(realmId, streamId),

    insertFolder: (f: Omit<ChannelFolderRow, 'id' | 'is_archived'>): number =>
      Number(insertFolder.run({ ...f, id: ids.nextId('channel_folders') }).lastInsertRowid),
    foldersByRealm: (realmId: number): ChannelFolderRow[] => foldersByRealm.all(realmId),
  };
}
export type ChannelStatements = ReturnType<typeof channelStatements>;
