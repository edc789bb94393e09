/** SQL for the mail outbox and password reset requests (migration 0021). */
import type { DB } from './db.js';
import type { IdSource, WithId } from './ids.js';

export type OutboxRow = {
  id: number;
  realm_id: number;
  kind: string;
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
  created_at: number;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
};

export type NewOutboxRow = Omit<OutboxRow, 'id' | 'attempts' | 'last_error'>;

/** What the admin tool and /metrics show of a waiting mail (no body). */
export type OutboxEntry = Omit<OutboxRow, 'text_body' | 'html_body'>;

export type PasswordResetRow = {
  id: number;
  realm_id: number;
  user_id: number;
  confirmation_key: string;
  created_at: number;
  status: number;
};

export const PasswordResetStatus = { PENDING: 0, USED: 1, REVOKED: 2 } as const;

export function mailStatements(db: DB, ids: IdSource) {
  const insert = db.prepare<NewOutboxRow & WithId, void>(
    `INSERT INTO mail_outbox (id, realm_id, kind, recipient, subject, text_body, html_body,
       created_at, next_attempt_at)
     VALUES (@id, @realm_id, @kind, @recipient, @subject, @text_body, @html_body, @created_at,
       @next_attempt_at)`,
  );
  const byId = db.prepare<[number], OutboxRow>('SELECT * FROM mail_outbox WHERE id = ?');
  const due = db.prepare<[number, number], OutboxRow>(
    'SELECT * FROM mail_outbox WHERE next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?',
  );
  const nextDue = db
    .prepare<[], number | null>('SELECT MIN(next_attempt_at) FROM mail_outbox')
    .pluck();
  const count = db.prepare<[], number>('SELECT COUNT(*) FROM mail_outbox').pluck();
  const oldest = db.prepare<[], number | null>('SELECT MIN(created_at) FROM mail_outbox').pluck();
  const list = db.prepare<[number], OutboxEntry>(
    `SELECT id, realm_id, kind, recipient, subject, created_at, attempts, next_attempt_at,
       last_error
     FROM mail_outbox ORDER BY id LIMIT ?`,
  );
  const listOfRealm = db.prepare<[number, number], OutboxEntry>(
    `SELECT id, realm_id, kind, recipient, subject, created_at, attempts, next_attempt_at,
       last_error
     FROM mail_outbox WHERE realm_id = ? ORDER BY id LIMIT ?`,
  );
  const countOfRealm = db
    .prepare<[number], number>('SELECT COUNT(*) FROM mail_outbox WHERE realm_id = ?')
    .pluck();
  const setAttempt = db.prepare<[number, number, string, number], void>(
    'UPDATE mail_outbox SET attempts = ?, next_attempt_at = ?, last_error = ? WHERE id = ?',
  );
  const remove = db.prepare<[number], void>('DELETE FROM mail_outbox WHERE id = ?');

  const insertReset = db.prepare<Omit<PasswordResetRow, 'id' | 'status'> & WithId, void>(
    `INSERT INTO password_reset_requests (id, realm_id, user_id, confirmation_key, created_at)
     VALUES (@id, @realm_id, @user_id, @confirmation_key, @created_at)`,
  );
  const resetByKey = db.prepare<[string], PasswordResetRow>(
    'SELECT * FROM password_reset_requests WHERE confirmation_key = ?',
  );
  const revokePendingResets = db.prepare<[number], void>(
    'UPDATE password_reset_requests SET status = 2 WHERE user_id = ? AND status = 0',
  );
  const setResetStatus = db.prepare<[number, number], void>(
    'UPDATE password_reset_requests SET status = ? WHERE id = ?',
  );

  return {
    insert: (row: NewOutboxRow): number =>
      Number(insert.run({ ...row, id: ids.nextId('mail_outbox') }).lastInsertRowid),
    byId: (id: number): OutboxRow | undefined => byId.get(id),
    /** Mail due at `now` (UNIX seconds), soonest first. */
    due: (now: number, limit: number): OutboxRow[] => due.all(now, limit),
    /** When the next mail falls due (UNIX seconds); null when the outbox is empty. */
    nextDue: (): number | null => nextDue.get() ?? null,
    count: (): number => count.get() ?? 0,
    /** When the oldest waiting mail was written (UNIX seconds); null when none waits. */
    oldest: (): number | null => oldest.get() ?? null,
    list: (limit: number): OutboxEntry[] => list.all(limit),
    /** One realm's waiting mail, oldest first (GET /mail/outbox). */
    listOfRealm: (realmId: number, limit: number): OutboxEntry[] => listOfRealm.all(realmId, limit),
    countOfRealm: (realmId: number): number => countOfRealm.get(realmId) ?? 0,
    setAttempt: (id: number, attempts: number, nextAttemptAt: number, error: string): void =>
      void setAttempt.run(attempts, nextAttemptAt, error, id),
    remove: (id: number): boolean => remove.run(id).changes > 0,

    insertPasswordReset: (r: Omit<PasswordResetRow, 'id' | 'status'>): void =>
      void insertReset.run({ ...r, id: ids.nextId('password_reset_requests') }),
    passwordResetByKey: (key: string): PasswordResetRow | undefined => resetByKey.get(key),
    /** Marks the user's pending reset links revoked (a newer one, or a new password, ends them). */
    markPendingPasswordResetsRevoked: (userId: number): void =>
      void revokePendingResets.run(userId),
    setPasswordResetStatus: (id: number, status: number): void =>
      void setResetStatus.run(status, id),
  };
}
export type MailStatements = ReturnType<typeof mailStatements>;
