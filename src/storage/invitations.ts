/** SQL for invitations (e-mail invitations and reusable invitation links). */
import type { DB } from './db.js';
import type { IdSource, WithId } from './ids.js';

export const InvitationStatus = { PENDING: 0, USED: 1, REVOKED: 2 } as const;

export type InvitationRow = {
  id: number;
  realm_id: number;
  /** 1: a reusable invitation link; 0: an e-mail invitation. */
  multiuse: number;
  email: string | null;
  referred_by: number;
  invited_as: number;
  invited_at: number;
  expiry_date: number | null;
  confirmation_key: string;
  status: number;
  include_realm_default_subscriptions: number;
  notify_referrer_on_join: number;
  welcome_message_custom_text: string | null;
  /** JSON array of channel ids. */
  stream_ids: string;
  /** JSON array of user group ids. */
  group_ids: string;
  created_user_id: number | null;
};

export type NewInvitation = Omit<InvitationRow, 'id' | 'status' | 'created_user_id'>;

const COLUMNS = [
  'realm_id',
  'multiuse',
  'email',
  'referred_by',
  'invited_as',
  'invited_at',
  'expiry_date',
  'confirmation_key',
  'include_realm_default_subscriptions',
  'notify_referrer_on_join',
  'welcome_message_custom_text',
  'stream_ids',
  'group_ids',
] as const;

export function invitationStatements(db: DB, ids: IdSource) {
  const insert = db.prepare<[NewInvitation & WithId], void>(
    `INSERT INTO invitations (id, ${COLUMNS.join(', ')}) VALUES (@id, ${COLUMNS.map((c) => '@' + c).join(', ')})`,
  );
  const byId = db.prepare<[number, number], InvitationRow>(
    'SELECT * FROM invitations WHERE realm_id = ? AND id = ?',
  );
  const byKey = db.prepare<[string], InvitationRow>(
    'SELECT * FROM invitations WHERE confirmation_key = ?',
  );
  // Pending and not expired at `now`, oldest first; e-mail invitations, then reusable links.
  const validByRealm = db.prepare<[number, number], InvitationRow>(
    `SELECT * FROM invitations WHERE realm_id = ? AND status = 0
       AND (expiry_date IS NULL OR expiry_date >= ?) ORDER BY multiuse, id`,
  );
  const validByReferrer = db.prepare<[number, number], InvitationRow>(
    `SELECT * FROM invitations WHERE referred_by = ? AND status = 0
       AND (expiry_date IS NULL OR expiry_date >= ?) ORDER BY multiuse, id`,
  );
  const pendingEmailFor = db.prepare<[number, string], InvitationRow>(
    `SELECT * FROM invitations WHERE realm_id = ? AND email = ? COLLATE NOCASE AND status = 0`,
  );
  const setStatus = db.prepare<[number, number], void>(
    'UPDATE invitations SET status = ? WHERE id = ?',
  );
  const markUsed = db.prepare<[number, number], void>(
    'UPDATE invitations SET status = 1, created_user_id = ? WHERE id = ?',
  );
  const expire = db.prepare<[number, number], void>(
    'UPDATE invitations SET expiry_date = ? WHERE id = ?',
  );
  const remove = db.prepare<[number], void>('DELETE FROM invitations WHERE id = ?');
  const setInvitedAt = db.prepare<[number, number], void>(
    'UPDATE invitations SET invited_at = ? WHERE id = ?',
  );
  return {
    insert: (inv: NewInvitation): number =>
      Number(insert.run({ ...inv, id: ids.nextId('invitations') }).lastInsertRowid),
    byId: (realmId: number, id: number): InvitationRow | undefined => byId.get(realmId, id),
    byKey: (key: string): InvitationRow | undefined => byKey.get(key),
    /** Pending invitations of a realm that have not expired at `now`. */
    validByRealm: (realmId: number, now: number): InvitationRow[] => validByRealm.all(realmId, now),
    /** Pending invitations a user created that have not expired at `now`. */
    validByReferrer: (userId: number, now: number): InvitationRow[] =>
      validByReferrer.all(userId, now),
    /** Pending e-mail invitations to an address (case-insensitive), expired ones included. */
    pendingEmailFor: (realmId: number, email: string): InvitationRow[] =>
      pendingEmailFor.all(realmId, email),
    setStatus: (id: number, status: number): void => void setStatus.run(status, id),
    markUsed: (id: number, userId: number): void => void markUsed.run(userId, id),
    expire: (id: number, at: number): void => void expire.run(at, id),
    remove: (id: number): void => void remove.run(id),
    setInvitedAt: (id: number, at: number): void => void setInvitedAt.run(at, id),
  };
}
export type InvitationStatements = ReturnType<typeof invitationStatements>;
