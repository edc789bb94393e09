/**
 * The storage module's face: everything above `src/storage` talks to a Store, never to SQL text.
 * Each area's statements are prepared once, here, at boot. Moving a deployment to another engine
 * means another implementation of these area objects, not a change to endpoints or actors.
 */
import { alertWordStatements } from './alert-words.js';
import { attachmentStatements } from './attachments.js';
import { accountStatements } from './accounts.js';
import { channelStatements } from './channels.js';
import { closeDatabase, openDatabase, type DB } from './db.js';
import { draftStatements } from './drafts.js';
import { groupStatements } from './groups.js';
import { invitationStatements } from './invitations.js';
import { linkifierStatements } from './linkifiers.js';
import { realmStatements } from './realms.js';
import { topicStatements } from './topics.js';
import { userStatements } from './users.js';

export class Store {
  readonly realms;
  readonly users;
  readonly groups;
  readonly linkifiers;
  readonly channels;
  readonly topics;
  readonly attachments;
  readonly accounts;
  readonly drafts;
  readonly invitations;
  readonly alertWords;
  private readonly runInTransaction: (fn: () => unknown) => unknown;

  constructor(readonly db: DB) {
    this.realms = realmStatements(db);
    this.users = userStatements(db);
    this.groups = groupStatements(db);
    this.linkifiers = linkifierStatements(db);
    this.channels = channelStatements(db);
    this.topics = topicStatements(db);
    this.attachments = attachmentStatements(db);
    this.accounts = accountStatements(db);
    this.drafts = draftStatements(db);
    this.invitations = invitationStatements(db);
    this.alertWords = alertWordStatements(db);
    // One wrapper, created once: better-sqlite3 re-throws after ROLLBACK, so a thrown
    // JsonableError leaves nothing half-written.
    this.runInTransaction = db.transaction((fn: () => unknown) => fn());
  }

  static open(dataDir: string, opts: { verbose?: (sql: unknown) => void } = {}): Store {
    return new Store(openDatabase(dataDir, opts));
  }

  transaction<T>(fn: () => T): T {
    return this.runInTransaction(fn) as T;
  }

  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  close(): void {
    closeDatabase(this.db);
  }
}
