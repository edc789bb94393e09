/**
 * What the admin tool's commands share: reading their arguments (a realm, a user, a role, a
 * password), the owner they act as, how a user is printed, and the common options.
 */
import type { RealmRuntime } from '../../actors/registry.js';
import { JsonableError } from '../lib/errors.js';
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../lib/password.js';
import { isRole, Role, ROLE_NAMES, type Role as RoleValue } from '../lib/roles.js';
import { passwordLengthOk } from '../lib/user-rules.js';
import type { RealmRow } from '../storage/realms.js';
import type { UserRow } from '../storage/users.js';
import { UsageError } from './errors.js';
import type { AdminRuntime, Args } from './commands.js';

export function str(args: Args, name: string): string {
  const v = args[name];
  if (typeof v !== 'string') throw new UsageError(`missing --${name}`);
  return v;
}

export function realmArg(rt: AdminRuntime, args: Args): RealmRow {
  const arg = str(args, 'realm');
  const row = /^\d+$/.test(arg)
    ? rt.store.realms.byId(Number(arg))
    : rt.store.realms.byStringId(arg);
  if (!row) throw new UsageError(`no realm ${JSON.stringify(arg)}`);
  return row;
}

/** The realm's runtime, its commands carrying the tool's origin (the audit log's). */
export function realmRuntime(rt: AdminRuntime, row: RealmRow): RealmRuntime {
  const realm = rt.realms.get(row.id);
  if (!realm) throw new UsageError(`no realm ${row.id}`);
  return realm.actingFrom(() => rt.origin);
}

export function userArg(rt: AdminRuntime, realm: RealmRow, args: Args): UserRow {
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
export function actingOwner(realm: RealmRuntime): number {
  const owner = realm.view.activeUsers().find((u) => u.role === Role.OWNER && !u.is_bot);
  if (!owner) throw new JsonableError('This realm has no active owner to act as');
  return owner.id;
}

export async function passwordHash(rt: AdminRuntime, args: Args): Promise<string | null> {
  const password = args.password;
  if (typeof password !== 'string') return null;
  // The API's rule, said with what it is and as a usage error (the API's "The password is too
  // weak." gave an operator nothing to go on).
  if (!passwordLengthOk(password))
    throw new UsageError(
      `the password is too weak: it must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters long`,
    );
  return hashPassword(password, rt.config.scryptN);
}

export function userSummary(u: UserRow) {
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

export const REALM_OPT = { realm: { type: 'string' } } as const;
export const REALM_DESC = { realm: "the realm: its subdomain ('' for the root domain) or its id" };
export const USER_OPT = { ...REALM_OPT, user: { type: 'string' } } as const;
export const USER_DESC = { ...REALM_DESC, user: 'the user: an e-mail address or a user id' };
