/** SQL for pending e-mail address changes and push device tokens (migration 0007). */
import type { DB } from './db.js';
import type { IdSource, WithId } from './ids.js';

export type EmailChangeRow = {
  id: number;
  realm_id: number;
  user_id: number;
  old_email: string;
  new_email: string;
  confirmation_key: string;
  created_at: number;
  status: number;
};

export const EmailChangeStatus = { PENDING: 0, USED: 1, REVOKED: 2 } as const;

export type PushDeviceRow = {
  id: number;
  user_id: number;
  kind: number;
  token: string;
  ios_app_id: string | null;
  last_updated: number;
};

export function accountStatements(db: DB, ids: IdSource) {
  const insertEmailChange = db.prepare<Omit<EmailChangeRow, 'id' | 'status'> & WithId, void>(
    `INSERT INTO email_change_requests (id, realm_id, user_id, old_email, new_email, confirmation_key, created_at)
     VALUES (@id, @realm_id, @user_id, @old_email, @new_email, @confirmation_key, @created_at)`,
  );
  const revokePendingEmailChanges = db.prepare<[number], void>(
    'UPDATE email_change_requests SET status = 2 WHERE user_id = ? AND status = 0',
  );
  const emailChangeByKey = db.prepare<[string], EmailChangeRow>(
    'SELECT * FROM email_change_requests WHERE confirmation_key = ?',
  );
  const setEmailChangeStatus = db.prepare<[number, number], void>(
    'UPDATE email_change_requests SET status = ? WHERE id = ?',
  );

  const addPushDevice = db.prepare<Omit<PushDeviceRow, 'id'> & WithId, void>(
    `INSERT INTO push_device_tokens (id, user_id, kind, token, ios_app_id, last_updated)
     VALUES (@id, @user_id, @kind, @token, @ios_app_id, @last_updated)
     ON CONFLICT (user_id, kind, token) DO NOTHING`,
  );
  const removePushDevice = db.prepare<[number, number, string], void>(
    'DELETE FROM push_device_tokens WHERE user_id = ? AND kind = ? AND token = ?',
  );
  const pushDevicesOfUser = db.prepare<[number], PushDeviceRow>(
    'SELECT * FROM push_device_tokens WHERE user_id = ? ORDER BY id',
  );

  return {
    insertEmailChange: (r: Omit<EmailChangeRow, 'id' | 'status'>): void =>
      void insertEmailChange.run({ ...r, id: ids.nextId('email_change_requests') }),
    /** Marks the user's pending requests revoked (a newer request replaces them). */
    revokePendingEmailChanges: (userId: number): void => void revokePendingEmailChanges.run(userId),
    emailChangeByKey: (key: string): EmailChangeRow | undefined => emailChangeByKey.get(key),
    setEmailChangeStatus: (id: number, status: number): void =>
      void setEmailChangeStatus.run(status, id),

    /** Adds a device token; false when the user already had it (nothing changes then). */
    addPushDevice: (r: Omit<PushDeviceRow, 'id'>): boolean =>
      addPushDevice.run({ ...r, id: ids.nextId('push_device_tokens') }).changes > 0,
    /** Removes a user's device token; false when they had no such token. */
    removePushDevice: (userId: number, kind: number, token: string): boolean =>
      removePushDevice.run(userId, kind, token).changes > 0,
    pushDevicesOfUser: (userId: number): PushDeviceRow[] => pushDevicesOfUser.all(userId),
  };
}
export type AccountStatements = ReturnType<typeof accountStatements>;
