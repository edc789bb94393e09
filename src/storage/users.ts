/** SQL for users and their custom profile field values. */
import type { DB } from './db.js';
import type { IdSource, WithId } from './ids.js';

export type UserRow = {
  id: number;
  realm_id: number;
  email: string;
  delivery_email: string;
  full_name: string;
  password_hash: string | null;
  api_key: string;
  role: number;
  is_active: number;
  is_bot: number;
  bot_type: number | null;
  bot_owner_id: number | null;
  is_billing_admin: number;
  can_create_users: number;
  date_joined: number;
  timezone: string;
  avatar_source: string;
  avatar_version: number;
  settings: string;
};

export type NewUser = Omit<UserRow, 'id'>;

export type CustomProfileFieldRow = {
  id: number;
  realm_id: number;
  name: string;
  hint: string;
  type: number;
  field_data: string;
  sort_order: number;
  display_in_profile_summary: number;
  required: number;
  editable_by_user: number;
};

export type ProfileValueRow = {
  user_id: number;
  field_id: number;
  value: string;
  rendered_value: string | null;
};

const USER_COLUMNS = [
  'realm_id',
  'email',
  'delivery_email',
  'full_name',
  'password_hash',
  'api_key',
  'role',
  'is_active',
  'is_bot',
  'bot_type',
  'bot_owner_id',
  'is_billing_admin',
  'can_create_users',
  'date_joined',
  'timezone',
  'avatar_source',
  'avatar_version',
  'settings',
] as const;

export function userStatements(db: DB, ids: IdSource) {
  const insert = db.prepare<NewUser & WithId, void>(
    `INSERT INTO users (id, ${USER_COLUMNS.join(', ')}) VALUES (@id, ${USER_COLUMNS.map((c) => '@' + c).join(', ')})`,
  );
  const byId = db.prepare<[number], UserRow>('SELECT * FROM users WHERE id = ?');
  const byRealm = db.prepare<[number], UserRow>(
    'SELECT * FROM users WHERE realm_id = ? ORDER BY id',
  );
  const byDeliveryEmail = db.prepare<[number, string], UserRow>(
    'SELECT * FROM users WHERE realm_id = ? AND delivery_email = ? COLLATE NOCASE',
  );
  const byApiKey = db.prepare<[string], UserRow>('SELECT * FROM users WHERE api_key = ?');
  const setRole = db.prepare<[number, number], void>('UPDATE users SET role = ? WHERE id = ?');
  const setActive = db.prepare<[number, number], void>(
    'UPDATE users SET is_active = ? WHERE id = ?',
  );
  const setApiKey = db.prepare<[string, number], void>('UPDATE users SET api_key = ? WHERE id = ?');
  const setBotOwner = db.prepare<[number | null, number], void>(
    'UPDATE users SET bot_owner_id = ? WHERE id = ?',
  );
  const setPasswordHash = db.prepare<[string | null, number], void>(
    'UPDATE users SET password_hash = ? WHERE id = ?',
  );
  const setFullName = db.prepare<[string, number], void>(
    'UPDATE users SET full_name = ? WHERE id = ?',
  );
  const setSettings = db.prepare<[string, number], void>(
    'UPDATE users SET settings = ? WHERE id = ?',
  );
  const setTimezone = db.prepare<[string, number], void>(
    'UPDATE users SET timezone = ? WHERE id = ?',
  );
  const setCanCreateUsers = db.prepare<[number, number], void>(
    'UPDATE users SET can_create_users = ? WHERE id = ?',
  );
  const setEmail = db.prepare<[string, number], void>('UPDATE users SET email = ? WHERE id = ?');
  const setDeliveryEmail = db.prepare<[string, number], void>(
    'UPDATE users SET delivery_email = ? WHERE id = ?',
  );

  const insertField = db.prepare<Omit<CustomProfileFieldRow, 'id'> & WithId, void>(
    `INSERT INTO custom_profile_fields (id, realm_id, name, hint, type, field_data, sort_order,
       display_in_profile_summary, required, editable_by_user)
     VALUES (@id, @realm_id, @name, @hint, @type, @field_data, @sort_order,
       @display_in_profile_summary, @required, @editable_by_user)`,
  );
  const fieldsByRealm = db.prepare<[number], CustomProfileFieldRow>(
    'SELECT * FROM custom_profile_fields WHERE realm_id = ? ORDER BY sort_order, id',
  );
  const maxFieldOrder = db
    .prepare<[number], number>(
      'SELECT COALESCE(MAX(sort_order), 0) FROM custom_profile_fields WHERE realm_id = ?',
    )
    .pluck();
  const upsertProfileValue = db.prepare<ProfileValueRow, void>(
    `INSERT INTO custom_profile_field_values (user_id, field_id, value, rendered_value)
     VALUES (@user_id, @field_id, @value, @rendered_value)
     ON CONFLICT (user_id, field_id) DO UPDATE SET value = excluded.value, rendered_value = excluded.rendered_value`,
  );
  const fieldById = db.prepare<[number], CustomProfileFieldRow>(
    'SELECT * FROM custom_profile_fields WHERE id = ?',
  );
  const updateField = db.prepare<
    Pick<
      CustomProfileFieldRow,
      | 'id'
      | 'name'
      | 'hint'
      | 'field_data'
      | 'display_in_profile_summary'
      | 'required'
      | 'editable_by_user'
    >,
    void
  >(
    `UPDATE custom_profile_fields SET name = @name, hint = @hint, field_data = @field_data,
       display_in_profile_summary = @display_in_profile_summary, required = @required,
       editable_by_user = @editable_by_user
     WHERE id = @id`,
  );
  const setFieldOrder = db.prepare<[number, number], void>(
    'UPDATE custom_profile_fields SET sort_order = ? WHERE id = ?',
  );
  const deleteFieldValues = db.prepare<[number], void>(
    'DELETE FROM custom_profile_field_values WHERE field_id = ?',
  );
  const deleteField = db.prepare<[number], void>('DELETE FROM custom_profile_fields WHERE id = ?');
  const deleteProfileValue = db.prepare<[number, number], void>(
    'DELETE FROM custom_profile_field_values WHERE user_id = ? AND field_id = ?',
  );
  const deleteFieldValuesEqualTo = db.prepare<[number, string], void>(
    'DELETE FROM custom_profile_field_values WHERE field_id = ? AND value = ?',
  );
  const profileValue = db.prepare<[number, number], ProfileValueRow>(
    'SELECT * FROM custom_profile_field_values WHERE user_id = ? AND field_id = ?',
  );
  const profileValuesByField = db.prepare<[number], ProfileValueRow>(
    'SELECT * FROM custom_profile_field_values WHERE field_id = ? ORDER BY user_id',
  );
  const profileValuesByUser = db.prepare<[number], ProfileValueRow>(
    'SELECT * FROM custom_profile_field_values WHERE user_id = ?',
  );
  const profileValuesByRealm = db.prepare<[number], ProfileValueRow>(
    `SELECT v.* FROM custom_profile_field_values v JOIN users u ON u.id = v.user_id WHERE u.realm_id = ?`,
  );

  return {
    insert: (u: NewUser): number =>
      Number(insert.run({ ...u, id: ids.nextId('users') }).lastInsertRowid),
    byId: (id: number): UserRow | undefined => byId.get(id),
    byRealm: (realmId: number): UserRow[] => byRealm.all(realmId),
    byDeliveryEmail: (realmId: number, email: string): UserRow | undefined =>
      byDeliveryEmail.get(realmId, email),
    byApiKey: (apiKey: string): UserRow | undefined => byApiKey.get(apiKey),
    setRole: (id: number, role: number): void => void setRole.run(role, id),
    setActive: (id: number, active: boolean): void => void setActive.run(active ? 1 : 0, id),
    setApiKey: (id: number, apiKey: string): void => void setApiKey.run(apiKey, id),
    setBotOwner: (id: number, ownerId: number | null): void => void setBotOwner.run(ownerId, id),
    setPasswordHash: (id: number, hash: string | null): void => void setPasswordHash.run(hash, id),
    setFullName: (id: number, name: string): void => void setFullName.run(name, id),
    setSettings: (id: number, json: string): void => void setSettings.run(json, id),
    setTimezone: (id: number, tz: string): void => void setTimezone.run(tz, id),
    setCanCreateUsers: (id: number, v: boolean): void => void setCanCreateUsers.run(v ? 1 : 0, id),
    setEmail: (id: number, email: string): void => void setEmail.run(email, id),
    setDeliveryEmail: (id: number, email: string): void => void setDeliveryEmail.run(email, id),

    insertProfileField: (f: Omit<CustomProfileFieldRow, 'id'>): number =>
      Number(insertField.run({ ...f, id: ids.nextId('custom_profile_fields') }).lastInsertRowid),
    profileFieldsByRealm: (realmId: number): CustomProfileFieldRow[] => fieldsByRealm.all(realmId),
    maxProfileFieldOrder: (realmId: number): number => maxFieldOrder.get(realmId) ?? 0,
    profileFieldById: (id: number): CustomProfileFieldRow | undefined => fieldById.get(id),
    updateProfileField: (f: Parameters<typeof updateField.run>[0]): void => void updateField.run(f),
    setProfileFieldOrder: (id: number, order: number): void => void setFieldOrder.run(order, id),
    /** Deletes a field and every user's value for it. */
    deleteProfileField: (id: number): void => {
      deleteFieldValues.run(id);
      deleteField.run(id);
    },
    upsertProfileValue: (v: ProfileValueRow): void => void upsertProfileValue.run(v),
    profileValue: (userId: number, fieldId: number): ProfileValueRow | undefined =>
      profileValue.get(userId, fieldId),
    /** Deletes one user's value for a field; false when there was none. */
    deleteProfileValue: (userId: number, fieldId: number): boolean =>
      deleteProfileValue.run(userId, fieldId).changes > 0,
    /** Deletes every value of a field equal to `value` (a removed option of a list field). */
    deleteProfileValuesEqualTo: (fieldId: number, value: string): void =>
      void deleteFieldValuesEqualTo.run(fieldId, value),
    profileValuesByUser: (userId: number): ProfileValueRow[] => profileValuesByUser.all(userId),
    profileValuesByField: (fieldId: number): ProfileValueRow[] => profileValuesByField.all(fieldId),
    profileValuesByRealm: (realmId: number): ProfileValueRow[] => profileValuesByRealm.all(realmId),
  };
}
export type UserStatements = ReturnType<typeof userStatements>;
