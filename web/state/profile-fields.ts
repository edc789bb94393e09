/**
 * Custom profile fields, as the reference's web app shows and edits them: what a person's card
 * shows of their values (the summary fields, or all of them for the full profile; pronouns after
 * the name), the values a person edits in their settings (a choice's options, a person field's
 * ids, what to send and what to clear), and what an administrator's form sends to define a field
 * (its choices, an external account's kind and URL pattern) and to reorder them. Plain data: the
 * views draw it, the tests check it.
 */
import type { CustomProfileField, ProfileData, User } from '../../src/client/types.js';
import { ProfileFieldType } from '../../src/lib/profile-fields.js';

/** The field types, by the API's values (the server's table). */
export const FieldType = ProfileFieldType;

/** The types an administrator picks from, by name as the reference lists them. */
export const FIELD_TYPE_NAMES: readonly [number, string][] = [
  [FieldType.SHORT_TEXT, 'Text (short)'],
  [FieldType.LONG_TEXT, 'Text (long)'],
  [FieldType.SELECT, 'List of options'],
  [FieldType.DATE, 'Date'],
  [FieldType.URL, 'Link'],
  [FieldType.USER, 'Users'],
  [FieldType.EXTERNAL_ACCOUNT, 'External account'],
  [FieldType.PRONOUNS, 'Pronouns'],
];

export function typeName(type: number): string {
  return FIELD_TYPE_NAMES.find(([t]) => t === type)?.[1] ?? 'Unknown type';
}

/** Types that may not be shown on the card (the server refuses them there). */
export function summaryAllowed(type: number): boolean {
  return type !== FieldType.LONG_TEXT && type !== FieldType.USER;
}

/** How many fields the card may show at most (the server's limit). */
export const MAX_SUMMARY_FIELDS = 2;

/** The realm's external account kinds (register's `realm_default_external_accounts`). */
export type ExternalKinds = Record<string, { name?: string; text?: string; url_pattern: string }>;

/** The kinds this app knows when the server names none. */
export const KNOWN_EXTERNAL: ExternalKinds = {
  github: { text: 'GitHub', url_pattern: 'https://github.com/%(username)s' },
  twitter: { text: 'X (Twitter)', url_pattern: 'https://x.com/%(username)s' },
};

function parseData(field: CustomProfileField): Record<string, unknown> {
  if (field.field_data === '') return {};
  try {
    const d: unknown = JSON.parse(field.field_data);
    return typeof d === 'object' && d !== null && !Array.isArray(d)
      ? (d as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

export type Choice = { id: string; text: string };

/** A choice field's options, in their order. */
export function choicesOf(field: CustomProfileField): Choice[] {
  return Object.entries(parseData(field))
    .map(([id, o]) => {
      const opt = (typeof o === 'object' && o !== null ? o : {}) as Record<string, unknown>;
      return {
        id,
        text: typeof opt.text === 'string' ? opt.text : id,
        order: Number(opt.order ?? 0),
      };
    })
    .sort((a, b) => a.order - b.order || a.id.localeCompare(b.id))
    .map(({ id, text }) => ({ id, text }));
}

/** An external account field's kind (`github`, `twitter`, `custom`) and custom URL pattern. */
export function externalOf(field: CustomProfileField): { subtype: string; urlPattern: string } {
  const d = parseData(field);
  return {
    subtype: typeof d.subtype === 'string' ? d.subtype : '',
    urlPattern: typeof d.url_pattern === 'string' ? d.url_pattern : '',
  };
}

/** The address of an account: the field's pattern (or its kind's) with the username in it. */
export function externalLink(
  field: CustomProfileField,
  username: string,
  kinds: ExternalKinds = KNOWN_EXTERNAL,
): string | undefined {
  const { subtype, urlPattern } = externalOf(field);
  const pattern =
    subtype === 'custom'
      ? urlPattern
      : ((Object.hasOwn(kinds, subtype) ? kinds[subtype]?.url_pattern : undefined) ??
        (Object.hasOwn(KNOWN_EXTERNAL, subtype) ? KNOWN_EXTERNAL[subtype]?.url_pattern : ''));
  if (!pattern || !pattern.includes('%(username)s')) return undefined;
  return pattern.replace('%(username)s', encodeURIComponent(username));
}

/** A person field's value: the ids it names (none for a value that is not such a list). */
export function personIds(value: string): number[] {
  try {
    const v: unknown = JSON.parse(value);
    return Array.isArray(v) ? v.filter((x): x is number => Number.isInteger(x)) : [];
  } catch {
    return [];
  }
}

const dateFormat = new Intl.DateTimeFormat('en-US', {
  month: 'short',
  day: 'numeric',
  year: 'numeric',
  timeZone: 'UTC',
});

/** A date value (`2026-12-06`) as the card shows it (`Dec 6, 2026`); as it is if not a date. */
export function formatDate(value: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return value;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return Number.isNaN(d.getTime()) ? value : dateFormat.format(d);
}

/** What the card shows of one field's value. */
export type FieldShown = { id: number; name: string; type: number } & (
  | { kind: 'text'; text: string }
  | { kind: 'html'; html: string }
  | { kind: 'link'; text: string; href: string }
  | { kind: 'people'; ids: number[] }
);

function shown(
  field: CustomProfileField,
  entry: { value: string; rendered_value?: string | null },
  kinds: ExternalKinds,
): FieldShown | undefined {
  const base = { id: field.id, name: field.name, type: field.type };
  const value = entry.value;
  switch (field.type) {
    case FieldType.SHORT_TEXT:
    case FieldType.LONG_TEXT:
      return entry.rendered_value
        ? { ...base, kind: 'html', html: entry.rendered_value }
        : { ...base, kind: 'text', text: value };
    case FieldType.SELECT: {
      const choice = choicesOf(field).find((o) => o.id === value);
      return choice ? { ...base, kind: 'text', text: choice.text } : undefined;
    }
    case FieldType.DATE:
      return { ...base, kind: 'text', text: formatDate(value) };
    case FieldType.URL:
      return /^(https?|ftps?):\/\//i.test(value)
        ? { ...base, kind: 'link', text: value, href: value }
        : { ...base, kind: 'text', text: value };
    case FieldType.USER: {
      const ids = personIds(value);
      return ids.length ? { ...base, kind: 'people', ids } : undefined;
    }
    case FieldType.EXTERNAL_ACCOUNT: {
      const href = externalLink(field, value, kinds);
      return href
        ? { ...base, kind: 'link', text: value, href }
        : { ...base, kind: 'text', text: value };
    }
    default:
      return { ...base, kind: 'text', text: value };
  }
}

/**
 * A person's fields for their card: the pronouns (every pronouns field with a value, joined), and
 * the other fields with a value in the realm's order — only those shown in the profile summary,
 * unless `all` (the full profile, where the reference shows every field a person filled in).
 */
export function cardFields(
  user: Pick<User, 'profile_data' | 'is_bot'>,
  fields: readonly CustomProfileField[],
  opts: { all: boolean; kinds?: ExternalKinds },
): { pronouns: string | undefined; fields: FieldShown[]; more: boolean } {
  const data = user.profile_data ?? {};
  const kinds = opts.kinds ?? KNOWN_EXTERNAL;
  const pronouns: string[] = [];
  const out: FieldShown[] = [];
  let more = false;
  for (const f of [...fields].sort((a, b) => a.order - b.order)) {
    const entry = data[String(f.id)];
    if (!entry || entry.value === '' || entry.value === null) continue;
    if (f.type === FieldType.PRONOUNS) {
      pronouns.push(entry.value);
      continue;
    }
    const s = shown(f, entry, kinds);
    if (!s) continue;
    if (opts.all || f.display_in_profile_summary) out.push(s);
    else more = true;
  }
  return { pronouns: pronouns.length ? pronouns.join(', ') : undefined, fields: out, more };
}

export { withValue } from './profile-data.js';

// ---- a person's own values --------------------------------------------------------------------

/** What the settings form holds for a field: the text typed (or option id, date), or the ids. */
export type Entry = string | number[];

/** The form's starting value for each field, from the person's profile data. */
export function entriesOf(
  fields: readonly CustomProfileField[],
  data: ProfileData | undefined,
): Map<number, Entry> {
  const out = new Map<number, Entry>();
  for (const f of fields) {
    const v = data?.[String(f.id)]?.value ?? '';
    out.set(f.id, f.type === FieldType.USER ? personIds(v) : v);
  }
  return out;
}

const isEmpty = (e: Entry) => (typeof e === 'string' ? e.trim() === '' : e.length === 0);
const same = (a: Entry, b: Entry) => JSON.stringify(a) === JSON.stringify(b);

/**
 * What saving the form sends: the values changed (PATCH /users/me/profile_data `data`) and the
 * fields emptied (DELETE /users/me/profile_data `data`, the API's way to clear a value). Text is
 * sent as typed but for the spaces around it.
 */
export function changesOf(
  fields: readonly CustomProfileField[],
  before: ReadonlyMap<number, Entry>,
  now: ReadonlyMap<number, Entry>,
): { update: { id: number; value: Entry }[]; remove: number[] } {
  const update: { id: number; value: Entry }[] = [];
  const remove: number[] = [];
  for (const f of fields) {
    const was = before.get(f.id) ?? '';
    const is = now.get(f.id) ?? '';
    const value = typeof is === 'string' ? is.trim() : is;
    if (same(value, typeof was === 'string' ? was.trim() : was)) continue;
    if (isEmpty(value)) {
      if (!isEmpty(was)) remove.push(f.id);
    } else update.push({ id: f.id, value });
  }
  return { update, remove };
}

/** The required fields left empty, by name (the reference marks them; the form says which). */
export function missingRequired(
  fields: readonly CustomProfileField[],
  now: ReadonlyMap<number, Entry>,
): string[] {
  return fields.filter((f) => f.required && isEmpty(now.get(f.id) ?? '')).map((f) => f.name);
}

// ---- an administrator's form ------------------------------------------------------------------

/** What the form to define a field holds. */
export type FieldDraft = {
  name: string;
  hint: string;
  type: number;
  /** A choice field's options, in order (an existing option keeps its id). */
  choices: { id?: string; text: string }[];
  /** An external account's kind, and a custom kind's URL pattern. */
  subtype: string;
  urlPattern: string;
  summary: boolean;
  required: boolean;
  editableByUser: boolean;
};

export function emptyDraft(): FieldDraft {
  return {
    name: '',
    hint: '',
    type: FieldType.SHORT_TEXT,
    choices: [{ text: '' }],
    subtype: 'github',
    urlPattern: '',
    summary: false,
    required: false,
    editableByUser: true,
  };
}

export function draftOf(field: CustomProfileField): FieldDraft {
  const ext = externalOf(field);
  const choices = choicesOf(field);
  return {
    name: field.name,
    hint: field.hint,
    type: field.type,
    choices: choices.length ? choices : [{ text: '' }],
    subtype: ext.subtype || 'github',
    urlPattern: ext.urlPattern,
    summary: field.display_in_profile_summary === true,
    required: field.required === true,
    editableByUser: field.editable_by_user !== false,
  };
}

/** Whether a draft names a default external account (its name and hint are the server's). */
export function isDefaultExternal(d: Pick<FieldDraft, 'type' | 'subtype'>): boolean {
  return d.type === FieldType.EXTERNAL_ACCOUNT && d.subtype !== 'custom';
}

/** field_data as the API takes it for a draft, or undefined for a type that has none. */
export function fieldDataOf(d: FieldDraft): Record<string, unknown> | undefined {
  if (d.type === FieldType.SELECT) {
    const taken = new Set(d.choices.map((c) => c.id).filter((id) => id !== undefined));
    let next = 0;
    const data: Record<string, { text: string; order: string }> = {};
    d.choices
      .filter((c) => c.text.trim() !== '')
      .forEach((c, i) => {
        let id = c.id;
        if (id === undefined) {
          while (taken.has(String(next))) next++;
          id = String(next);
          taken.add(id);
        }
        data[id] = { text: c.text.trim(), order: String(i + 1) };
      });
    return data;
  }
  if (d.type === FieldType.EXTERNAL_ACCOUNT) {
    return d.subtype === 'custom'
      ? { subtype: 'custom', url_pattern: d.urlPattern.trim() }
      : { subtype: d.subtype };
  }
  return undefined;
}

/** What the form can tell before asking the server (the server checks the rest). */
export function draftProblem(d: FieldDraft): string | null {
  if (!isDefaultExternal(d) && d.name.trim() === '') return 'Enter a name for the field.';
  if (d.type === FieldType.SELECT) {
    const texts = d.choices.map((c) => c.text.trim()).filter((t) => t !== '');
    if (texts.length === 0) return 'Add at least one choice.';
    if (new Set(texts).size !== texts.length) return 'Each choice must be different.';
  }
  if (d.type === FieldType.EXTERNAL_ACCOUNT && d.subtype === 'custom') {
    if (!d.urlPattern.includes('%(username)s')) return 'The URL pattern must contain %(username)s.';
  }
  return null;
}

/** POST /realm/profile_fields's parameters for a draft. */
export function createParams(d: FieldDraft): Record<string, unknown> {
  const data = fieldDataOf(d);
  return {
    ...(isDefaultExternal(d) ? {} : { name: d.name.trim(), hint: d.hint.trim() }),
    field_type: d.type,
    ...(data ? { field_data: JSON.stringify(data) } : {}),
    display_in_profile_summary: d.summary && summaryAllowed(d.type),
    required: d.required,
    editable_by_user: d.editableByUser,
  };
}

/** PATCH /realm/profile_fields/{id}'s parameters: what the draft changes of the field. */
export function updateParams(field: CustomProfileField, d: FieldDraft): Record<string, unknown> {
  const was = draftOf(field);
  const out: Record<string, unknown> = {};
  if (!isDefaultExternal(was)) {
    if (d.name.trim() !== field.name) out.name = d.name.trim();
    if (d.hint.trim() !== field.hint) out.hint = d.hint.trim();
    const data = fieldDataOf({ ...d, type: field.type });
    if (data && JSON.stringify(data) !== JSON.stringify(fieldDataOf(was)))
      out.field_data = JSON.stringify(data);
  }
  const summary = d.summary && summaryAllowed(field.type);
  if (summary !== was.summary) out.display_in_profile_summary = summary;
  if (d.required !== was.required) out.required = d.required;
  if (d.editableByUser !== was.editableByUser) out.editable_by_user = d.editableByUser;
  return out;
}

/** The fields' ids in order with one moved up (-1) or down (+1); unchanged at either end. */
export function movedOrder(
  fields: readonly CustomProfileField[],
  id: number,
  by: -1 | 1,
): number[] {
  const ids = [...fields].sort((a, b) => a.order - b.order).map((f) => f.id);
  const at = ids.indexOf(id);
  const to = at + by;
  if (at < 0 || to < 0 || to >= ids.length) return ids;
  [ids[at], ids[to]] = [ids[to]!, ids[at]!];
  return ids;
}

/** Whether another field may be put on the card (the server allows two). */
export function summaryFull(fields: readonly CustomProfileField[], exceptId?: number): boolean {
  return (
    fields.filter((f) => f.display_in_profile_summary && f.id !== exceptId).length >=
    MAX_SUMMARY_FIELDS
  );
}
