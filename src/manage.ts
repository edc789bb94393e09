/**
 * `npm run manage -- <command> [--flag value ...]`: administration on DATA_DIR without a running
 * server (a running server keeps its own view of the realm; restart it afterwards).
 *
 *   create-realm --name N [--subdomain S] --owner-email E --owner-password P [--owner-name F]
 *   create-user  --realm S --email E --password P --full-name F [--role owner|administrator|moderator|member|guest|100..600]
               [--can-create-users true]
 *   list-invitations --realm S
 *
 * create-realm and create-user print one JSON object: {realm_id, user_id, email, api_key};
 * list-invitations prints {invitations: [{id, is_multiuse, email, invited_as, invited_by_user_id,
 * expiry_date, link}]}: the pending, unexpired invitations and their links (Confab sends no
 * e-mail; this is how an operator hands an e-mail invitation's link to the invitee).
 */
import { RealmRuntime } from '../actors/registry.js';
import { configFromEnv, type ServerConfig } from './config.js';
import { JsonableError } from './lib/errors.js';
import { hashPassword } from './lib/password.js';
import { invitationPath } from './lib/invitations.js';
import { isRole, ROLE_NAMES, type Role } from './lib/roles.js';
import { realmUrl } from './lib/urls.js';
import { doCreateRealm } from './mutations/realms.js';
import { isValidEmail } from './lib/email-validation.js';
import { checkFullName, checkPasswordStrength } from './lib/user-rules.js';
import { Store } from './storage/store.js';

const USAGE = `usage:
  npm run manage -- create-realm --name N [--subdomain S] --owner-email E --owner-password P [--owner-name F]
  npm run manage -- create-user --realm S --email E --password P --full-name F [--role R] [--can-create-users true]
  npm run manage -- list-invitations --realm S
(--realm takes a subdomain, '' for the root domain's realm, or a numeric realm id)`;

class UsageError extends Error {}

function parseFlags(argv: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) throw new UsageError(`unexpected argument: ${a}`);
    const eq = a.indexOf('=');
    if (eq !== -1) {
      out[a.slice(2, eq)] = a.slice(eq + 1);
    } else {
      const v = argv[i + 1];
      if (v === undefined) throw new UsageError(`${a} needs a value`);
      out[a.slice(2)] = v;
      i++;
    }
  }
  return out;
}

function need(flags: Record<string, string>, name: string): string {
  const v = flags[name];
  if (v === undefined) throw new UsageError(`missing --${name}`);
  return v;
}

function parseRole(s: string | undefined): Role {
  if (s === undefined) return 400;
  const byName = Object.entries(ROLE_NAMES).find(([, n]) => n === s.toLowerCase());
  const n = byName ? Number(byName[0]) : Number(s);
  if (!isRole(n)) throw new UsageError(`unknown role: ${s}`);
  return n;
}

async function createRealm(store: Store, flags: Record<string, string>, scryptN: number) {
  const email = need(flags, 'owner-email');
  if (!isValidEmail(email)) throw new UsageError(`invalid e-mail: ${email}`);
  const password = need(flags, 'owner-password');
  checkPasswordStrength(password);
  const name = need(flags, 'name');
  const ownerName = checkFullName(flags['owner-name'] ?? email.split('@')[0]!);
  return doCreateRealm(store, {
    name,
    string_id: (flags.subdomain ?? '').toLowerCase(),
    owner_email: email,
    owner_full_name: ownerName,
    owner_password_hash: await hashPassword(password, scryptN),
    owner_can_create_users: true,
    now: Math.floor(Date.now() / 1000),
  });
}

function realmOf(store: Store, flags: Record<string, string>) {
  const realmArg = need(flags, 'realm');
  const realmRow = /^\d+$/.test(realmArg)
    ? store.realms.byId(Number(realmArg))
    : store.realms.byStringId(realmArg);
  if (!realmRow) throw new UsageError(`no realm ${JSON.stringify(realmArg)}`);
  return realmRow;
}

function listInvitations(store: Store, flags: Record<string, string>, config: ServerConfig) {
  const realmRow = realmOf(store, flags);
  const base = realmUrl(config, realmRow.string_id);
  const now = Math.floor(Date.now() / 1000);
  return {
    invitations: store.invitations.validByRealm(realmRow.id, now).map((r) => ({
      id: r.id,
      is_multiuse: r.multiuse === 1,
      email: r.email,
      invited_as: r.invited_as,
      invited_by_user_id: r.referred_by,
      expiry_date: r.expiry_date,
      link: base + invitationPath(r.multiuse === 1, r.confirmation_key),
    })),
  };
}

async function createUser(store: Store, flags: Record<string, string>, scryptN: number) {
  const realmRow = realmOf(store, flags);
  const email = need(flags, 'email');
  if (!isValidEmail(email)) throw new UsageError(`invalid e-mail: ${email}`);
  const password = need(flags, 'password');
  checkPasswordStrength(password);
  const fullName = checkFullName(need(flags, 'full-name'));
  const role = parseRole(flags.role);
  const hash = await hashPassword(password, scryptN);
  // The same mutation the API runs, through a realm actor of this process. No server is running
  // here, so its events have no audience.
  const rt = new RealmRuntime(store, realmRow.id, { publish: () => {} });
  const canCreateUsers = flags['can-create-users'] === 'true';
  if (canCreateUsers && role > 200)
    throw new UsageError('--can-create-users needs an administrator or owner role');
  const r = await rt.ask('user.create', {
    acting_user_id: null,
    email,
    full_name: fullName,
    password_hash: hash,
    role,
    can_create_users: canCreateUsers,
  });
  rt.close();
  return { realm_id: realmRow.id, user_id: r.user_id, email: r.email, api_key: r.api_key };
}

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help') {
    console.log(USAGE);
    return command === undefined ? 2 : 0;
  }
  const config = configFromEnv();
  const store = Store.open(config.dataDir);
  try {
    const flags = parseFlags(rest);
    let result: object;
    if (command === 'create-realm') result = await createRealm(store, flags, config.scryptN);
    else if (command === 'create-user') result = await createUser(store, flags, config.scryptN);
    else if (command === 'list-invitations') result = listInvitations(store, flags, config);
    else throw new UsageError(`unknown command: ${command}`);
    console.log(JSON.stringify(result));
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n${USAGE}`);
      return 2;
    }
    if (err instanceof JsonableError) {
      console.error(`error: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    store.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
