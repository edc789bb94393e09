/**
 * The realm's icon: an administrator's uploaded one (the endpoint has stored the image under a
 * fresh name) or back to the default. Reference: views/realm_icon.py, actions/realm_icon.py
 * do_change_icon_source. Stored as realm settings (icon_source, icon_file), so everyone gets the
 * reference's `realm` update_dict `icon` event from realm.update_settings (./realm-settings.ts).
 */
import { OrganizationAdministratorRequiredError } from '../lib/errors.js';
import { Role } from '../lib/roles.js';
import type { MutationContext } from './context.js';
import { actingUser } from './context.js';
import {
  checkUpdateRealmSettings,
  doUpdateRealmSettings,
  emitRealmIcon,
  type RealmSettingsPlan,
} from './realm-settings.js';

export type SetRealmIconCommand = {
  acting_user_id: number;
  /** The stored icon's file name; null: back to the default icon. */
  icon_file: string | null;
};

type CheckedSetRealmIcon = { plan: RealmSettingsPlan; previousFile: string };

export function checkSetRealmIcon(
  ctx: MutationContext,
  cmd: SetRealmIconCommand,
): CheckedSetRealmIcon {
  const { realm } = ctx;
  const user = actingUser(realm, cmd.acting_user_id);
  if (user.role > Role.ADMINISTRATOR) throw new OrganizationAdministratorRequiredError();
  const settings =
    cmd.icon_file === null
      ? { icon_source: 'G', icon_file: '' }
      : { icon_source: 'U', icon_file: cmd.icon_file };
  return {
    plan: checkUpdateRealmSettings(ctx, { acting_user_id: cmd.acting_user_id, settings }),
    previousFile: realm.settings.icon_file,
  };
}

/**
 * Stores the icon change; answers the file the realm no longer uses ('' when none), for the
 * endpoint to remove once committed.
 */
export function doSetRealmIcon(
  ctx: MutationContext,
  checked: CheckedSetRealmIcon,
): { replaced_file: string } {
  doUpdateRealmSettings(ctx, checked.plan);
  // Deleting the icon of a realm that has the default still tells everyone, as the reference's
  // do_change_icon_source does for every call (it bumps icon_version each time).
  if (checked.plan.changes.size === 0) emitRealmIcon(ctx, checked.plan.current);
  const now = checked.plan.current.icon_file;
  return { replaced_file: checked.previousFile !== now ? checked.previousFile : '' };
}
