/**
 * The storage module's face: everything above `src/storage` talks to a Store, never to SQL text.
 * Each area's statements are prepared once, here, at boot. Moving a deployment to another engine
 * means another implementation of these area objects, not a change to endpoints or actors.
 */
import { alertWordStatements } from './alert-words.js';
import { attachmentStatements } from './attachments.js';
import { auditStatements } from './audit.js';
import { imageAttachmentStatements } from './image-attachments.js';
import { accountStatements } from './accounts.js';
import { channelStatements } from './channels.js';
import { Checkpointer, type CheckpointStats } from './checkpointer.js';
import { closeDatabase, openDatabase, type DB, type Durability } from './db.js';
import { draftStatements } from './drafts.js';
import { groupStatements } from './groups.js';
import { RowIds } from './ids.js';
import { invitationStatements } from './invitations.js';
import { linkifierStatements } from './linkifiers.js';
import { mailStatements } from './mail.js';
import { botStatements } from './bots.js';
import { missedMessageStatements } from './missed-messages.js';
import { outgoingWebhookStatements } from './outgoing-webhooks.js';
import { messageEditStatements } from './message-edits.js';
import { messageSearchStatements } from './message-search.js';
import { messageStatements, ReceivedMaxima } from './messages.js';
import { playgroundStatements } from './playgrounds.js';
import { presenceStatements } from './presence.js';
import { realmUserDefaultsStatements } from './realm-user-defaults.js';
import { savedSnippetStatements } from './saved-snippets.js';
import { userStatusStatements } from './user-status.js';
import { mutedUserStatements } from './muted-users.js';
import { reactionStatements } from './reactions.js';
import { submessageStatements } from './submessages.js';
import { readingStatements } from './reading.js';
import { realmEmojiStatements } from './realm-emoji.js';
import { realmExportStatements } from './realm-exports.js';
import { realmStatements } from './realms.js';
import { scheduledMessageStatements } from './scheduled-messages.js';
import { sessionStatements } from './sessions.js';
import { sentLocalIdStatements } from './sent-local-ids.js';
import { ChannelActivity, topicStatements } from './topics.js';
import { userStatements } from './users.js';
import { unreadStatements } from './unread.js';
import { log } from '../observability/log.js';

/**
 * How the server brings the unread index up to date (./unread.ts): it looks every
 * UNREAD_SETTLE_MS (UNREAD_SETTLE_IDLE_MS while none wait) and moves the watermark once
 * UNREAD_SETTLE_MIN_ROWS user_messages rows wait above it (a send to 50 subscribers is 50 rows),
 * or once any have waited UNREAD_SETTLE_MAX_MS;
 * at most UNREAD_SETTLE_ROWS rows a transaction, ~1 µs each on the main thread, so each move
 * delays what waits behind it by about a millisecond at most. The fewer moves, the more messages
 * share each recipient's page of the index: at 500 sends/s to 50 subscribers a move comes every
 * ~20 ms and writes ~85 pages for ~10 messages (the index's entries took a page per recipient in
 * every commit before, ~50 a commit).
 */
export const UNREAD_SETTLE_MS = 10;
/** How often it looks while no row waits above the watermark (an idle server). */
export const UNREAD_SETTLE_IDLE_MS = 100;
export const UNREAD_SETTLE_MIN_ROWS = 500;
export const UNREAD_SETTLE_MAX_MS = 1_000;
export const UNREAD_SETTLE_ROWS = 1_000;
/** A settler that keeps failing logs once, then again at most this often (ms). */
export const UNREAD_SETTLE_LOG_EVERY_MS = 60_000;

/** For /metrics (src/observability/metrics.ts). */
export type UnreadSettleFigures = {
  /** Settler ticks that failed with an error other than a busy database, since start. */
  failures: number;
  /** Message ids between the watermark and the newest message (0: the index is up to date). */
  behind: number;
};

/** SQLITE_BUSY and its extended codes (another connection holds the lock): tried again later. */
function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * The verbs a storage method that writes starts with (`insert`, `setRole`, `removeAll`, ...).
 * Every area names its methods so; reads never start with one of them.
 */
type WriteVerb =
  | 'insert'
  | 'update'
  | 'upsert'
  | 'delete'
  | 'remove'
  | 'set'
  | 'clear'
  | 'add'
  | 'put'
  | 'mark'
  | 'expire'
  | 'move'
  | 'reindex'
  | 'index'
  | 'subscribe'
  | 'unsubscribe'
  | 'link'
  | 'unlink'
  | 'create'
  | 'deactivate';

/** An area's reading methods only. */
export type ReadOnlyArea<T> = {
  readonly [
    K in keyof T as K extends WriteVerb | `${WriteVerb}${Capitalize<string>}` ? never : K
  ]: T[K];
};

/**
 * What endpoints and queries get: every area's reads, no writes and no transactions. Writes go
 * through the realm actor's mutations, which get the whole Store (src/mutations/context.ts).
 */
export type ReadStore = {
  readonly [
    A in Exclude<keyof Store, 'db' | 'ids' | 'transaction' | 'inTransaction' | 'close'>
  ]: ReadOnlyArea<Store[A]>;
};

export class Store {
  /** Where new rows of the id tables get their ids (./ids.ts): SQLite, unless a cluster node says. */
  readonly ids = new RowIds();
  readonly realms;
  readonly users;
  readonly groups;
  readonly linkifiers;
  readonly channels;
  readonly topics;
  readonly attachments;
  readonly imageAttachments;
  readonly accounts;
  readonly drafts;
  readonly invitations;
  readonly alertWords;
  readonly unread;
  readonly messages;
  readonly messageSearch;
  readonly messageEdits;
  readonly reactions;
  readonly submessages;
  readonly realmEmoji;
  readonly scheduledMessages;
  readonly presence;
  readonly userStatus;
  readonly savedSnippets;
  readonly playgrounds;
  readonly realmUserDefaults;
  readonly mutedUsers;
  readonly reading;
  readonly realmExports;
  readonly sessions;
  readonly mail;
  readonly bots;
  readonly sentLocalIds;
  readonly audit;
  readonly missedMessages;
  readonly outgoingWebhookCalls;
  private readonly runInTransaction: (fn: () => unknown) => unknown;
  private readonly pingStatement;
  private checkpointer: Checkpointer | null = null;
  private settleTimer: NodeJS.Timeout | null = null;
  private settlingStopped = false;
  private readonly settleFailures = { total: 0, sinceLog: 0, loggedAt: -Infinity, logged: false };
  /** How often (ms) a settler failing all along logs again (UNREAD_SETTLE_LOG_EVERY_MS; tests shorten it). */
  settleFailureLogEveryMs = UNREAD_SETTLE_LOG_EVERY_MS;
  /** The checkpointer `close` stopped, until its thread has exited (`stopped`). */
  private stopping: Checkpointer | null = null;

  constructor(readonly db: DB) {
    this.realms = realmStatements(db, this.ids);
    this.users = userStatements(db, this.ids);
    this.groups = groupStatements(db, this.ids);
    this.linkifiers = linkifierStatements(db, this.ids);
    this.channels = channelStatements(db, this.ids);
    const channelActivity = new ChannelActivity();
    this.topics = topicStatements(db, channelActivity);
    this.attachments = attachmentStatements(db, this.ids);
    this.imageAttachments = imageAttachmentStatements(db, this.ids);
    this.accounts = accountStatements(db, this.ids);
    this.drafts = draftStatements(db, this.ids);
    this.invitations = invitationStatements(db, this.ids);
    this.alertWords = alertWordStatements(db, this.ids);
    const receivedMaxima = new ReceivedMaxima();
    this.unread = unreadStatements(db);
    this.messages = messageStatements(db, this.ids, receivedMaxima, channelActivity, this.unread);
    this.messageSearch = messageSearchStatements(db, this.unread);
    this.messageEdits = messageEditStatements(db, receivedMaxima, channelActivity);
    this.reactions = reactionStatements(db, this.ids);
    this.submessages = submessageStatements(db, this.ids);
    this.realmEmoji = realmEmojiStatements(db, this.ids);
    this.scheduledMessages = scheduledMessageStatements(db, this.ids);
    this.presence = presenceStatements(db);
    this.userStatus = userStatusStatements(db);
    this.savedSnippets = savedSnippetStatements(db, this.ids);
    this.playgrounds = playgroundStatements(db, this.ids);
    this.realmUserDefaults = realmUserDefaultsStatements(db);
    this.mutedUsers = mutedUserStatements(db);
    this.reading = readingStatements(db, this.unread);
    this.realmExports = realmExportStatements(db, this.ids);
    this.sessions = sessionStatements(db);
    this.mail = mailStatements(db, this.ids);
    this.bots = botStatements(db, this.ids);
    this.sentLocalIds = sentLocalIdStatements(db);
    this.audit = auditStatements(db, this.ids);
    this.missedMessages = missedMessageStatements(db, this.unread);
    this.outgoingWebhookCalls = outgoingWebhookStatements(db);
    // One wrapper, created once: better-sqlite3 re-throws after ROLLBACK, so a thrown
    // JsonableError leaves nothing half-written. BEGIN IMMEDIATE: the write lock from the start.
    // The background checkpointer's thread also commits, now and then, to start the WAL afresh
    // (./checkpoint-thread.ts, startAfresh); a deferred transaction that had read before that
    // commit could then not write (SQLITE_BUSY_SNAPSHOT, with no retry), where an immediate one
    // waits for the lock before reading anything (busy_timeout; a commit of one page).
    const inTransaction = db.transaction((fn: () => unknown) => fn());
    this.runInTransaction = (fn) => inTransaction.immediate(fn);
    this.pingStatement = db.prepare('SELECT 1').pluck();
  }

  /**
   * Opens the database under `dataDir`. `backgroundCheckpoint` (default true): WAL checkpoints
   * run on a thread of their own instead of inside commits (see ./checkpointer.ts).
   */
  static open(
    dataDir: string,
    opts: {
      verbose?: (sql: unknown) => void;
      backgroundCheckpoint?: boolean;
      durability?: Durability;
    } = {},
  ): Store {
    const store = new Store(
      openDatabase(dataDir, {
        ...(opts.verbose ? { verbose: opts.verbose } : {}),
        ...(opts.durability ? { durability: opts.durability } : {}),
      }),
    );
    if (opts.backgroundCheckpoint ?? true) {
      store.checkpointer = new Checkpointer(store.db);
      store.startSettlingUnread();
    }
    return store;
  }

  /**
   * Brings the unread index up to date (./unread.ts) a little at a time, in transactions of its
   * own (UNREAD_SETTLE_*), never while the realm actors hold their commits for the checkpointer.
   * Started by `open`, stopped by `close`.
   */
  private startSettlingUnread(): void {
    const settle = this.db.transaction(() => this.unread.moveWatermark(UNREAD_SETTLE_ROWS));
    let last = performance.now();
    const tick = () => {
      this.settleTimer = null;
      if (!this.db.open || this.settlingStopped) return;
      let next = UNREAD_SETTLE_MS;
      if (!this.db.inTransaction && this.commitHoldMs === 0) {
        try {
          if (!this.unread.waiting(1)) {
            next = UNREAD_SETTLE_IDLE_MS;
            last = performance.now();
          } else if (
            this.unread.waiting(UNREAD_SETTLE_MIN_ROWS) ||
            performance.now() - last >= UNREAD_SETTLE_MAX_MS
          ) {
            if (settle.immediate()) next = 2;
            last = performance.now();
          }
          this.settleFailed(null);
        } catch (err) {
          // The database busy or closing: the next tick tries again. Anything else is logged.
          this.settleFailed(err);
        }
      }
      this.settleTimer = setTimeout(tick, next).unref();
    };
    this.settleTimer = setTimeout(tick, UNREAD_SETTLE_MS).unref();
  }

  /**
   * Notes how a settler's tick ended (`err` null: it did not fail). A busy or closing database is
   * expected and passes in silence. Any other error, repeated, means the watermark is stuck: every
   * unread read then takes the rows above it from user_messages, still right but slower as they
   * grow. Such a failure is logged with its error, then at most one line per
   * UNREAD_SETTLE_LOG_EVERY_MS while they go on (with how many failed since the last line), and a
   * line when a tick succeeds after a logged one; /metrics counts them (`unreadSettleFigures`).
   */
  private settleFailed(err: unknown): void {
    const s = this.settleFailures;
    if (err === null) {
      if (s.logged) {
        log.info({ failures: s.sinceLog }, 'unread index: the watermark moves again');
        s.logged = false;
        s.sinceLog = 0;
      }
      return;
    }
    if (!this.db.open || isBusy(err)) return;
    s.total++;
    s.sinceLog++;
    const now = performance.now();
    if (now - s.loggedAt >= this.settleFailureLogEveryMs) {
      log.error(
        { err, failures: s.sinceLog, behind: this.unreadSettleFigures.behind },
        'unread index: moving the watermark failed (unread reads get slower until it moves)',
      );
      s.loggedAt = now;
      s.sinceLog = 0;
      s.logged = true;
    }
  }

  /** The unread settler's failures (not counting a busy database) and how far it is behind. */
  get unreadSettleFigures(): UnreadSettleFigures {
    let behind = 0;
    try {
      behind = Math.max(0, (this.unread.newest() ?? 0) - this.unread.watermark());
    } catch {
      // closed or busy: reported as caught up
    }
    return { failures: this.settleFailures.total, behind };
  }

  /** Stops moving the unread index's watermark by itself (for tests that place it). */
  stopSettlingUnread(): void {
    if (this.settleTimer !== null) clearTimeout(this.settleTimer);
    this.settleTimer = null;
    this.settlingStopped = true;
  }

  /** The background checkpointer's figures (zeros without one). */
  get checkpointStats(): CheckpointStats {
    return (
      this.checkpointer?.stats ?? {
        runs: 0,
        pages: 0,
        walPages: 0,
        holds: 0,
        restarts: 0,
        afresh: 0,
        heldMs: 0,
        longestHoldMs: 0,
      }
    );
  }

  /**
   * How long (ms) group commits should wait: while the background checkpointer empties the WAL
   * (./checkpointer.ts, "Restarting the WAL"); 0 otherwise.
   */
  get commitHoldMs(): number {
    return this.checkpointer?.commitHoldMs ?? 0;
  }

  /** Whether the database answers a query (GET /health). */
  ping(): boolean {
    try {
      return this.pingStatement.get() === 1;
    } catch {
      return false;
    }
  }

  transaction<T>(fn: () => T): T {
    return this.runInTransaction(fn) as T;
  }

  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  close(): void {
    if (this.settleTimer !== null) clearTimeout(this.settleTimer);
    this.settleTimer = null;
    this.checkpointer?.stop();
    this.stopping = this.checkpointer;
    this.checkpointer = null;
    closeDatabase(this.db);
  }

  /** After `close`: resolves once the background checkpointer's thread has exited (bounded). */
  async stopped(): Promise<void> {
    await this.stopping?.stopped();
  }
}
