/**
 * User statuses as the API shows them (the UserStatus object): only the keys that are set; `away`
 * (deprecated) for users who turned presence sharing off. Reference: lib/user_status.py.
 */
import type { UserStatusRow } from '../storage/presence.js';
import type { ReadStore } from '../storage/store.js';
import type { RealmView } from './realm-view.js';

export type ApiUserStatus = {
  away?: true;
  status_text?: string;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
};

export function formatUserStatus(
  row: UserStatusRow | undefined,
  presenceEnabled: boolean,
): ApiUserStatus {
  const out: ApiUserStatus = {};
  if (!presenceEnabled) out.away = true;
  if (row?.status_text) out.status_text = row.status_text;
  if (row?.emoji_name) {
    out.emoji_name = row.emoji_name;
    out.emoji_code = row.emoji_code;
    out.reaction_type = row.reaction_type;
  }
  return out;
}

/** A user's status as others see it. */
export function userStatusOf(store: ReadStore, view: RealmView, userId: number): ApiUserStatus {
  return formatUserStatus(
    store.userStatus.byUser(userId),
    view.userSettings(userId).presence_enabled,
  );
}
