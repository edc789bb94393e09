/**
 * The register snapshot (POST /register), built from contributors: each area of the API adds the
 * snapshot fields it owns by adding one StateContributor to STATE_CONTRIBUTORS, in its own module
 * under src/queries/state/. A contributor runs only when one of its `types` is wanted
 * (`fetch_event_types`, defaulting to `event_types`, defaulting to everything).
 *
 * Consistency with the event queue comes from the single thread: the snapshot is built and the
 * queue registered in one synchronous block, so no mutation can commit in between.
 */
import type { ServerConfig } from '../config.js';
import type { ClientCapabilities } from '../delivery/filter.js';
import type { Dialect } from '../lib/wire-names.js';
import type { ReadStore } from '../storage/store.js';
import type { UserRow } from '../storage/users.js';
import type { RealmView } from './realm-view.js';
import { alertWordsState } from './state/alert-words.js';
import { draftsState } from './state/drafts.js';
import { mutedUsersState } from './state/muted-users.js';
import { realmFiltersState, realmLinkifiersState } from './state/linkifiers.js';
import {
  presenceState,
  realmPlaygroundsState,
  savedSnippetsState,
  userStatusState,
} from './state/presence.js';
import { profileFieldsState } from './state/profile-fields.js';
import { realmState } from './state/realm.js';
import { scheduledMessagesState } from './state/scheduled-messages.js';
import {
  legacyDisplaySettingsState,
  legacyNotificationSettingsState,
  realmUserSettingsDefaultsState,
  userSettingsState,
} from './state/user-settings.js';
import { usersState } from './state/users.js';
import { botsState } from './state/bots.js';
import { CHANNEL_STATE_CONTRIBUTORS } from './state/channels.js';
import { MESSAGE_STATE_CONTRIBUTORS } from './state/messages.js';

/** The client_capabilities of POST /register (missing keys are false); see src/delivery/filter.ts. */
export type { ClientCapabilities };

export type StateRequest = {
  store: ReadStore;
  config: ServerConfig;
  realm: RealmView;
  /** null for an unauthenticated spectator of a realm with public access. */
  user: UserRow | null;
  /** The event types whose state is wanted; null means all. */
  fetchEventTypes: ReadonlySet<string> | null;
  capabilities: ClientCapabilities;
  applyMarkdown: boolean;
  clientExtAvatar: boolean;
  includeSubscribers: boolean;
  slimPresence: boolean;
  /** The register's `presence_history_limit_days` (default 14 days). */
  presenceHistoryLimitDays?: number | null;
  /** The register `narrow`, as [operator, operand] pairs. */
  narrow: readonly (readonly [string, string])[];
  /** When this server process started, UNIX seconds (`server_generation`). */
  serverGeneration: number;
  /** How single-spelling values are spelled for this client (src/lib/wire-names.ts). */
  dialect: Dialect;
};

export type StateContributor = {
  /** Event types that ask for this contributor's fields. */
  types: readonly string[];
  fill(req: StateRequest, state: Record<string, unknown>): void;
};

/**
 * Every contributor, in the order their fields appear. Each area adds an import of its module in
 * src/queries/state/ and its contributors here.
 */
export const STATE_CONTRIBUTORS: readonly StateContributor[] = [
  realmLinkifiersState,
  realmFiltersState,
  // issue #3: realm, users, settings, profile fields
  profileFieldsState,
  realmState,
  realmUserSettingsDefaultsState,
  usersState,
  botsState,
  userSettingsState,
  legacyDisplaySettingsState,
  legacyNotificationSettingsState,
  // issue #4: channels, subscriptions, user groups, topics
  ...CHANNEL_STATE_CONTRIBUTORS,
  // drafts, alert words
  draftsState,
  alertWordsState,
  scheduledMessagesState,
  // muted users
  mutedUsersState,
  // issue #5: messages, unread and starred messages, recent conversations, custom emoji
  ...MESSAGE_STATE_CONTRIBUTORS,
  // presence, user status, saved snippets, code playgrounds
  presenceState,
  userStatusState,
  savedSnippetsState,
  realmPlaygroundsState,
];

export function wants(req: StateRequest, c: StateContributor): boolean {
  return req.fetchEventTypes === null || c.types.some((t) => req.fetchEventTypes!.has(t));
}

export function fetchInitialState(req: StateRequest): Record<string, unknown> {
  const state: Record<string, unknown> = {};
  for (const c of STATE_CONTRIBUTORS) if (wants(req, c)) c.fill(req, state);
  return state;
}
