/**
 * The admin tool's commands on a server's data: backup and restore of the data directory, export
 * and import of a realm, the running server's event-queue statistics, the mail outbox, and bots.
 * What a command runs on beyond the store (the backup, the archives, the audit rows) is imported
 * when it runs (commands.ts "Loading").
 */
import { nowSeconds } from '../lib/now.js';
import type { AdminCommand } from './commands.js';
import { realmArg, REALM_DESC, REALM_OPT, str } from './command-args.js';
import { UsageError } from './errors.js';
import { BotType } from '../lib/roles.js';

export const DATA_COMMANDS: Record<string, AdminCommand> = {
  backup: {
    summary: 'Copy the data directory consistently, while the server serves, into a new directory.',
    details:
      'The database through SQLite’s online backup, the uploaded files and custom emoji, and a\n' +
      'manifest.json with every file’s size and SHA-256. Restore with `restore --from DIR`.',
    options: { to: { type: 'string' } },
    describe: { to: 'the backup directory (must not exist, or be empty)' },
    required: ['to'],
    paths: ['to'],
    readOnly: true,
    async run(rt, args) {
      const { backupDataDir } = await import('./backup.js');
      const { recordToolAction } = await import('./tool-audit.js');
      const result = await backupDataDir(rt.store, rt.config.dataDir, str(args, 'to'));
      recordToolAction(rt, null, 'backup_taken', { to: args.to });
      return result;
    },
  },

  restore: {
    summary: 'Fill an empty data directory (DATA_DIR) from a backup; the server must be stopped.',
    details: 'Checks every file against the manifest, then the database’s integrity.',
    options: { from: { type: 'string' } },
    describe: { from: 'the backup directory' },
    required: ['from'],
    paths: ['from'],
    offline: true,
    run() {
      // Run by src/manage.ts itself: the data directory is not opened as a store first.
      return Promise.reject(new Error('restore runs in the admin tool'));
    },
  },

  'export-realm': {
    summary: 'Export a realm to an archive (.tar.gz) that import-realm reads.',
    details:
      'The archive carries the users’ password hashes and API keys (bots’ too), so that the\n' +
      'realm moves with its logins; it is written 0600. The format is described in\n' +
      'docs/operations.md "Moving a realm".',
    options: {
      ...REALM_OPT,
      to: { type: 'string' },
      'public-only': { type: 'boolean' },
      'without-credentials': { type: 'boolean' },
    },
    describe: {
      ...REALM_DESC,
      to: 'the archive file to write (must not exist)',
      'public-only':
        'only public data, as the API’s public export (no private channels or direct messages)',
      'without-credentials':
        'leave out password hashes and API keys (imported users get new keys and no password)',
    },
    required: ['realm', 'to'],
    paths: ['to'],
    readOnly: true,
    async run(rt, args) {
      const row = realmArg(rt, args);
      const credentials = args['without-credentials'] !== true;
      const { exportRealmToFile } = await import('./realm-export.js');
      const { recordToolAction } = await import('./tool-audit.js');
      const result = await exportRealmToFile(rt.store, rt.config, row.id, str(args, 'to'), {
        publicOnly: args['public-only'] === true,
        credentials,
      });
      recordToolAction(rt, row.id, 'realm_exported', {
        to: args.to,
        public_only: args['public-only'] === true,
        credentials,
      });
      return result;
    },
  },

  'import-realm': {
    summary: 'Create a realm from an export archive (of this or another Confab server).',
    details:
      'Users keep their e-mail addresses, names, roles, password hashes and API keys (when the\n' +
      'archive has them: export-realm without --without-credentials). An API key already used on\n' +
      'this server (the archive imported before, or its realm still here) is replaced by a new one\n' +
      'for that user, listed in `api_keys_regenerated`. An e-mail address used in another realm\n' +
      'here is no conflict: accounts belong to a realm. Ids are new; links between the data are\n' +
      'kept. See docs/operations.md "Moving a realm".',
    options: {
      from: { type: 'string' },
      subdomain: { type: 'string' },
      name: { type: 'string' },
      'without-credentials': { type: 'boolean' },
    },
    describe: {
      from: 'the export archive (.tar.gz)',
      subdomain: "the new realm's subdomain ('' for the root domain; must be free)",
      name: 'the new realm’s name (default: the exported realm’s)',
      'without-credentials':
        'ignore the archive’s password hashes and API keys: every user gets a new key and no ' +
        'password (set one with reset-password)',
    },
    required: ['from', 'subdomain'],
    paths: ['from'],
    // A cluster node's copy is written by the log and by realm owners with their own id blocks
    // (docs/cluster.md "Ids"): an import's rows, with ids above this copy's largest, would reach
    // no other node and could collide with ids another owner gives.
    notOnCluster: true,
    async run(rt, args) {
      const { importRealmFromFile } = await import('./realm-import.js');
      const { recordToolAction } = await import('./tool-audit.js');
      const result = await importRealmFromFile(rt, str(args, 'from'), {
        subdomain: str(args, 'subdomain').toLowerCase(),
        ...(typeof args.name === 'string' ? { name: args.name } : {}),
        credentials: args['without-credentials'] !== true,
      });
      recordToolAction(rt, result.realm_id, 'realm_imported', {
        from: args.from,
        credentials: result.credentials,
        // (a key named api_key… would be left out of the entry as a secret)
        keys_regenerated_for: result.api_keys_regenerated.map((u) => u.user_id),
      });
      return result;
    },
  },

  'queue-stats': {
    summary: 'Event queues of the running server: counts, pending events, consumers, per realm.',
    options: {},
    describe: {},
    readOnly: true,
    run(rt) {
      if (!rt.queues) return Promise.resolve({ server_running: false, queues: 0 });
      const byRealm = new Map<
        number,
        { queues: number; events: number; held_polls: number; sockets: number }
      >();
      for (const q of rt.queues.list()) {
        let r = byRealm.get(q.realmId);
        if (!r) byRealm.set(q.realmId, (r = { queues: 0, events: 0, held_polls: 0, sockets: 0 }));
        r.queues++;
        r.events += q.queue.size;
        if (q.state === 'waiting') r.held_polls++;
        else if (q.state === 'streaming') r.sockets++;
      }
      const realms = [...byRealm].map(([realm_id, r]) => ({ realm_id, ...r }));
      const total = (k: 'queues' | 'events' | 'held_polls' | 'sockets') =>
        realms.reduce((n, r) => n + r[k], 0);
      return Promise.resolve({
        server_running: true,
        queues: total('queues'),
        events: total('events'),
        held_polls: total('held_polls'),
        sockets: total('sockets'),
        realms,
      });
    },
  },

  outbox: {
    summary: 'Mail waiting in the outbox for the SMTP server (docs/mail.md), oldest first.',
    details:
      'Each with its realm, kind, recipient, subject, attempts so far, the time of the next one and\n' +
      'the last error. Mail leaves the outbox once the SMTP server accepts it, or is dropped (and\n' +
      'logged) after a refusal for good or too many failures.',
    options: { limit: { type: 'string' } },
    describe: { limit: 'show at most this many (default 100, at most 10000)' },
    readOnly: true,
    run(rt, args) {
      const raw = typeof args.limit === 'string' ? args.limit : '100';
      if (!/^[1-9]\d{0,4}$/.test(raw) || Number(raw) > 10_000)
        throw new UsageError('--limit is a number from 1 to 10000');
      const now = nowSeconds(rt.config);
      return Promise.resolve({
        smtp_configured: rt.config.smtpUrl !== null,
        waiting: rt.store.mail.count(),
        mail: rt.store.mail.list(Number(raw)).map((m) => ({
          ...m,
          age_seconds: Math.max(0, now - m.created_at),
        })),
      });
    },
  },

  bots: {
    summary: 'A realm’s bots (docs/integrations.md): kind, owner, state; never their keys.',
    details:
      'Each bot with its id, address, name, kind (generic, incoming_webhook, outgoing_webhook),\n' +
      'owner (none for the system bots), whether it is active, and an outgoing-webhook bot’s\n' +
      'endpoint; with the outgoing-webhook calls waiting in the server’s queue.',
    options: { ...REALM_OPT },
    describe: { ...REALM_DESC },
    required: ['realm'],
    readOnly: true,
    run(rt, args) {
      const row = realmArg(rt, args);
      const users = rt.store.users.byRealm(row.id);
      const emailOf = new Map(users.map((u) => [u.id, u.email]));
      const kinds: Record<number, string> = {
        [BotType.DEFAULT]: 'generic',
        [BotType.INCOMING_WEBHOOK]: 'incoming_webhook',
        [BotType.OUTGOING_WEBHOOK]: 'outgoing_webhook',
      };
      const bots = users
        .filter((u) => u.is_bot === 1)
        .map((u) => ({
          user_id: u.id,
          email: u.email,
          full_name: u.full_name,
          kind: kinds[u.bot_type ?? BotType.DEFAULT] ?? String(u.bot_type),
          owner: u.bot_owner_id === null ? null : (emailOf.get(u.bot_owner_id) ?? null),
          is_active: u.is_active === 1,
          ...(u.bot_type === BotType.OUTGOING_WEBHOOK
            ? { endpoint: rt.store.bots.services(u.id)[0]?.base_url ?? null }
            : {}),
        }));
      return Promise.resolve({
        realm_id: row.id,
        bots,
        outgoing_webhook_calls_waiting: rt.store.outgoingWebhookCalls.count(),
      });
    },
  },
};
