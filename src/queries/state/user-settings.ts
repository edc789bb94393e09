/**
 * Register snapshot: the caller's personal settings (`user_settings`), their legacy top-level copies
 * for clients without the `user_settings_object` capability (`update_display_settings`,
 * `update_global_notifications` types), and the realm's defaults for new users
 * (`realm_user_settings_defaults`). A spectator gets the defaults, in the realm's language, with
 * the recent-conversations home view (as the reference).
 */
import {
  AVAILABLE_NOTIFICATION_SOUNDS,
  DISPLAY_SETTINGS_LEGACY,
  EMOJISET_CHOICES,
  NOTIFICATION_SETTINGS_LEGACY,
  RETIRED_USER_SETTINGS,
  USER_SETTING_DEFAULTS,
  type UserSettings,
} from '../../lib/user-settings.js';
import { emojisetChoicesFor, emojisetOut, type Dialect } from '../../lib/wire-names.js';
import type { StateContributor, StateRequest } from '../initial-state.js';

function settingsOf(req: StateRequest): UserSettings {
  if (req.user) return req.realm.userSettings(req.user.id);
  return {
    ...USER_SETTING_DEFAULTS,
    default_language: req.realm.settings.default_language,
    web_home_view: 'recent_topics',
  };
}

/** The settings clients see, `emojiset` spelled in the client's dialect. */
function current(settings: UserSettings, dialect: Dialect): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(settings)) if (!RETIRED_USER_SETTINGS.has(k)) out[k] = v;
  out.emojiset = emojisetOut(settings.emojiset, dialect);
  return out;
}

function fillUserSettings(req: StateRequest, state: Record<string, unknown>): void {
  state.user_settings = {
    ...current(settingsOf(req), req.dialect),
    timezone: req.user?.timezone ?? '',
    emojiset_choices: emojisetChoicesFor(EMOJISET_CHOICES, req.dialect),
    available_notification_sounds: AVAILABLE_NOTIFICATION_SOUNDS,
  };
}

function fillLegacyDisplay(req: StateRequest, state: Record<string, unknown>): void {
  if (req.capabilities.user_settings_object) return;
  const s = settingsOf(req);
  for (const k of DISPLAY_SETTINGS_LEGACY) state[k] = s[k];
  state.emojiset = emojisetOut(s.emojiset, req.dialect);
  state.emojiset_choices = emojisetChoicesFor(EMOJISET_CHOICES, req.dialect);
  state.timezone = req.user?.timezone ?? '';
}

function fillLegacyNotifications(req: StateRequest, state: Record<string, unknown>): void {
  if (req.capabilities.user_settings_object) return;
  const s = settingsOf(req);
  for (const k of NOTIFICATION_SETTINGS_LEGACY) state[k] = s[k];
  state.available_notification_sounds = AVAILABLE_NOTIFICATION_SOUNDS;
}

function fillRealmDefaults(req: StateRequest, state: Record<string, unknown>): void {
  // The realm's choices (PATCH /realm/user_settings_defaults) over the server's defaults.
  const chosen = JSON.parse(req.store.realmUserDefaults.get(req.realm.id)) as Partial<UserSettings>;
  state.realm_user_settings_defaults = {
    ...current({ ...USER_SETTING_DEFAULTS, ...chosen }, req.dialect),
    emojiset_choices: emojisetChoicesFor(EMOJISET_CHOICES, req.dialect),
    available_notification_sounds: AVAILABLE_NOTIFICATION_SOUNDS,
  };
}

export const userSettingsState: StateContributor = {
  types: ['user_settings'],
  fill: fillUserSettings,
};
export const legacyDisplaySettingsState: StateContributor = {
  types: ['update_display_settings'],
  fill: fillLegacyDisplay,
};
export const legacyNotificationSettingsState: StateContributor = {
  types: ['update_global_notifications'],
  fill: fillLegacyNotifications,
};
export const realmUserSettingsDefaultsState: StateContributor = {
  types: ['realm_user_settings_defaults'],
  fill: fillRealmDefaults,
};
