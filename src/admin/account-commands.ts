/**
 * The admin tool's commands on realms, users and invitations: create, list and deactivate realms;
 * create, list, change the role of, deactivate, reactivate users; reset passwords and API keys.
 * A new realm's setup and a new user's welcome are imported when a command runs (commands.ts
 * "Loading").
 */
import { nowSeconds } from '../lib/now.js';
import { invitationPath } from '../lib/invitations.js';
import { Role, ROLE_NAMES } from '../lib/roles.js';
import { checkRealmName } from '../lib/realm-settings.js';
import { realmUrl } from '../lib/urls.js';
import { isValidEmail } from '../lib/email-validation.js';
import { checkFullName } from '../lib/user-rules.js';
import { UsageError } from './errors.js';
import { JsonableError } from '../lib/errors.js';
import type { AdminCommand } from './commands.js';
import {
  actingOwner,
  parseRole,
  passwordHash,
  realmArg,
  realmRuntime,
  REALM_DESC,
  REALM_OPT,
  str,
  userArg,
  userSummary,
  USER_DESC,
  USER_OPT,
} from './command-args.js';

export const ACCOUNT_COMMANDS: Record<string, AdminCommand> = {
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
      // The bound the settings endpoint and the first start keep (the reference's 40).
      const name = checkRealmName(str(args, 'name'), (_, message) => {
        throw new UsageError(`--name ${message}`);
      });
      const ownerName =
        typeof args['owner-name'] === 'string'
          ? fullNameArg(args['owner-name'], '--owner-name')
          : fullNameArg(email.split('@')[0]!, '--owner-name', 'the e-mail’s local part');
      const hash = await passwordHash(rt, args);
      const stringId = str(args, 'subdomain').toLowerCase();
      const { createRealmWithDefaults } = await import('../realm-setup.js');
      const created = await createRealmWithDefaults(rt, rt.realms, {
        name,
        string_id: stringId,
        owner_email: email,
        owner_full_name: ownerName,
        owner_password_hash: hash,
        owner_can_create_users: true,
        now: nowSeconds(rt.config),
        audit_origin: rt.origin,
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
    readOnly: true,
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

  'realm-external-avatars': {
    summary:
      'Show users without an uploaded avatar with the external avatar host’s images (on), or the server’s own default (off, the default).',
    options: { ...REALM_OPT, set: { type: 'string' } },
    describe: {
      ...REALM_DESC,
      set: '`on` or `off` (omitted: only say which it is)',
    },
    required: ['realm'],
    async run(rt, args) {
      const row = realmArg(rt, args);
      const realm = realmRuntime(rt, row);
      if (args.set !== undefined) {
        const set = str(args, 'set');
        if (set !== 'on' && set !== 'off') throw new UsageError('--set is `on` or `off`');
        await realm.ask('realm.update_settings', {
          acting_user_id: null,
          settings: { external_avatars: set === 'on' },
        });
      }
      return { realm_id: row.id, external_avatars: realm.view.settings.external_avatars };
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
      const fullName = fullNameArg(str(args, 'full-name'), '--full-name');
      const hash = await passwordHash(rt, args);
      const realm = realmRuntime(rt, row);
      const { prepareWelcome } = await import('../queries/welcome.js');
      const r = await realm.ask('user.create', {
        acting_user_id: null,
        email,
        full_name: fullName,
        password_hash: hash,
        role,
        can_create_users: canCreateUsers,
        welcome: await prepareWelcome(rt, realm.view),
      });
      return { realm_id: row.id, user_id: r.user_id, email: r.email, api_key: r.api_key };
    },
  },

  'list-users': {
    summary: 'List a realm’s users.',
    options: { ...REALM_OPT, 'include-deactivated': { type: 'boolean' } },
    describe: { ...REALM_DESC, 'include-deactivated': 'also list deactivated accounts' },
    required: ['realm'],
    readOnly: true,
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

  'change-email': {
    summary: 'Change a user’s e-mail address (no confirmation link: you vouch for it).',
    options: { ...USER_OPT, email: { type: 'string' } },
    describe: { ...USER_DESC, email: 'the new address' },
    required: ['realm', 'user', 'email'],
    async run(rt, args) {
      const row = realmArg(rt, args);
      const user = userArg(rt, row, args);
      const email = str(args, 'email').trim();
      if (!isValidEmail(email)) throw new UsageError(`invalid e-mail: ${email}`);
      const r = await realmRuntime(rt, row).ask('user.email.set', { user_id: user.id, email });
      return r;
    },
  },

  'logout-everywhere': {
    summary: 'Log a user out everywhere: every session and event queue ends.',
    details:
      'Browser sessions end and clients must log in again; event queues are deleted, so open\n' +
      'clients register again. A client holding the API key can still use it: add --new-api-key\n' +
      'to replace the key too (then every client must log in again).',
    options: { ...USER_OPT, 'new-api-key': { type: 'boolean' } },
    describe: { ...USER_DESC, 'new-api-key': 'also give the user a new API key' },
    required: ['realm', 'user'],
    async run(rt, args) {
      const row = realmArg(rt, args);
      const user = userArg(rt, row, args);
      const r = await realmRuntime(rt, row).ask('user.sessions.end', {
        user_id: user.id,
        api_key: args['new-api-key'] === true,
      });
      return { user_id: user.id, sessions_ended: true, api_key: r.api_key };
    },
  },

  'list-invitations': {
    summary: 'List a realm’s pending invitations with their links (to pass on by hand).',
    options: { ...REALM_OPT },
    describe: { ...REALM_DESC },
    required: ['realm'],
    readOnly: true,
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
};

/**
 * checkFullName on a command-line value: a UsageError naming the option (the mutation's own
 * "Name too short!" named none), and for a value the tool chose, where it came from.
 */
function fullNameArg(value: string, option: string, defaultFrom?: string): string {
  try {
    return checkFullName(value);
  } catch (err) {
    if (!(err instanceof JsonableError)) throw err;
    throw new UsageError(
      `${option}: ${err.message}` +
        (defaultFrom === undefined
          ? ''
          : ` (none given, so ${defaultFrom}, ${JSON.stringify(value)}: give ${option})`),
    );
  }
}
