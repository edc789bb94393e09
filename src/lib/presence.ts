/**
 * Presence rules and formats (pure). Reference: actions/presence.py (do_update_user_presence,
 * send_presence_changed), lib/presence.py (modern and legacy formats), views/presence.py.
 *
 * A user's presence is two times: when a client last said the user was active
 * (`last_active_time`) and when a client was last connected at all (`last_connected_time`), plus
 * the realm's sequence number of its last change (`last_update_id`), which lets clients fetch only
 * what changed since they last asked. Times are UNIX seconds.
 */
import { PRESENCE_OFFLINE_THRESHOLD_SECONDS, PRESENCE_PING_INTERVAL_SECONDS } from './limits.js';

export type PresenceStatus = 'active' | 'idle';

export type PresenceRecord = {
  last_active_time: number | null;
  last_connected_time: number;
  last_update_id: number;
};

/** A stored time is not rewritten more often than this (several windows ping every minute). */
export const PRESENCE_UPDATE_MIN_FREQ_SECONDS = 55;
/** In a `presence` event, a user active this long before their last connection is "active". */
export const PRESENCE_LEGACY_EVENT_OFFSET_FOR_ACTIVITY_SECONDS = 70;
/** How far back presence data goes without `history_limit_days`. */
export const PRESENCE_DEFAULT_HISTORY_DAYS = 14;
/**
 * A user not active for this long who reports `active` is newly online, and everyone is told at
 * once (otherwise they learn it at their next poll): they have missed a couple of pings and would
 * soon be shown offline.
 */
export const PRESENCE_NEWLY_ONLINE_SECONDS =
  PRESENCE_OFFLINE_THRESHOLD_SECONDS - PRESENCE_PING_INTERVAL_SECONDS - 10;
/** The legacy format calls a user idle who has not been active for two minutes. */
const LEGACY_ACTIVE_WINDOW_SECONDS = 120;

export type PresenceChange = {
  /** The new record, or null when nothing stored changes. */
  next: PresenceRecord | null;
  /** The user had no presence before. */
  created: boolean;
  /** An `active` report after long enough without one: the user came (back) online. */
  becameOnline: boolean;
};

/**
 * Applies one report to a user's presence. `nextId` is the realm's next sequence number, used only
 * when something changes.
 */
export function applyPresenceReport(
  prev: PresenceRecord | undefined,
  status: PresenceStatus,
  now: number,
  nextId: number,
): PresenceChange {
  const active = status === 'active';
  if (!prev) {
    return {
      next: {
        last_active_time: active ? now : null,
        last_connected_time: now,
        last_update_id: nextId,
      },
      created: true,
      becameOnline: active,
    };
  }
  const sinceActive = prev.last_active_time === null ? 86400 : now - prev.last_active_time;
  const sinceConnected = now - prev.last_connected_time;
  const becameOnline = active && sinceActive > PRESENCE_NEWLY_ONLINE_SECONDS;
  let lastActive = prev.last_active_time;
  let lastConnected = prev.last_connected_time;
  let changed = false;
  if (sinceConnected > PRESENCE_UPDATE_MIN_FREQ_SECONDS) {
    lastConnected = now;
    changed = true;
  }
  if (active && sinceActive > PRESENCE_UPDATE_MIN_FREQ_SECONDS) {
    lastActive = now;
    if (now > lastConnected) lastConnected = now;
    changed = true;
  }
  return {
    next: changed
      ? { last_active_time: lastActive, last_connected_time: lastConnected, last_update_id: nextId }
      : null,
    created: false,
    becameOnline,
  };
}

/**
 * The record of a user who just turned `presence_enabled` off: both times pushed back past the
 * offline threshold, so that every client shows them offline. Turning it on again counts as an
 * active report now.
 */
export function invisibleRecord(
  prev: PresenceRecord | undefined,
  now: number,
  nextId: number,
): PresenceRecord {
  const past = now - PRESENCE_OFFLINE_THRESHOLD_SECONDS - 1;
  const clamp = (t: number | null) => (t === null ? null : Math.min(t, past));
  return {
    last_active_time: clamp(prev?.last_active_time ?? null),
    last_connected_time: Math.min(prev?.last_connected_time ?? past, past),
    last_update_id: nextId,
  };
}

/** The modern (slim) format: `{active_timestamp, idle_timestamp}`. */
export function modernPresence(r: PresenceRecord, dateJoined: number) {
  return {
    active_timestamp: r.last_active_time ?? dateJoined,
    idle_timestamp: r.last_connected_time,
  };
}

type LegacyClientInfo = {
  client: 'website';
  status: PresenceStatus;
  timestamp: number;
  pushable: false;
};

/** The legacy format: `{aggregated: {...}, website: {...}}` (the server stores no client). */
export function legacyPresence(r: PresenceRecord, dateJoined: number, now: number) {
  const lastActive = r.last_active_time ?? dateJoined;
  const idle = now - lastActive > LEGACY_ACTIVE_WINDOW_SECONDS;
  const status: PresenceStatus = idle ? 'idle' : 'active';
  const timestamp = idle ? r.last_connected_time : lastActive;
  const website: LegacyClientInfo = { client: 'website', status, timestamp, pushable: false };
  return { aggregated: { client: 'website' as const, status, timestamp }, website };
}

/** The `presence` object of a `presence` event, right after a change. */
export function presenceEventInfo(
  r: PresenceRecord,
  dateJoined: number,
): { website: LegacyClientInfo } {
  const lastActive = r.last_active_time ?? dateJoined;
  const active =
    lastActive + PRESENCE_LEGACY_EVENT_OFFSET_FOR_ACTIVITY_SECONDS >= r.last_connected_time;
  return {
    website: {
      client: 'website',
      status: active ? 'active' : 'idle',
      timestamp: active ? lastActive : r.last_connected_time,
      pushable: false,
    },
  };
}
