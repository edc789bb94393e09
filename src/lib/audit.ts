/**
 * What the audit log records (docs/operations.md "Audit log"; the reference's RealmAuditLog):
 * every administrative action, by the API or the admin tool, with who did it, what, when and from
 * where. Pure: the realm actor writes the rows of the commands named in AUDITED_COMMANDS in the
 * command's own transaction (actors/realm.machine.ts), and the admin tool those of actions that
 * are not realm commands (src/admin/audit.ts).
 *
 * An action's origin rides in its command's payload (`audit_origin`), put there by whoever asks
 * the realm actor (the HTTP router for an authenticated request, the admin tool): so it crosses
 * to the realm's owner on a cluster with the command itself.
 */

/** Where an administrative action came from. */
export type AuditOrigin =
  /** An authenticated API request: the user, the client's address and its User-Agent. */
  | { via: 'api'; user_id: number; address: string; user_agent: string }
  /** The admin tool (`npm run manage`): the operating-system user who ran it. */
  | { via: 'admin_tool'; os_user: string }
  /** The server itself (the first start, scheduled work). */
  | { via: 'server' };

/** The admin tool's origin. */
export type ToolOrigin = Extract<AuditOrigin, { via: 'admin_tool' }>;

/** One row to write, apart from its realm, time and origin. */
export type AuditEntry = {
  event_type: string;
  acting_user_id: number | null;
  modified_user_id: number | null;
  modified_channel_id: number | null;
  modified_group_id: number | null;
  /** The action's parameters, without secrets (auditExtra). */
  extra: Record<string, unknown>;
};

type Fields = Record<string, unknown>;

/**
 * The event types of entries written elsewhere than by a realm command of AUDITED_COMMANDS: a new
 * realm and a new channel (src/mutations), and the admin tool's own actions (src/admin).
 */
export const OTHER_AUDIT_TYPES = [
  'realm_created',
  'channel_created',
  'backup_taken',
  'data_restored',
  'realm_exported',
  'realm_imported',
  'message_sent_by_tool',
] as const;

/** How a realm command is recorded; absent fields are read from the payload's usual names. */
type AuditRule = {
  type: string;
  /** The user acted on: default the payload's `user_id`, or the result's for a new user. */
  user?: (p: Fields, r: Fields) => unknown;
  /** Only when this holds (a command that is administrative only sometimes). */
  when?: (p: Fields, r: Fields) => boolean;
};

const resultUser = (_p: Fields, r: Fields) => r.user_id;

/**
 * The realm commands (actors/realm.commands.ts) that are administrative actions, and the event
 * type each is recorded as. Commands missing here are a user's own business (messages,
 * reactions, their settings, ...).
 */
export const AUDITED_COMMANDS: Readonly<Record<string, AuditRule>> = {
  'user.create': { type: 'user_created', user: resultUser },
  'invitation.accept': { type: 'user_created', user: resultUser },
  'user.deactivate': { type: 'user_deactivated' },
  'user.deactivate_own': { type: 'user_deactivated' },
  'user.reactivate': { type: 'user_reactivated' },
  'user.update': { type: 'user_changed' },
  'user.password.set': { type: 'user_password_changed' },
  'user.api_key.regenerate': { type: 'user_api_key_changed' },
  // Bots (src/mutations/bots.ts): the reference records them as user events of the bot.
  'bot.create': { type: 'user_created', user: resultUser },
  'bot.update': { type: 'user_changed', user: (p) => p.bot_id },
  'bot.deactivate': { type: 'user_deactivated', user: (p) => p.bot_id },
  'bot.api_key.regenerate': { type: 'user_api_key_changed', user: (p) => p.bot_id },
  'user.email.set': { type: 'user_email_changed' },
  'user.email_change.confirm': { type: 'user_email_changed', user: resultUser },
  'user.sessions.end': { type: 'user_logged_out' },
  'realm.update': { type: 'realm_changed' },
  'realm.update_settings': {
    type: 'realm_changed',
    // The realm's own set-up (the default channels of a new realm) is not an action of anyone.
    when: (p) => p.acting_user_id !== null || p.audit_origin !== undefined,
  },
  'realm.icon.set': { type: 'realm_icon_source_changed' },
  'realm.deactivate': { type: 'realm_deactivated' },
  'realm.deactivate_by_admin': { type: 'realm_deactivated' },
  'realm.reactivate': { type: 'realm_reactivated' },
  'realm.user_settings_defaults.update': { type: 'realm_user_defaults_changed' },
  'channel.update': { type: 'channel_changed' },
  'channel.archive': { type: 'channel_archived' },
  'channel.default': { type: 'channel_default_changed' },
  'channel_folder.create': { type: 'channel_folder_created' },
  'user_group.create': { type: 'user_group_created' },
  'user_group.update': { type: 'user_group_changed' },
  'user_group.members': { type: 'user_group_members_changed' },
  'user_group.deactivate': { type: 'user_group_deactivated' },
  'invite.create': { type: 'invitation_created' },
  'invite.create_multiuse': { type: 'invitation_created' },
  'invite.revoke': { type: 'invitation_revoked' },
  'invite.revoke_multiuse': { type: 'invitation_revoked' },
  'linkifier.add': { type: 'linkifier_added' },
  'linkifier.update': { type: 'linkifier_changed' },
  'linkifier.remove': { type: 'linkifier_removed' },
  'linkifier.reorder': { type: 'linkifiers_reordered' },
  'realm_emoji.add': { type: 'realm_emoji_added', user: () => null },
  'realm_emoji.remove': { type: 'realm_emoji_removed', user: () => null },
  'playground.add': { type: 'playground_added' },
  'playground.remove': { type: 'playground_removed' },
  'profile_field.create': { type: 'profile_field_created' },
  'profile_field.update': { type: 'profile_field_changed' },
  'profile_field.delete': { type: 'profile_field_deleted' },
  'profile_field.reorder': { type: 'profile_fields_reordered' },
  'realm_export.create': { type: 'realm_exported' },
  'realm_export.delete': { type: 'realm_export_deleted' },
};

/** Every event type the audit log holds, sorted (what `audit-log --type` accepts). */
export const AUDIT_TYPES: readonly string[] = [
  ...new Set([...Object.values(AUDITED_COMMANDS).map((r) => r.type), ...OTHER_AUDIT_TYPES]),
].sort();

/** Keys whose values never reach the audit log (nor the log): secrets, and rendered copies. */
// A bot's URL and integration settings may carry a service's credentials.
const SECRET_KEY =
  /password|api_key|secret|token|confirmation_key|hash|rendered|payload_url|config_data/i;
/** Keys of what the server wrote itself, not the actor: the Welcome Bot's message to a new account. */
const SERVER_CONTENT_KEY = new Set(['welcome']);
/** Strings longer than this are cut (a description, a pattern). */
const MAX_STRING = 200;
/** Arrays longer than this keep their first items and their length. */
const MAX_ITEMS = 50;

function clean(value: unknown, depth: number): unknown {
  if (typeof value === 'string')
    return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…` : value;
  if (typeof value !== 'object' || value === null) return value;
  if (depth > 3) return '…';
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((v) => clean(v, depth + 1));
    return value.length > MAX_ITEMS ? [...items, `… ${value.length} in all`] : items;
  }
  const out: Fields = {};
  for (const [k, v] of Object.entries(value)) {
    if (SECRET_KEY.test(k) || SERVER_CONTENT_KEY.has(k) || v === undefined) continue;
    out[k] = clean(v, depth + 1);
  }
  return out;
}

/** A command's payload as the audit log keeps it: no secrets, no origin, bounded in size. */
export function auditExtra(payload: unknown): Record<string, unknown> {
  if (typeof payload !== 'object' || payload === null) return {};
  const { acting_user_id: _a, audit_origin: _o, ...rest } = payload as Fields;
  return clean(rest, 0) as Record<string, unknown>;
}

const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/**
 * The entry for a realm command that succeeded with `result`, or null when the command is not
 * an administrative action (or not this time).
 */
export function auditEntryFor(
  command: string,
  payload: unknown,
  result: unknown,
): AuditEntry | null {
  const rule = AUDITED_COMMANDS[command];
  if (rule === undefined) return null;
  const p = (typeof payload === 'object' && payload !== null ? payload : {}) as Fields;
  const r = (typeof result === 'object' && result !== null ? result : {}) as Fields;
  if (rule.when && !rule.when(p, r)) return null;
  return {
    event_type: rule.type,
    acting_user_id: num(p.acting_user_id),
    modified_user_id: num(rule.user ? rule.user(p, r) : (p.user_id ?? null)),
    modified_channel_id: num(p.stream_id ?? p.channel_id ?? r.stream_id ?? null),
    modified_group_id: num(p.group_id ?? r.group_id ?? null),
    extra: auditExtra(payload),
  };
}

/** The columns of an origin. */
export function originColumns(origin: AuditOrigin | undefined): {
  via: string;
  address: string | null;
  user_agent: string | null;
  os_user: string | null;
} {
  if (origin === undefined)
    return { via: 'server', address: null, user_agent: null, os_user: null };
  switch (origin.via) {
    case 'api':
      return {
        via: 'api',
        address: origin.address,
        user_agent: origin.user_agent.slice(0, MAX_STRING),
        os_user: null,
      };
    case 'admin_tool':
      return { via: 'admin_tool', address: null, user_agent: null, os_user: origin.os_user };
    case 'server':
      return { via: 'server', address: null, user_agent: null, os_user: null };
  }
}

/**
 * Commands whose mutation records entries of its own (MutationContext.audit) besides those of
 * AUDITED_COMMANDS: channels created by a subscription request.
 */
const SELF_AUDITED = new Set(['channel.subscribe']);

/** Whether a command's payload should carry its origin. */
export function wantsAuditOrigin(command: string): boolean {
  return AUDITED_COMMANDS[command] !== undefined || SELF_AUDITED.has(command);
}

/** A payload with its origin, for a command the audit log records (unchanged otherwise). */
export function withAuditOrigin<P>(command: string, payload: P, origin: () => AuditOrigin): P {
  if (!wantsAuditOrigin(command) || typeof payload !== 'object' || payload === null) return payload;
  return { ...payload, audit_origin: origin() };
}

/** The origin a command's payload carries (absent: the server's own doing). */
export function auditOriginOf(payload: unknown): AuditOrigin | undefined {
  if (typeof payload !== 'object' || payload === null) return undefined;
  const o = (payload as Fields).audit_origin;
  return typeof o === 'object' && o !== null ? (o as AuditOrigin) : undefined;
}
