/**
 * A person's profile data as the chat state keeps it from `realm_user` events: a module of its
 * own, part of the first load, while the fields' shapes and forms (profile-fields.ts) load with
 * the profile card and the settings.
 */
import type { ProfileData } from '../../src/client/types.js';

/** profile_data with one value changed as a `realm_user` event says (null: removed). */
export function withValue(
  data: ProfileData | undefined,
  change: { id: number; value: string | null; rendered_value?: string | null },
): ProfileData {
  const next = { ...data };
  if (change.value === null) delete next[String(change.id)];
  else
    next[String(change.id)] = {
      value: change.value,
      ...(change.rendered_value ? { rendered_value: change.rendered_value } : {}),
    };
  return next;
}
