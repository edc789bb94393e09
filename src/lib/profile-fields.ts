/**
 * Custom profile fields: what an administrator may define (name, hint, type, field_data) and what
 * a user may store as a value for each field type, with the reference's error messages. Pure:
 * the realm's users come in through a lookup. Reference: views/custom_profile_fields.py
 * (validate_custom_profile_field), lib/validator.py (check_short_string, check_long_string,
 * check_date, check_url, validate_select_field_data, validate_select_field),
 * lib/external_accounts.py and models/custom_profile_fields.py (check_valid_user_ids).
 */
import { JsonableError } from './errors.js';
import { longerThan } from './strings.js';

export const ProfileFieldType = {
  SHORT_TEXT: 1,
  LONG_TEXT: 2,
  SELECT: 3,
  DATE: 4,
  URL: 5,
  USER: 6,
  EXTERNAL_ACCOUNT: 7,
  PRONOUNS: 8,
} as const;

export const PROFILE_FIELD_TYPES: readonly number[] = Object.values(ProfileFieldType);

export const PROFILE_FIELD_NAME_MAX_LENGTH = 40;
export const PROFILE_FIELD_HINT_MAX_LENGTH = 80;
export const MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS = 2;
const SHORT_TEXT_MAX_LENGTH = 50;
const LONG_TEXT_MAX_LENGTH = 500;

/** The external account types a field of type 7 can name instead of a custom URL pattern. */
export const DEFAULT_EXTERNAL_ACCOUNT_FIELDS: Readonly<
  Record<string, { name: string; hint: string; url_pattern: string }>
> = {
  github: {
    name: 'GitHub',
    hint: 'Enter your GitHub username',
    url_pattern: 'https://github.com/%(username)s',
  },
  twitter: {
    name: 'X',
    hint: 'Enter your X (Twitter) username',
    url_pattern: 'https://x.com/%(username)s',
  },
};

/** Types whose values are markdown, rendered to `rendered_value` (the reference's is_renderable). */
export function isRenderableFieldType(type: number): boolean {
  return type === ProfileFieldType.SHORT_TEXT || type === ProfileFieldType.LONG_TEXT;
}

/** field_data as a client sends it: option id → {text, order} (lists) or strings (external). */
export type FieldData = Record<string, unknown>;

const fail = (msg: string): never => {
  throw new JsonableError(msg);
};

/** The shape check of the reference's check_profile_field_data (dict of strings or dicts of strings). */
export function checkFieldDataShape(raw: unknown): FieldData {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    fail('field_data is not a dict');
  const data = raw as Record<string, unknown>;
  for (const value of Object.values(data)) {
    if (typeof value === 'string') continue;
    const ok =
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      Object.values(value).every((v) => typeof v === 'string');
    if (!ok) fail('field_data contains a value that is not an allowed_type');
  }
  return data;
}

/** Whether a URL is one the reference's URL validator accepts (http(s)/ftp(s), a host). */
export function isValidUrl(s: string): boolean {
  if (longerThan(s, 2048) || /\s/.test(s)) return false;
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return false;
  }
  if (!['http:', 'https:', 'ftp:', 'ftps:'].includes(u.protocol)) return false;
  const host = u.hostname;
  if (host === '') return false;
  return (
    host === 'localhost' ||
    /^\[[0-9a-f:.]+\]$/i.test(host) ||
    /^\d{1,3}(\.\d{1,3}){3}$/.test(host) ||
    /^([a-z0-9\u00a1-\uffff]([a-z0-9\u00a1-\uffff-]{0,61}[a-z0-9\u00a1-\uffff])?\.)+[a-z\u00a1-\uffff-]{2,63}\.?$/i.test(
      host,
    )
  );
}

function checkSelectFieldData(data: FieldData): void {
  if (Object.keys(data).length < 1) fail('Field must have at least one choice.');
  const texts = new Set<string>();
  for (const [key, option] of Object.entries(data)) {
    if (key.trim() === '') fail("'value' cannot be blank.");
    if (typeof option !== 'object' || option === null) fail('field_data is not a dict');
    const o = option as Record<string, string>;
    for (const k of ['text', 'order']) {
      if (!(k in o)) fail(`${k} key is missing from field_data`);
      if (o[k]!.trim() === '') fail(`field_data["${k}"] cannot be blank.`);
    }
    const extra = Object.keys(o).filter((k) => k !== 'text' && k !== 'order');
    if (extra.length > 0) fail(`Unexpected arguments: ${extra.join(', ')}`);
    texts.add(o.text!);
  }
  if (texts.size !== Object.keys(data).length) fail('Field must not have duplicate choices.');
}

function checkExternalAccountFieldData(data: FieldData): void {
  if (!('subtype' in data)) fail('subtype key is missing from field_data');
  const subtype = data.subtype;
  if (typeof subtype !== 'string') fail('field_data["subtype"] is not a string');
  if ((subtype as string).trim() === '') fail('field_data["subtype"] cannot be blank.');
  if ('url_pattern' in data) {
    const pattern = data.url_pattern;
    if (typeof pattern !== 'string') fail('field_data["url_pattern"] is not a string');
    const p = pattern as string;
    if (p.split('%(username)s').length !== 2) fail("URL pattern must contain '%(username)s'.");
    if (!isValidUrl(p.replace('%(username)s', 'username')))
      fail('field_data["url_pattern"] is not a URL');
  }
  const extra = Object.keys(data).filter((k) => k !== 'subtype' && k !== 'url_pattern');
  if (extra.length > 0) fail(`Unexpected arguments: ${extra.join(', ')}`);
  if (!Object.hasOwn(DEFAULT_EXTERNAL_ACCOUNT_FIELDS, subtype as string)) {
    if (subtype === 'custom') {
      if (!('url_pattern' in data)) fail('Custom external account must define URL pattern');
    } else {
      fail('Invalid external account type');
    }
  }
}

/** Whether a field of type 7 names one of the default external accounts (not `custom`). */
export function isDefaultExternalField(type: number, data: FieldData): boolean {
  return type === ProfileFieldType.EXTERNAL_ACCOUNT && data.subtype !== 'custom';
}

/**
 * The reference's validate_custom_profile_field: field_data for lists and external accounts, then
 * the label and hint (not for a default external account, whose label comes from the server),
 * the type, and whether the type may be shown in profile summaries.
 */
export function validateProfileField(f: {
  name: string;
  hint: string;
  type: number;
  field_data: FieldData;
  display_in_profile_summary: boolean;
}): void {
  if (f.type === ProfileFieldType.SELECT) checkSelectFieldData(f.field_data);
  else if (f.type === ProfileFieldType.EXTERNAL_ACCOUNT)
    checkExternalAccountFieldData(f.field_data);
  if (!isDefaultExternalField(f.type, f.field_data)) {
    if (f.name.trim() === '') fail('Label cannot be blank.');
    if (longerThan(f.hint, PROFILE_FIELD_HINT_MAX_LENGTH))
      fail(`hint is too long (limit: ${PROFILE_FIELD_HINT_MAX_LENGTH} characters)`);
    if (longerThan(f.name, PROFILE_FIELD_NAME_MAX_LENGTH))
      fail(`name is too long (limit: ${PROFILE_FIELD_NAME_MAX_LENGTH} characters)`);
  }
  if (!PROFILE_FIELD_TYPES.includes(f.type)) fail('Invalid field type.');
  if (
    f.display_in_profile_summary &&
    (f.type === ProfileFieldType.LONG_TEXT || f.type === ProfileFieldType.USER)
  )
    fail('Field type not supported for display in profile summary.');
}

/** What value validation needs to know about the realm's users. */
export interface ProfileUserLookup {
  user(id: number): { is_active: number; is_bot: number } | undefined;
}

function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1) return false;
  const date = new Date(Date.UTC(y, mo - 1, d));
  if (y < 100) date.setUTCFullYear(y);
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/**
 * Checks a value a user sends for a field and returns it as stored (a string; the user ids of a
 * person-picker field as JSON). `name` is the field's label, which the reference's messages use
 * as the variable name.
 */
export function validateProfileValue(
  field: { name: string; type: number; field_data: string },
  value: unknown,
  users: ProfileUserLookup,
): string {
  const name = field.name;
  const str = (max?: number): string => {
    if (typeof value !== 'string') return fail(`${name} is not a string`);
    if (max !== undefined && longerThan(value, max))
      fail(`${name} is too long (limit: ${max} characters)`);
    return value;
  };
  switch (field.type) {
    case ProfileFieldType.SHORT_TEXT:
    case ProfileFieldType.EXTERNAL_ACCOUNT:
    case ProfileFieldType.PRONOUNS:
      return str(SHORT_TEXT_MAX_LENGTH);
    case ProfileFieldType.LONG_TEXT:
      return str(LONG_TEXT_MAX_LENGTH);
    case ProfileFieldType.DATE: {
      const s = str();
      if (!isDate(s)) fail(`${name} is not a date`);
      return s;
    }
    case ProfileFieldType.URL: {
      const s = str();
      if (!isValidUrl(s)) fail(`${name} is not a URL`);
      return s;
    }
    case ProfileFieldType.SELECT: {
      const s = str();
      const options = field.field_data === '' ? {} : (JSON.parse(field.field_data) as FieldData);
      if (!Object.hasOwn(options, s)) fail(`'${s}' is not a valid choice for '${name}'.`);
      return s;
    }
    case ProfileFieldType.USER: {
      if (!Array.isArray(value)) return fail('User IDs is not a list');
      value.forEach((id, i) => {
        if (typeof id !== 'number' || !Number.isInteger(id))
          fail(`User IDs[${i}] is not an integer`);
      });
      const ids = value as number[];
      const invalid = ids.filter((id) => users.user(id) === undefined);
      if (invalid.length > 0) fail(`Invalid user IDs: ${invalid.join(', ')}`);
      for (const id of ids) {
        const u = users.user(id)!;
        if (!u.is_active) fail(`User with ID ${id} is deactivated`);
        if (u.is_bot) fail(`User with ID ${id} is a bot`);
      }
      return JSON.stringify(ids);
    }
    default:
      return fail('Invalid field type.');
  }
}
