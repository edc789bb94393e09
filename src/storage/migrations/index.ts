/**
 * The ordered list of schema migrations. Index i holds the migration that takes the schema from
 * version i to i+1 (`PRAGMA user_version`). Append only: never edit or reorder a shipped entry.
 */
import { m0001_core } from './0001_core.js';
import { m0002_messages } from './0002_messages.js';
import { m0003_channels } from './0003_channels.js';
import { m0004_linkifiers } from './0004_linkifiers.js';
import { m0005_message_features } from './0005_message_features.js';
import { m0006_attachments } from './0006_attachments.js';
import { m0007_accounts } from './0007_accounts.js';
import { m0008_drafts } from './0008_drafts.js';
import { m0009_invitations } from './0009_invitations.js';
import { m0010_alert_words } from './0010_alert_words.js';
import { m0011_scheduled_messages } from './0011_scheduled_messages.js';
import { m0012_presence_status_snippets } from './0012_presence_status_snippets.js';
import { m0013_muted_users } from './0013_muted_users.js';
import { m0014_autoincrement_ids } from './0014_autoincrement_ids.js';
import { m0015_notification_bot } from './0015_notification_bot.js';
import { m0017_realm_exports } from './0017_realm_exports.js';
import { m0018_image_attachments } from './0018_image_attachments.js';
import { m0019_sessions } from './0019_sessions.js';
import { m0021_mail_outbox } from './0021_mail_outbox.js';
import { m0022_bots } from './0022_bots.js';
import { m0029_sent_local_ids } from './0029_sent_local_ids.js';
import { m0023_missed_message_emails } from './0023_missed_message_emails.js';
import { m0024_outgoing_webhook_calls } from './0024_outgoing_webhook_calls.js';
import { m0026_audit_log } from './0026_audit_log.js';
import { m0030_unread_settled } from './0030_unread_settled.js';
import { m0031_submessages } from './0031_submessages.js';
import { m0032_bot_storage } from './0032_bot_storage.js';
import type { DB } from '../db.js';

/**
 * `sql` runs first, then `run` (for changes plain SQL cannot express). `foreignKeysOff`: the
 * migration rebuilds tables others reference; foreign keys are off while it runs and all of them
 * are checked before it commits. A table whose ids clients see declares
 * `id INTEGER PRIMARY KEY AUTOINCREMENT`, so no id is ever handed out twice (0014).
 */
export type Migration = {
  name: string;
  sql: string;
  run?: (db: DB) => void;
  foreignKeysOff?: boolean;
};

export const MIGRATIONS: readonly Migration[] = [
  m0001_core,
  m0002_messages,
  m0003_channels,
  m0004_linkifiers,
  m0005_message_features,
  m0006_attachments,
  m0007_accounts,
  m0008_drafts,
  m0009_invitations,
  m0010_alert_words,
  m0011_scheduled_messages,
  m0012_presence_status_snippets,
  m0013_muted_users,
  m0014_autoincrement_ids,
  m0015_notification_bot,
  m0017_realm_exports,
  m0018_image_attachments,
  m0019_sessions,
  m0021_mail_outbox,
  m0022_bots,
  m0029_sent_local_ids,
  m0023_missed_message_emails,
  m0026_audit_log,
  m0024_outgoing_webhook_calls,
  m0030_unread_settled,
  m0031_submessages,
  m0032_bot_storage,
];
