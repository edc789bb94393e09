/**
 * The admin tool's commands for the operator's own view: the audit log (`audit-log`), and a check
 * of the settings and the machine (`check-config`, in check-config.ts). The audit rows of the
 * tool's actions on the whole server (backups, restores, exports, imports) are in tool-audit.ts.
 */
import { AUDIT_TYPES } from '../lib/audit.js';
import type { AuditRow } from '../storage/audit.js';
import type { AdminCommand } from './commands.js';
import { realmArg, REALM_OPT, userArg } from './command-args.js';
import { UsageError } from './errors.js';

function formatRow(r: AuditRow) {
  return {
    id: r.id,
    time: new Date(r.event_time * 1000).toISOString(),
    event_type: r.event_type,
    acting_user_id: r.acting_user_id,
    modified_user_id: r.modified_user_id,
    modified_channel_id: r.modified_channel_id,
    modified_group_id: r.modified_group_id,
    via: r.via,
    ...(r.address !== null ? { address: r.address } : {}),
    ...(r.user_agent !== null ? { user_agent: r.user_agent } : {}),
    ...(r.os_user !== null ? { os_user: r.os_user } : {}),
    extra: JSON.parse(r.extra) as unknown,
  };
}

export const OPS_COMMANDS: Record<string, AdminCommand> = {
  'audit-log': {
    summary: 'Read the audit log: administrative actions, newest first.',
    details:
      'Every administrative action, through the API or this tool: when, what, who (acting_user_id\n' +
      'for an API user, os_user for this tool), on whom or what, from where (address, user_agent).',
    options: {
      ...REALM_OPT,
      server: { type: 'boolean' },
      limit: { type: 'string', default: '100' },
      before: { type: 'string' },
      type: { type: 'string' },
      user: { type: 'string' },
    },
    describe: {
      realm: "the realm: its subdomain ('' for the root domain) or its id",
      server: 'instead of a realm’s: the actions on the whole server (backups, restores)',
      limit: 'at most this many entries (default 100, at most 1000)',
      before: 'entries older than this id (the next page)',
      type: 'only entries of this event type (e.g. user_changed; an unknown type is refused)',
      user: 'only entries by or about this user (an e-mail address or a user id)',
    },
    readOnly: true,
    run(rt, args) {
      if ((args.server === true) === (typeof args.realm === 'string'))
        throw new UsageError('give one of --realm or --server');
      const limit = Number(args.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new UsageError('--limit is a number from 1 to 1000');
      const before = args.before === undefined ? undefined : Number(args.before);
      if (before !== undefined && !Number.isInteger(before))
        throw new UsageError('--before is an entry id');
      if (typeof args.type === 'string' && !AUDIT_TYPES.includes(args.type))
        throw new UsageError(
          `unknown --type ${JSON.stringify(args.type)}: the types are ${AUDIT_TYPES.join(', ')}`,
        );
      const realm = args.server === true ? null : realmArg(rt, args);
      const user =
        typeof args.user === 'string' && realm !== null ? userArg(rt, realm, args).id : undefined;
      if (typeof args.user === 'string' && realm === null)
        throw new UsageError('--user needs --realm');
      const rows = rt.store.audit.list({
        realmId: realm?.id ?? null,
        limit,
        ...(before !== undefined ? { before } : {}),
        ...(typeof args.type === 'string' ? { eventType: args.type } : {}),
        ...(user !== undefined ? { userId: user } : {}),
      });
      return Promise.resolve({ realm_id: realm?.id ?? null, entries: rows.map(formatRow) });
    },
  },

  'check-config': {
    summary: 'Check the settings and the machine: data directory, port, URLs, runtime.',
    details:
      'Reads the settings as the server would (--env-file FILE), and says what would stop the\n' +
      'server or serve clients badly: errors (exit status 1) and warnings. Changes nothing.',
    options: {},
    describe: {},
    readOnly: true,
    run() {
      return Promise.reject(new Error('check-config runs in the admin tool'));
    },
    // The check loads what it looks at (the SQLite binding, uWebSockets.js) itself.
    runLocal: async (config) => (await import('./check-config.js')).checkConfig(config),
  },
};
