/**
 * Register snapshot: presence (`presences`, `presence_last_update_id`, `server_timestamp`), user
 * statuses (`user_status`), the caller's saved snippets (`saved_snippets`) and the realm's code
 * playgrounds (`realm_playgrounds`). Spectators see no presence, statuses or snippets.
 */
import type { StateContributor } from '../initial-state.js';
import { presencesFor, realmPresence } from '../presence.js';
import { formatSavedSnippet } from '../saved-snippets.js';
import { formatUserStatus } from '../user-status.js';

export const presenceState: StateContributor = {
  types: ['presence'],
  fill(req, state) {
    const nowFloat = req.config.clock() / 1000;
    if (req.user === null) {
      state.presences = {};
      state.presence_last_update_id = -1;
    } else {
      const data = presencesFor(req.realm, realmPresence(req.store, req.realm), {
        slim: req.slimPresence,
        lastUpdateId: null,
        historyLimitDays: req.presenceHistoryLimitDays ?? null,
        now: Math.floor(nowFloat),
      });
      state.presences = data.presences;
      state.presence_last_update_id = data.presence_last_update_id;
    }
    state.server_timestamp = nowFloat;
  },
};

export const userStatusState: StateContributor = {
  types: ['user_status'],
  fill(req, state) {
    const out: Record<string, unknown> = {};
    if (req.user !== null) {
      const rows = new Map(req.store.userStatus.byRealm(req.realm.id).map((r) => [r.user_id, r]));
      for (const u of req.realm.activeUsers()) {
        const enabled = req.realm.userSettings(u.id).presence_enabled;
        const row = rows.get(u.id);
        if (!row && enabled) continue;
        out[String(u.id)] = formatUserStatus(row, enabled, req.dialect);
      }
    }
    state.user_status = out;
  },
};

export const savedSnippetsState: StateContributor = {
  types: ['saved_snippets'],
  fill(req, state) {
    state.saved_snippets =
      req.user === null ? [] : req.store.savedSnippets.byUser(req.user.id).map(formatSavedSnippet);
  },
};

export const realmPlaygroundsState: StateContributor = {
  types: ['realm_playgrounds'],
  fill(req, state) {
    state.realm_playgrounds = req.store.playgrounds.byRealm(req.realm.id);
  },
};
