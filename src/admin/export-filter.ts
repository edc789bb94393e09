/**
 * Which of a realm's rows an export carries (docs/operations.md "Moving a realm").
 *
 *   full        everything (the admin tool's export-realm)
 *   public      the API's public export (export_type 1): public channels and their messages,
 *               users, groups, settings, custom emoji; no private channels, no direct messages,
 *               no personal data (drafts, saved snippets, alert words, muted users and topics,
 *               scheduled messages, bot storage), and only the uploads that exported messages link
 *   consented   the API's standard export (export_type 2): the public export, plus the private
 *               channels, the private-channel and direct messages sent by users who allow it
 *               (`allow_private_data_export`), and those users' personal data
 *
 * Users' password hashes and API keys, and outgoing-webhook bots' endpoints (their URL and the
 * token sent with each call) (`credentials`) go only into the admin tool's exports, where the
 * operator does not drop them (`export-realm --without-credentials`): a realm moved to another
 * server keeps its logins, its bots' keys and its outgoing webhooks. The API's exports never carry
 * them. Pure: rows in, rows out.
 */
import { cellText, type Row } from '../storage/realm-dump.js';

export type ExportMode = 'full' | 'public' | 'consented';
export type Tables = Record<string, Row[]>;

const PERSONAL_TABLES = [
  'drafts',
  'saved_snippets',
  'alert_words',
  'muted_users',
  'user_topics',
  'scheduled_messages',
  'bot_storage',
] as const;

/** Columns never exported, by table. */
const SECRET_COLUMNS: Record<string, readonly string[]> = {
  users: ['password_hash', 'api_key'],
};

function userConsents(u: Row): boolean {
  try {
    const settings = JSON.parse(cellText(u.settings) || '{}') as Record<string, unknown>;
    return settings.allow_private_data_export === true;
  } catch {
    return false;
  }
}

/** The user ids that allow their private data to be exported. */
export function consentingUsers(users: readonly Row[]): Set<number> {
  return new Set(users.filter(userConsents).map((u) => Number(u.id)));
}

export function filterExport(
  tables: Tables,
  mode: ExportMode,
  opts: { credentials: boolean } = { credentials: false },
): Tables {
  const out: Tables = {};
  for (const [name, rows] of Object.entries(tables)) {
    // An endpoint's URL may hold a secret of its own (user:password@, a key in the query).
    if (name === 'bot_services' && !opts.credentials) {
      out[name] = [];
      continue;
    }
    const secret = opts.credentials ? undefined : SECRET_COLUMNS[name];
    out[name] = secret
      ? rows.map((r) => {
          const copy = { ...r };
          for (const c of secret) copy[c] = null;
          return copy;
        })
      : rows;
  }
  if (mode === 'full') return out;

  const consenting = mode === 'consented' ? consentingUsers(out.users ?? []) : new Set<number>();
  const privateChannels = new Set(
    (out.streams ?? []).filter((s) => s.invite_only === 1).map((s) => Number(s.id)),
  );
  const keepChannel = (id: unknown) => mode === 'consented' || !privateChannels.has(Number(id));

  const keptMessages = new Set<number>();
  out.messages = (out.messages ?? []).filter((m) => {
    const isPublic = m.stream_id !== null && !privateChannels.has(Number(m.stream_id));
    const keep = isPublic || consenting.has(Number(m.sender_id));
    if (keep) keptMessages.add(Number(m.id));
    return keep;
  });
  const keptDmGroups = new Set(
    out.messages.filter((m) => m.dm_group_id !== null).map((m) => Number(m.dm_group_id)),
  );

  out.streams = (out.streams ?? []).filter((s) => keepChannel(s.id));
  // A bot's default channel that the export leaves out is not named either.
  out.bot_profiles = (out.bot_profiles ?? []).map((r) => ({
    ...r,
    default_sending_stream_id: keepChannel(r.default_sending_stream_id)
      ? r.default_sending_stream_id
      : null,
    default_events_register_stream_id: keepChannel(r.default_events_register_stream_id)
      ? r.default_events_register_stream_id
      : null,
  }));
  for (const t of ['subscriptions', 'default_streams'] as const) {
    out[t] = (out[t] ?? []).filter((r) => keepChannel(r.stream_id));
  }
  out.direct_message_groups = (out.direct_message_groups ?? []).filter((g) =>
    keptDmGroups.has(Number(g.id)),
  );
  out.direct_message_group_members = (out.direct_message_group_members ?? []).filter((r) =>
    keptDmGroups.has(Number(r.group_id)),
  );
  for (const t of ['user_messages', 'reactions', 'submessages', 'attachment_messages'] as const) {
    out[t] = (out[t] ?? []).filter((r) => keptMessages.has(Number(r.message_id)));
  }
  const linked = new Set((out.attachment_messages ?? []).map((r) => Number(r.attachment_id)));
  out.attachments = (out.attachments ?? []).filter(
    (a) => linked.has(Number(a.id)) || consenting.has(Number(a.owner_id)),
  );
  const keptPaths = new Set(out.attachments.map((a) => cellText(a.path_id)));
  out.image_attachments = (out.image_attachments ?? []).filter((r) =>
    keptPaths.has(cellText(r.path_id)),
  );
  for (const t of PERSONAL_TABLES) {
    const key = t === 'scheduled_messages' ? 'sender_id' : 'user_id';
    out[t] = (out[t] ?? []).filter(
      (r) => consenting.has(Number(r[key])) && (t !== 'user_topics' || keepChannel(r.stream_id)),
    );
  }
  return out;
}
