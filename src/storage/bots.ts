/**
 * SQL for what only bots have (migration 0022): their defaults, services and configuration; and
 * bot storage (migration 0032), which any user may keep but bots use.
 */
import type { DB } from './db.js';
import type { IdSource, WithId } from './ids.js';

export type BotProfileRow = {
  user_id: number;
  default_sending_stream_id: number | null;
  default_events_register_stream_id: number | null;
  default_all_public_streams: number;
};

export type BotServiceRow = {
  id: number;
  user_id: number;
  name: string;
  base_url: string;
  token: string;
  interface: number;
};

export function botStatements(db: DB, ids: IdSource) {
  const profile = db.prepare<[number], BotProfileRow>(
    'SELECT * FROM bot_profiles WHERE user_id = ?',
  );
  const upsertProfile = db.prepare<BotProfileRow, void>(
    `INSERT INTO bot_profiles (user_id, default_sending_stream_id,
       default_events_register_stream_id, default_all_public_streams)
     VALUES (@user_id, @default_sending_stream_id, @default_events_register_stream_id,
       @default_all_public_streams)
     ON CONFLICT (user_id) DO UPDATE SET
       default_sending_stream_id = excluded.default_sending_stream_id,
       default_events_register_stream_id = excluded.default_events_register_stream_id,
       default_all_public_streams = excluded.default_all_public_streams`,
  );
  const services = db.prepare<[number], BotServiceRow>(
    'SELECT * FROM bot_services WHERE user_id = ? ORDER BY id',
  );
  const insertService = db.prepare<Omit<BotServiceRow, 'id'> & WithId, void>(
    `INSERT INTO bot_services (id, user_id, name, base_url, token, interface)
     VALUES (@id, @user_id, @name, @base_url, @token, @interface)`,
  );
  const updateService = db.prepare<[string, number, number], void>(
    'UPDATE bot_services SET base_url = ?, interface = ? WHERE id = ?',
  );
  const config = db.prepare<[number], { key: string; value: string }>(
    'SELECT key, value FROM bot_config WHERE user_id = ? ORDER BY key',
  );
  const putConfig = db.prepare<[number, string, string], void>(
    `INSERT INTO bot_config (user_id, key, value) VALUES (?, ?, ?)
     ON CONFLICT (user_id, key) DO UPDATE SET value = excluded.value`,
  );
  const storageGet = db
    .prepare<[number, string], string>(
      'SELECT value FROM bot_storage WHERE user_id = ? AND key = ?',
    )
    .pluck();
  const storageKeys = db
    .prepare<[number], string>('SELECT key FROM bot_storage WHERE user_id = ? ORDER BY key')
    .pluck();
  // length() counts characters (code points) of TEXT, as the reference's len().
  const storageSize = db
    .prepare<[number], number>(
      'SELECT COALESCE(SUM(length(key) + length(value)), 0) FROM bot_storage WHERE user_id = ?',
    )
    .pluck();
  const storagePut = db.prepare<[number, string, string], void>(
    `INSERT INTO bot_storage (user_id, key, value) VALUES (?, ?, ?)
     ON CONFLICT (user_id, key) DO UPDATE SET value = excluded.value`,
  );
  const storageRemove = db.prepare<[number, string], void>(
    'DELETE FROM bot_storage WHERE user_id = ? AND key = ?',
  );
  return {
    /** The value stored under `key` by the user, if any. */
    storageGet: (userId: number, key: string): string | undefined => storageGet.get(userId, key),
    /** The user's stored keys, sorted. */
    storageKeys: (userId: number): string[] => storageKeys.all(userId),
    /** The characters of all the user's keys and values. */
    storageSize: (userId: number): number => storageSize.get(userId) ?? 0,
    storagePut: (userId: number, key: string, value: string): void =>
      void storagePut.run(userId, key, value),
    storageRemove: (userId: number, key: string): void => void storageRemove.run(userId, key),
    profile: (userId: number): BotProfileRow | undefined => profile.get(userId),
    upsertProfile: (row: BotProfileRow): void => void upsertProfile.run(row),
    services: (userId: number): BotServiceRow[] => services.all(userId),
    insertService: (row: Omit<BotServiceRow, 'id'>): void =>
      void insertService.run({ ...row, id: ids.nextId('bot_services') }),
    updateService: (id: number, baseUrl: string, iface: number): void =>
      void updateService.run(baseUrl, iface, id),
    config: (userId: number): Record<string, string> =>
      Object.fromEntries(config.all(userId).map((r) => [r.key, r.value])),
    putConfig: (userId: number, key: string, value: string): void =>
      void putConfig.run(userId, key, value),
  };
}
export type BotStatements = ReturnType<typeof botStatements>;
