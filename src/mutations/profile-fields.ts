/**
 * Custom profile fields and users' values for them. Reference: actions/custom_profile_fields.py,
 * views/custom_profile_fields.py, lib/users.py (validate_user_custom_profile_data).
 *
 * Every change to the fields reaches everyone as one `custom_profile_fields` event carrying the
 * whole list; a changed value reaches everyone as a `realm_user` `update` with
 * `custom_profile_field` ({id, value, rendered_value} — value null when removed). Markdown values
 * (short and long text) are rendered before the command (it carries rendered_value).
 */
import {
  InsufficientPermissionError,
  JsonableError,
  NoSuchUserError,
  OrganizationAdministratorRequiredError,
} from '../lib/errors.js';
import {
  DEFAULT_EXTERNAL_ACCOUNT_FIELDS,
  isDefaultExternalField,
  isRenderableFieldType,
  MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS,
  ProfileFieldType,
  validateProfileField,
  validateProfileValue,
  type FieldData,
} from '../lib/profile-fields.js';
import { Role } from '../lib/roles.js';
import { formatProfileField } from '../queries/profile-fields.js';
import type { CustomProfileFieldRow, UserRow } from '../storage/users.js';
import { actingUser, type MutationContext } from './context.js';

export { formatProfileField };

const notFound = (id: number) => new JsonableError(`Field id ${id} not found.`);

function notifyFields(ctx: MutationContext): void {
  const { store, realm } = ctx;
  ctx.emit(
    {
      type: 'custom_profile_fields',
      fields: store.users.profileFieldsByRealm(realm.id).map(formatProfileField),
    },
    realm.activeUsers().map((u) => u.id),
  );
  ctx.afterCommit(() => realm.invalidateProfiles());
}

function fieldOf(ctx: MutationContext, id: number): CustomProfileFieldRow {
  const f = ctx.store.users.profileFieldById(id);
  if (!f || f.realm_id !== ctx.realm.id) throw notFound(id);
  return f;
}

function parseFieldData(f: CustomProfileFieldRow): FieldData {
  return f.field_data === '' ? {} : (JSON.parse(f.field_data) as FieldData);
}

function checkAdmin(ctx: MutationContext, userId: number | null): void {
  if (userId === null) return;
  const u = ctx.realm.user(userId);
  if (!u || !u.is_active || u.role > Role.ADMINISTRATOR)
    throw new OrganizationAdministratorRequiredError();
}

function summaryLimitReached(ctx: MutationContext, exceptFieldId: number | null): boolean {
  const shown = ctx.store.users
    .profileFieldsByRealm(ctx.realm.id)
    .filter((f) => f.display_in_profile_summary && f.id !== exceptFieldId);
  return shown.length >= MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS;
}

const SUMMARY_LIMIT_MESSAGE = `Only ${MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS} custom profile fields can be displayed in the profile summary.`;

// ---- create -----------------------------------------------------------------------------------

export type CreateProfileFieldCommand = {
  /** null: an administrative tool (no permission check). */
  acting_user_id?: number | null;
  name: string;
  hint: string;
  type: number;
  field_data: FieldData;
  display_in_profile_summary: boolean;
  required: boolean;
  editable_by_user: boolean;
};

/** The field a checked POST /realm/profile_fields creates. */
export type NewProfileField = {
  name: string;
  hint: string;
  field_data: string;
  type: number;
  display_in_profile_summary: boolean;
  required: boolean;
  editable_by_user: boolean;
};

export function checkCreateProfileField(
  ctx: MutationContext,
  cmd: CreateProfileFieldCommand,
): NewProfileField {
  const { store, realm } = ctx;
  checkAdmin(ctx, cmd.acting_user_id ?? null);
  const name = cmd.name.trim();
  if (cmd.display_in_profile_summary && summaryLimitReached(ctx, null))
    throw new JsonableError(SUMMARY_LIMIT_MESSAGE);
  validateProfileField({ ...cmd, name });
  let row: { name: string; hint: string; field_data: string };
  if (isDefaultExternalField(cmd.type, cmd.field_data)) {
    // A default external account takes its label and hint from the server.
    const subtype = String(cmd.field_data.subtype);
    const d = DEFAULT_EXTERNAL_ACCOUNT_FIELDS[subtype]!;
    row = { name: d.name, hint: d.hint, field_data: JSON.stringify({ subtype }) };
  } else {
    const keepsData =
      cmd.type === ProfileFieldType.SELECT || cmd.type === ProfileFieldType.EXTERNAL_ACCOUNT;
    row = { name, hint: cmd.hint, field_data: keepsData ? JSON.stringify(cmd.field_data) : '' };
  }
  if (store.users.profileFieldsByRealm(realm.id).some((f) => f.name === row.name)) {
    throw new JsonableError('A field with that label already exists.');
  }
  return {
    ...row,
    type: cmd.type,
    display_in_profile_summary: cmd.display_in_profile_summary,
    required: cmd.required,
    editable_by_user: cmd.editable_by_user,
  };
}

export function doCreateProfileField(ctx: MutationContext, f: NewProfileField): { id: number } {
  const { store, realm } = ctx;
  const id = store.users.insertProfileField({
    realm_id: realm.id,
    name: f.name,
    hint: f.hint,
    field_data: f.field_data,
    type: f.type,
    sort_order: 0,
    display_in_profile_summary: f.display_in_profile_summary ? 1 : 0,
    required: f.required ? 1 : 0,
    editable_by_user: f.editable_by_user ? 1 : 0,
  });
  // As the reference: a new field goes last, its order being its id.
  store.users.setProfileFieldOrder(id, id);
  notifyFields(ctx);
  return { id };
}

// ---- update -----------------------------------------------------------------------------------

export type UpdateProfileFieldCommand = {
  acting_user_id: number;
  field_id: number;
  name?: string;
  hint?: string;
  field_data?: FieldData;
  display_in_profile_summary?: boolean;
  required?: boolean;
  editable_by_user?: boolean;
};

/** What a checked PATCH /realm/profile_fields/{id} changes. */
export type ProfileFieldUpdate = {
  /** The field's row as it is now, with the values it will have. */
  row: CustomProfileFieldRow;
  /** The users' values (of a select field) whose option no longer exists, to remove. */
  lost: { user_id: number; value: string }[];
};

export function checkUpdateProfileField(
  ctx: MutationContext,
  cmd: UpdateProfileFieldCommand,
): ProfileFieldUpdate {
  const { store, realm } = ctx;
  checkAdmin(ctx, cmd.acting_user_id);
  const field = fieldOf(ctx, cmd.field_id);
  const name = cmd.name?.trim();
  if (cmd.display_in_profile_summary && summaryLimitReached(ctx, field.id))
    throw new JsonableError(SUMMARY_LIMIT_MESSAGE);
  const currentData = parseFieldData(field);
  if (isDefaultExternalField(field.type, currentData)) {
    // Only display_in_profile_summary (and required/editable) may change on a default one.
    const changes =
      (name !== undefined && name !== field.name) ||
      (cmd.hint !== undefined && cmd.hint !== field.hint) ||
      (cmd.field_data !== undefined &&
        JSON.stringify(cmd.field_data) !== JSON.stringify(currentData));
    if (changes) throw new JsonableError('Default custom field cannot be updated.');
  }
  const next = {
    name: name ?? field.name,
    hint: cmd.hint ?? field.hint,
    type: field.type,
    field_data: cmd.field_data ?? currentData,
    display_in_profile_summary:
      cmd.display_in_profile_summary ?? field.display_in_profile_summary === 1,
  };
  validateProfileField(next);
  if (
    next.name !== field.name &&
    store.users.profileFieldsByRealm(realm.id).some((f) => f.name === next.name)
  ) {
    throw new JsonableError('A field with that label already exists.');
  }
  let fieldData = field.field_data;
  let lost: { user_id: number; value: string }[] = [];
  if (field.type === ProfileFieldType.SELECT || field.type === ProfileFieldType.EXTERNAL_ACCOUNT) {
    if (cmd.field_data !== undefined && field.type === ProfileFieldType.SELECT) {
      // Users who had chosen an option that no longer exists lose their value; unlike the
      // reference, everyone is told, so clients do not keep showing the removed option.
      const options = cmd.field_data;
      lost = store.users
        .profileValuesByField(field.id)
        .filter((v) => !Object.hasOwn(options, v.value))
        .map((v) => ({ user_id: v.user_id, value: v.value }));
    }
    if (cmd.field_data !== undefined || field.field_data === '')
      fieldData = JSON.stringify(cmd.field_data ?? {});
  }
  return {
    row: {
      ...field,
      name: next.name,
      hint: next.hint,
      field_data: fieldData,
      display_in_profile_summary: next.display_in_profile_summary ? 1 : 0,
      required: cmd.required === undefined ? field.required : cmd.required ? 1 : 0,
      editable_by_user:
        cmd.editable_by_user === undefined ? field.editable_by_user : cmd.editable_by_user ? 1 : 0,
    },
    lost,
  };
}

export function doUpdateProfileField(
  ctx: MutationContext,
  { row, lost }: ProfileFieldUpdate,
): Record<string, never> {
  const { store, realm } = ctx;
  for (const v of lost) {
    store.users.deleteProfileValuesEqualTo(row.id, v.value);
    emitValue(ctx, v.user_id, { id: row.id, value: null });
    ctx.afterCommit(() => realm.invalidateProfiles(v.user_id));
  }
  store.users.updateProfileField({
    id: row.id,
    name: row.name,
    hint: row.hint,
    field_data: row.field_data,
    display_in_profile_summary: row.display_in_profile_summary,
    required: row.required,
    editable_by_user: row.editable_by_user,
  });
  notifyFields(ctx);
  return {};
}

// ---- delete and reorder -----------------------------------------------------------------------

export function checkDeleteProfileField(
  ctx: MutationContext,
  cmd: { acting_user_id: number; field_id: number },
): CustomProfileFieldRow {
  checkAdmin(ctx, cmd.acting_user_id);
  return fieldOf(ctx, cmd.field_id);
}

export function doDeleteProfileField(
  ctx: MutationContext,
  field: CustomProfileFieldRow,
): Record<string, never> {
  ctx.store.users.deleteProfileField(field.id);
  notifyFields(ctx);
  return {};
}

/** Each field of the realm with its new position. */
export type ProfileFieldOrder = { field_id: number; sort_order: number }[];

export function checkReorderProfileFields(
  ctx: MutationContext,
  cmd: { acting_user_id: number; order: number[] },
): ProfileFieldOrder {
  const { store, realm } = ctx;
  checkAdmin(ctx, cmd.acting_user_id);
  const position = new Map<number, number>();
  cmd.order.forEach((id, i) => position.set(id, i));
  const fields = store.users.profileFieldsByRealm(realm.id);
  for (const f of fields) {
    if (!position.has(f.id)) throw new JsonableError('Invalid order mapping.');
  }
  return fields.map((f) => ({ field_id: f.id, sort_order: position.get(f.id)! }));
}

export function doReorderProfileFields(
  ctx: MutationContext,
  order: ProfileFieldOrder,
): Record<string, never> {
  for (const o of order) ctx.store.users.setProfileFieldOrder(o.field_id, o.sort_order);
  notifyFields(ctx);
  return {};
}

// ---- users' values ----------------------------------------------------------------------------

export type ProfileDataUpdate = {
  id: number;
  /** As the client sent it: a string, or user ids for a person-picker field. */
  value: unknown;
  /** The rendered markdown of a text value (computed before the command); null otherwise. */
  rendered_value: string | null;
};

function checkEditable(actor: UserRow, field: CustomProfileFieldRow): void {
  if (actor.role > Role.ADMINISTRATOR && !field.editable_by_user) {
    throw new JsonableError(
      'You are not allowed to change this field. Contact an administrator to update it.',
    );
  }
}

function emitValue(
  ctx: MutationContext,
  userId: number,
  data: { id: number; value: string | null; rendered_value?: string | null },
): void {
  const field: Record<string, unknown> = { id: data.id, value: data.value };
  if (data.rendered_value) field.rendered_value = data.rendered_value;
  ctx.emit(
    {
      type: 'realm_user',
      op: 'update',
      person: { user_id: userId, custom_profile_field: field },
    },
    ctx.realm.activeUsers().map((u) => u.id),
  );
}

/** A value checked for its field (the reference's check_update_user_custom_profile_data). */
export type CheckedValue = { field: CustomProfileFieldRow; value: string; rendered: string | null };

/** Validates every value (all or nothing) for what `actor` may edit. */
export function checkProfileDataUpdates(
  ctx: MutationContext,
  actor: UserRow,
  updates: readonly ProfileDataUpdate[],
): CheckedValue[] {
  return updates.map((u) => {
    const field = fieldOf(ctx, u.id);
    checkEditable(actor, field);
    const value = validateProfileValue(field, u.value, ctx.realm);
    return { field, value, rendered: isRenderableFieldType(field.type) ? u.rendered_value : null };
  });
}

/** Stores the values that differ from the current ones (do_update_user_custom_profile_data_if_changed). */
export function doUpdateProfileValues(
  ctx: MutationContext,
  targetId: number,
  checked: readonly CheckedValue[],
): void {
  const { store, realm } = ctx;
  for (const { field, value, rendered } of checked) {
    const current = store.users.profileValue(targetId, field.id);
    if (current && current.value === value) continue;
    store.users.upsertProfileValue({
      user_id: targetId,
      field_id: field.id,
      value,
      rendered_value: rendered,
    });
    emitValue(ctx, targetId, { id: field.id, value, rendered_value: rendered });
  }
  ctx.afterCommit(() => realm.invalidateProfiles(targetId));
}

/** check_remove_custom_profile_field_value, for each field id: the fields `actor` may clear. */
export function checkProfileDataRemovals(
  ctx: MutationContext,
  actor: UserRow,
  fieldIds: readonly number[],
): CustomProfileFieldRow[] {
  return fieldIds.map((id) => {
    const field = fieldOf(ctx, id);
    checkEditable(actor, field);
    return field;
  });
}

export function doRemoveProfileValues(
  ctx: MutationContext,
  targetId: number,
  fields: readonly CustomProfileFieldRow[],
): void {
  for (const field of fields) {
    if (ctx.store.users.deleteProfileValue(targetId, field.id)) {
      emitValue(ctx, targetId, { id: field.id, value: null });
    }
  }
  ctx.afterCommit(() => ctx.realm.invalidateProfiles(targetId));
}

export type UpdateProfileDataCommand = {
  /** The user changing the values; defaults to `user_id` (their own profile). */
  acting_user_id?: number;
  user_id: number;
  data: ProfileDataUpdate[];
};

/** PATCH /users/me/profile_data (and administrative tools): the target and its checked values. */
export function checkUpdateProfileData(
  ctx: MutationContext,
  cmd: UpdateProfileDataCommand,
): { target_id: number; values: CheckedValue[] } {
  const actor = actingUser(ctx.realm, cmd.acting_user_id ?? cmd.user_id);
  const target = ctx.realm.user(cmd.user_id);
  if (!target) throw new NoSuchUserError();
  if (target.id !== actor.id && actor.role > Role.ADMINISTRATOR)
    throw new InsufficientPermissionError();
  return { target_id: target.id, values: checkProfileDataUpdates(ctx, actor, cmd.data) };
}

export function doUpdateProfileData(
  ctx: MutationContext,
  plan: { target_id: number; values: CheckedValue[] },
): Record<string, never> {
  doUpdateProfileValues(ctx, plan.target_id, plan.values);
  return {};
}

/** DELETE /users/me/profile_data: the fields the user may clear. */
export function checkRemoveProfileData(
  ctx: MutationContext,
  cmd: { user_id: number; field_ids: number[] },
): { target_id: number; fields: CustomProfileFieldRow[] } {
  const user = actingUser(ctx.realm, cmd.user_id);
  return { target_id: user.id, fields: checkProfileDataRemovals(ctx, user, cmd.field_ids) };
}

export function doRemoveProfileData(
  ctx: MutationContext,
  plan: { target_id: number; fields: CustomProfileFieldRow[] },
): Record<string, never> {
  doRemoveProfileValues(ctx, plan.target_id, plan.fields);
  return {};
}
