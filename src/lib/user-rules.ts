/**
 * Rules about users that do not depend on the realm's data: names, passwords, the role a new
 * account gets, and who may create accounts through the API. Messages are the reference's
 * (lib/users.py check_full_name, views/users.py create_user_backend, lib/password_strength.py).
 */
import { JsonableError, OrganizationAdministratorRequiredError } from './errors.js';
import { longerThan, shorterThan } from './strings.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './password.js';
import { Role } from './roles.js';

export const MAX_FULL_NAME_LENGTH = 100;
export const MIN_FULL_NAME_LENGTH = 2;

/** Characters names may not contain: mention syntax (@**Name**) and markdown would be ambiguous. */
const NAME_INVALID_CHARS = /[*`\\>"@]/;
/** Control characters, surrogates and non-characters (the reference's check_string_is_printable). */
const NOT_PRINTABLE = /[\p{Cc}\p{Cs}\p{Noncharacter_Code_Point}]/u;

/**
 * The reference's check_full_name without the uniqueness rule (checkUniqueName): trims, and
 * refuses a name that is too long or too short, has unprintable or mention characters, or ends
 * like a disambiguated mention (`|15`).
 */
export function checkFullName(raw: string): string {
  const name = raw.trim();
  if (longerThan(name, MAX_FULL_NAME_LENGTH)) throw new JsonableError('Name too long!');
  if (shorterThan(name, MIN_FULL_NAME_LENGTH)) throw new JsonableError('Name too short!');
  if (NOT_PRINTABLE.test(name) || NAME_INVALID_CHARS.test(name)) {
    throw new JsonableError('Invalid characters in name!');
  }
  if (/\|\d+$/.test(raw)) throw new JsonableError('Invalid format!');
  return name;
}

/**
 * The reference's check_password_strength, by length (this server has no strength estimator):
 * whether a password is MIN_PASSWORD_LENGTH to MAX_PASSWORD_LENGTH code points long.
 */
export function passwordLengthOk(password: string): boolean {
  return !shorterThan(password, MIN_PASSWORD_LENGTH) && !longerThan(password, MAX_PASSWORD_LENGTH);
}

/** Password rules checked before hashing (hashing happens outside the actor). */
export function checkPasswordStrength(password: string): void {
  if (!passwordLengthOk(password)) {
    throw new JsonableError('The password is too weak.');
  }
}

/** The role an account created through POST /users gets. */
export const ROLE_FOR_NEW_USER: Role = Role.MEMBER;

type Actor = { role: number; is_active: number; can_create_users: number };

/**
 * Administrators (owners included) only, as the reference's require_realm_admin. Endpoints call it
 * first, before looking at any parameter (the reference's order); the mutation calls it again
 * against the state it commits against.
 */
export function checkRealmAdministrator<U extends Actor>(user: U | undefined): asserts user is U {
  if (!user || !user.is_active || user.role > Role.ADMINISTRATOR) {
    throw new OrganizationAdministratorRequiredError();
  }
}

/** POST /users: administrators whose account has `can_create_users`. */
export function checkCanCreateUsers<U extends Actor>(user: U | undefined): asserts user is U {
  checkRealmAdministrator(user);
  if (!user.can_create_users) throw new JsonableError('User not authorized to create users');
}
