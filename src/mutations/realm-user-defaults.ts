/**
 * The realm's defaults for new users' personal settings (PATCH /realm/user_settings_defaults).
 * Reference: views/realm.py update_realm_user_settings_defaults, actions/realm_settings.py
 * do_set_realm_user_default_setting. Stored like a user's settings: only the values that differ
 * from the server's defaults. New accounts start from them (insertUserRow, src/mutations/users.ts).
 * Each changed value is one `realm_user_settings_defaults` event to every active user.
 */
import {
  USER_SETTING_DEFAULTS,
  type UserSettingName,
  type UserSettings,
} from '../lib/user-settings.js';
import { checkRealmAdministrator } from '../lib/user-rules.js';
import type { MutationContext } from './context.js';

export type UpdateRealmUserDefaultsCommand = {
  acting_user_id: number;
  settings: Partial<UserSettings>;
};

export function checkUpdateRealmUserDefaults(
  ctx: MutationContext,
  cmd: UpdateRealmUserDefaultsCommand,
): UpdateRealmUserDefaultsCommand {
  checkRealmAdministrator(ctx.realm.user(cmd.acting_user_id));
  return cmd;
}

export function doUpdateRealmUserDefaults(
  ctx: MutationContext,
  cmd: UpdateRealmUserDefaultsCommand,
): Record<string, never> {
  const { store, realm } = ctx;
  const stored = JSON.parse(store.realmUserDefaults.get(realm.id)) as Partial<
    Record<UserSettingName, unknown>
  >;
  const current: Record<string, unknown> = { ...USER_SETTING_DEFAULTS, ...stored };
  const recipients = realm.activeUsers().map((u) => u.id);
  let changed = false;
  for (const [name, value] of Object.entries(cmd.settings) as [UserSettingName, unknown][]) {
    if (value === undefined || current[name] === value) continue;
    if (USER_SETTING_DEFAULTS[name] === value) delete stored[name];
    else stored[name] = value;
    changed = true;
    ctx.emit(
      { type: 'realm_user_settings_defaults', op: 'update', property: name, value },
      recipients,
    );
  }
  if (changed) store.realmUserDefaults.put(realm.id, JSON.stringify(stored));
  return {};
}
