/**
 * The admin tool's commands (`npm run manage -- <command>`; docs/operations.md "Admin tool").
 * Each one is described here once — its options (node:util parseArgs), whether it needs a
 * password, its help text — and runs against an AdminRuntime: the running server's (through the
 * admin socket, src/admin/socket.ts) or the tool's own, opened on the data directory under its
 * lock when no server runs. Either way every change goes through the realm actors.
 *
 * Every command prints one JSON object. Passwords never come from the command line: the tool
 * reads them from a prompt, standard input or a named environment variable (src/manage.ts) and
 * passes them in `args.password`.
 */
import type { ParseArgsConfig } from 'node:util';
import type { EventQueues } from '../../actors/event-queues.js';
import type { RealmRegistry, RealmRuntime } from '../../actors/registry.js';
import { nowSeconds, type ServerConfig } from '../config.js';
import { JsonableError } from '../lib/errors.js';
import { invitationPath } from '../lib/invitations.js';
import { hashPassword } from '../lib/password.js';
import { isRole, Role, ROLE_NAMES, type Role as RoleValue } from '../lib/roles.js';
import { realmUrl } from '../lib/urls.js';
import { isValidEmail } from '../lib/email-validation.js';
import { checkFullName, checkPasswordStrength } from '../lib/user-rules.js';
import { createRealmWithDefaults } from '../realm-setup.js';
import type { RealmRow } from '../storage/realms.js';
import type { Store } from '../storage/store.js';
import type { UserRow } from '../storage/users.js';
import type { RenderPool } from '../../workers/pool.js';
import { backupDataDir } from './backup.js';
import { UsageError } from './errors.js';
import { exportRealmToFile } from './realm-export.js';
import { importRealmFromFile } from './realm-import.js';

/** What a command runs against. */
export type AdminRuntime = {
  config: ServerConfig;
  store: Store;
  realms: RealmRegistry;
  renderer: RenderPool;
  /** The running server's event queues; null when the tool opened the data directory itself. */
  queues: EventQueues | null;
};

export { UsageError };

type Options = NonNullable<ParseArgsConfig['options']>;
export type Args = Record<string, string | boolean | undefined>;

export type AdminCommand = {
  summary: string;
  /** Extra lines for --help (the options are listed from `options`). */
  details?: string;
  options: Options;
  /** Option descriptions for --help, by option name. */
  describe: Record<string, string>;
  required?: readonly string[];
  /** Whether the tool asks for a password (`optional`: unless --without-password). */
  password?: 'required' | 'optional';
  /** Runs only without a server on the data directory (restore). */
  offline?: boolean;
  run(rt: AdminRuntime, args: Args): Promise<unknown>;
};

// ---- helpers ----------------------------------------------------------------------------------

function str(args: Args, name: string): string {
  const v = args[name];
  if (typeof v !== 'string') throw new UsageError(`missing --${name}`);
  return v;
}

function realmArg(rt: AdminRuntime, args: Args): RealmRow {
  const arg = str(args, 'realm');
  const row = /^\d+$/.test(arg)
    ? rt.store.realms.byId(Number(arg))
    : rt.store.realms.byStringId(arg);
  if (!row) throw new UsageError(`no realm ${JSON.stringify(arg)}`);
  return row;
}

function realmRuntime(rt: AdminRuntime, row: RealmRow): RealmRuntime {
  const realm = rt.realms.get(row.id);
  if (!realm) throw new UsageError(`no realm ${row.id}`);
  return realm;
}

function userArg(rt: AdminRuntime, realm: RealmRow, args: Args): UserRow {
  const arg = str(args, 'user');
  const row = /^\d+$/.test(arg)
    ? rt.store.users.byId(Number(arg))
    : rt.store.users.byDeliveryEmail(realm.id, arg);
  if (!row || row.realm_id !== realm.id)
    throw new UsageError(`no user ${JSON.stringify(arg)} in realm ${realm.id}`);
  return row;
}

export function parseRole(s: string | undefined): RoleValue {
  if (s === undefined) return Role.MEMBER;
  const byName = Object.entries(ROLE_NAMES).find(([, n]) => n === s.toLowerCase());
  const n = byName ? Number(byName[0]) : Number(s);
  if (!isRole(n)) throw new UsageError(`unknown role: ${s}`);
  return n;
}

/**
 * The user the admin tool acts as where a mutation wants an acting user (permission checks
 * written for API callers): the realm's first active human owner. Rules that protect the realm
 * (the last owner keeps the owner role, ...) still apply.
 */
function actingOwner(realm: RealmRuntime): number {
  const owner = realm.view.activeUsers().find((u) => u.role === Role.OWNER && !u.is_bot);
  if (!owner) throw new JsonableError('This realm has no active owner to act as');
  return owner.id;
}

async function passwordHash(rt: AdminRuntime, args: Args): Promise<string | null> {
  const password = args.password;
  if (typeof password !== 'string') return null;
  checkPasswordStrength(password);
  return hashPassword(password, rt.config.scryptN);
}

function userSummary(u: UserRow) {
  return {
    user_id: u.id,
    email: u.delivery_email,
    full_name: u.full_name,
    role: ROLE_NAMES[u.role as RoleValue] ?? u.role,
    is_active: u.is_active === 1,
    is_bot: u.is_bot === 1,
    date_joined: u.date_joined,
  };
}

const REALM_OPT = { realm: { type: 'string' } } as const;
const REALM_DESC = { realm: "the realm: its subdomain ('' for the root domain) or its id" };
const USER_OPT = { ...REALM_OPT, user: { type: 'string' } } as const;
const USER_DESC = { ...REALM_DESC, user: 'the user: an e-mail address or a user id' };

// ---- the commands -----------------------------------------------------------------------------

export const COMMANDS: Record<string, AdminCommand> = {
  'create-realm': {
    summary: 'Create a realm with its owner, default channels and welcome messages.',
    options: {
      name: { type: 'string' },
      subdomain: { type: 'string', default: '' },
      'owner-email': { type: 'string' },
      'owner-name': { type: 'string' },
    },
    describe: {
      name: 'the realm’s name',
      subdomain: "its subdomain ('' or omitted: the root domain)",
      'owner-email': 'the owner’s e-mail address',
      'owner-name': 'the owner’s full name (default: the e-mail’s local part)',
    },
    required: ['name', 'owner-email'],
    password: 'required',
    async run(rt, args) {
      const email = str(args, 'owner-email');
      if (!isValidEmail(email)) throw new UsageError(`invalid e-mail: ${email}`);
      const hash = await passwordHash(rt, args);
      const stringId = str(args, 'subdomain').toLowerCase();
      const created = await createRealmWithDefaults(rt, rt.realms, {
        name: str(args, 'name'),
        string_id: stringId,
        owner_email: email,
        owner_full_name: checkFullName(
          typeof args['owner-name'] === 'string' ? args['owner-name'] : email.split('@')[0]!,
        ),
        owner_password_hash: hash,
        owner_can_create_users: true,
        now: nowSeconds(rt.config),
      });
      return {
        realm_id: created.realm_id,
        string_id: stringId,
        url: realmUrl(rt.config, stringId),
        user_id: created.user_id,
        email: created.email,
        api_key: created.api_key,
      };
    },
  },

  'list-realms': {
    summary: 'List the realms.',
    options: {},
    describe: {},
    run(rt) {
      return Promise.resolve({
        realms: rt.store.realms.all().map((r) => ({
          realm_id: r.id,
          string_id: r.string_id,
          name: r.name,
          url: realmUrl(rt.config, r.string_id),
          deactivated: r.deactivated !== 0,
          date_created: r.date_created,
          active_users: rt.realms
            .get(r.id)!
            .view.activeUsers()
            .filter((u) => !u.is_bot).length,
        })),
      });
    },
  },

  'deactivate-realm': {
    summary: 'Deactivate a realm: nobody can log in or use an API key there any more.',
    options: { ...REALM_OPT },
    describe: { ...REALM_DESC },
    required: ['realm'],
    async run(rt, args) {
      const row = realmArg(rt, args);
      // The realm's sessions end with it (event queues deleted, sockets closed).
      const r = await realmRuntime(rt, row).ask('realm.deactivate_by_admin', {});
      return { realm_id: row.id, deactivated: true, already_deactivated: r.already };
    },
  },

  'create-user': {
    summary: 'Create a user in a realm (joins the realm’s default channels).',
    options: {
      ...REALM_OPT,
      email: { type: 'string' },
      'full-name': { type: 'string' },
      role: { type: 'string' },
      'can-create-users': { type: 'boolean' },
      'without-password': { type: 'boolean' },
    },
    describe: {
      ...REALM_DESC,
      email: 'the new user’s e-mail address',
      'full-name': 'the new user’s name',
      role: 'owner, administrator, moderator, member (default) or guest',
      'can-create-users': 'may create users through the API (administrators and owners only)',
      'without-password': 'no password login (API key only); no password is asked for',
    },
    required: ['realm', 'email', 'full-name'],
    password: 'optional',
    async run(rt, args) {
      const row = realmArg(rt, args);
      const email = str(args, 'email');
      if (!isValidEmail(email)) throw new UsageError(`invalid e-mail: ${email}`);
      const role = parseRole(typeof args.role === 'string' ? args.role : undefined);
      const canCreateUsers = args['can-create-users'] === true;
      if (canCreateUsers && role > Role.ADMINISTRATOR)
        throw new UsageError('--can-create-users needs an administrator or owner role');
      const fullName = checkFullName(str(args, 'full-name'));
      const hash = await passwordHash(rt, args);
      const r = await realmRuntime(rt, row).ask('user.create', {
        acting_user_id: null,
        email,
        full_name: fullName,
        password_hash: hash,
        role,
        can_create_users: canCreateUsers,
      });
      return { realm_id: row.id, user_id: r.user_id, email: r.email, api_key: r.api_key };
    },
  },

  'list-users': {
    summary: 'List a realm’s users.',
    options: { ...REALM_OPT, 'include-deactivated': { type: 'boolean' } },
    describe: { ...REALM_DESC, 'include-deactivated': 'also list deactivated accounts' },
    required: ['realm'],
    run(rt, args) {
      const row = realmArg(rt, args);
      const all = args['include-deactivated'] === true;
      const users = rt.store.users
        .byRealm(row.id)
        .filter((u) => all || u.is_active === 1)
        .map(userSummary);
      return Promise.resolve({ realm_id: row.id, users });
    },
  },

  'change-role': {
    summary: 'Change a user’s role.',
    options: { ...USER_OPT, role: { type: 'string' } },
    describe: { ...USER_DESC, role: 'owner, administrator, moderator, member or guest' },
    required: ['realm', 'user', 'role'],
    async run(rt, args) {
      const row = realmArg(rt, args);
      const user = userArg(rt, row, args);
      const role = parseRole(str(args, 'role'));
      const realm = realmRuntime(rt, row);
      await realm.ask('user.update', {
        acting_user_id: actingOwner(realm),
        user_id: user.id,
        role,
      });
      return { user_id: user.id, role: ROLE_NAMES[role] };
    },
  },

  'deactivate-user': {
    summary: 'Deactivate a user: no more logins or API requests (the account stays listed).',
    options: { ...USER_OPT },
    describe: { ...USER_DESC },
    required: ['realm', 'user'],
    async run(rt, args) {
      const row = realmArg(rt, args);
      const user = userArg(rt, row, args);
      const realm = realmRuntime(rt, row);
      await realm.ask('user.deactivate', { acting_user_id: actingOwner(realm), user_id: user.id });
      return { user_id: user.id, is_active: false };
    },
  },

  'reactivate-user': {
    summary: 'Reactivate a deactivated user.',
    options: { ...USER_OPT },
    describe: { ...USER_DESC },
    required: ['realm', 'user'],
    async run(rt, args) {
      const row = realmArg(rt, args);
      const user = userArg(rt, row, args);
      const realm = realmRuntime(rt, row);
      await realm.ask('user.reactivate', { acting_user_id: actingOwner(realm), user_id: user.id });
      return { user_id: user.id, is_active: true };
    },
  },

  'reset-password': {
    summary: 'Set a user’s password (asked for; never on the command line).',
    options: { ...USER_OPT },
    describe: { ...USER_DESC },
    required: ['realm', 'user'],
    password: 'required',
    async run(rt, args) {
      const row = realmArg(rt, args);
      const user = userArg(rt, row, args);
      const hash = await passwordHash(rt, args);
      await realmRuntime(rt, row).ask('user.password.set', {
        user_id: user.id,
        password_hash: hash,
      });
      return { user_id: user.id, password_set: true };
    },
  },

  'regenerate-api-key': {
    summary: 'Give a user a new API key (the old one stops working at once).',
    options: { ...USER_OPT },
    describe: { ...USER_DESC },
    required: ['realm', 'user'],
    async run(rt, args) {
      const row = realmArg(rt, args);
      const user = userArg(rt, row, args);
      const r = await realmRuntime(rt, row).ask('user.api_key.regenerate', { user_id: user.id });
      return { user_id: user.id, api_key: r.api_key };
    },
  },

  'list-invitations': {
    summary: 'List a realm’s pending invitations with their links (Confab sends no e-mail).',
    options: { ...REALM_OPT },
    describe: { ...REALM_DESC },
    required: ['realm'],
    run(rt, args) {
      const row = realmArg(rt, args);
      const base = realmUrl(rt.config, row.string_id);
      const now = nowSeconds(rt.config);
      return Promise.resolve({
        invitations: rt.store.invitations.validByRealm(row.id, now).map((r) => ({
          id: r.id,
          is_multiuse: r.multiuse === 1,
          email: r.email,
          invited_as: r.invited_as,
          invited_by_user_id: r.referred_by,
          expiry_date: r.expiry_date,
          link: base + invitationPath(r.multiuse === 1, r.confirmation_key),
        })),
      });
    },
  },

  backup: {
    summary: 'Copy the data directory consistently, while the server serves, into a new directory.',
    details:
      'The database through SQLite’s online backup, the uploaded files and custom emoji, and a\n' +
      'manifest.json with every file’s size and SHA-256. Restore with `restore --from DIR`.',
    options: { to: { type: 'string' } },
    describe: { to: 'the backup directory (must not exist, or be empty)' },
    required: ['to'],
    run(rt, args) {
      return backupDataDir(rt.store, rt.config.dataDir, str(args, 'to'));
    },
  },

  restore: {
    summary: 'Fill an empty data directory (DATA_DIR) from a backup; the server must be stopped.',
    details: 'Checks every file against the manifest, then the database’s integrity.',
    options: { from: { type: 'string' } },
    describe: { from: 'the backup directory' },
    required: ['from'],
    offline: true,
    run() {
      // Run by src/manage.ts itself: the data directory is not opened as a store first.
      return Promise.reject(new Error('restore runs in the admin tool'));
    },
  },

  'export-realm': {
    summary: 'Export a realm to an archive (.tar.gz) that import-realm reads.',
    details: 'The archive format is described in docs/operations.md "Realm export and import".',
    options: { ...REALM_OPT, to: { type: 'string' }, 'public-only': { type: 'boolean' } },
    describe: {
      ...REALM_DESC,
      to: 'the archive file to write (must not exist)',
      'public-only':
        'only public data, as the API’s public export (no private channels or direct messages)',
    },
    required: ['realm', 'to'],
    run(rt, args) {
      const row = realmArg(rt, args);
      return exportRealmToFile(rt.store, rt.config, row.id, str(args, 'to'), {
        publicOnly: args['public-only'] === true,
      });
    },
  },

  'import-realm': {
    summary: 'Create a realm from an export archive (of this or another Confab server).',
    details:
      'Users keep their e-mail addresses, names and roles, and get new API keys and no password:\n' +
      'set passwords with `reset-password`. Ids are new; links between the data are kept.',
    options: { from: { type: 'string' }, subdomain: { type: 'string' }, name: { type: 'string' } },
    describe: {
      from: 'the export archive (.tar.gz)',
      subdomain: "the new realm's subdomain ('' for the root domain; must be free)",
      name: 'the new realm’s name (default: the exported realm’s)',
    },
    required: ['from', 'subdomain'],
    run(rt, args) {
      return importRealmFromFile(rt, str(args, 'from'), {
        subdomain: str(args, 'subdomain').toLowerCase(),
        ...(typeof args.name === 'string' ? { name: args.name } : {}),
      });
    },
  },

  'queue-stats': {
    summary: 'Event queues of the running server: counts, pending events, consumers, per realm.',
    options: {},
    describe: {},
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
        if (q.waiter) r.held_polls++;
        else if (q.socket) r.sockets++;
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
};

/** A command's --help text. */
export function commandHelp(name: string, cmd: AdminCommand): string {
  const lines = [`npm run manage -- ${name} [options]`, '', cmd.summary];
  if (cmd.details) lines.push('', cmd.details);
  const names = Object.keys(cmd.options);
  if (names.length > 0) {
    lines.push('', 'Options:');
    for (const o of names) {
      const isBool = cmd.options[o]!.type === 'boolean';
      const req = cmd.required?.includes(o) ? ' (required)' : '';
      lines.push(`  --${o}${isBool ? '' : ' VALUE'}${req}: ${cmd.describe[o] ?? ''}`);
    }
  }
  if (cmd.password) {
    lines.push(
      '',
      'The password is asked for on the terminal, or read from standard input (--password-stdin)',
      'or from an environment variable (--password-env NAME); never from the command line.',
    );
  }
  lines.push(
    '',
    'Common options: --env-file FILE (the server’s settings: DATA_DIR, EXTERNAL_HOST, ...), --help.',
    'Prints one JSON object. With a server running on DATA_DIR the command runs in the server.',
  );
  return lines.join('\n');
}

/**
 * Runs a command in this process (the server's admin socket, or the tool's own runtime).
 * Refusals come back as JsonableError or UsageError.
 */
export async function runCommand(rt: AdminRuntime, name: string, args: Args): Promise<unknown> {
  const cmd = COMMANDS[name];
  if (!cmd) throw new UsageError(`unknown command: ${name}`);
  for (const r of cmd.required ?? [])
    if (args[r] === undefined) throw new UsageError(`missing --${r}`);
  return cmd.run(rt, args);
}
