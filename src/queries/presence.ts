/**
 * The realm's presence, kept in memory. Every client reports presence about once a minute, so a
 * write per report would put thousands of tiny transactions a minute on the realm's single SQLite
 * writer, competing with message sends, for data that is worth little after a few minutes.
 * Instead reports change this in-memory model (synchronously, on the one thread, so no report
 * interleaves with a mutation or a register snapshot) and the rows that changed are written in one
 * transaction every few seconds by the realm actor (`presence.flush`, src/mutations/presence.ts)
 * and when the realm closes. A crash loses at most that interval of presence, which clients
 * rebuild with their next ping. Measured: docs/benchmarks.md, "presence".
 *
 * Loaded from the store the first time a realm's presence is used (one read of one table).
 *
 * Every client asks for the presences changed since its last fetch once a minute, so that answer
 * must cost what it carries, not what the realm holds: the model keeps a log of user ids in the
 * order of their changes (`changedSince`: a binary search, then only the changed entries; stale
 * entries are skipped and compacted away), and each record's modern-format JSON is built once and
 * shared by every answer that carries it (`presencesJsonFor`). Measured: docs/benchmarks.md,
 * "presence at scale".
 */
import { markShared } from '../lib/shared-parts.js';
import type { UserRow } from '../storage/users.js';
import {
  applyPresenceReport,
  invisibleRecord,
  legacyPresence,
  modernPresence,
  PRESENCE_DEFAULT_HISTORY_DAYS,
  presenceEventInfo,
  type PresenceChange,
  type PresenceRecord,
  type PresenceStatus,
} from '../lib/presence.js';
import type { WireEvent } from '../lib/events.js';
import type { PresenceRow } from '../storage/presence.js';
import type { ReadStore } from '../storage/store.js';
import { cacheSlot } from './realm-caches.js';
import type { RealmView } from './realm-view.js';

export class RealmPresence {
  private readonly byUser = new Map<number, PresenceRecord>();
  private readonly dirty = new Set<number>();
  /** User ids in the order their records were put, with each record's last_update_id then. */
  private logUsers: number[] = [];
  private logIds: number[] = [];
  /** The realm's presence sequence: the last `last_update_id` given out. */
  lastUpdateId = 0;

  constructor(
    readonly realmId: number,
    rows: readonly PresenceRow[],
  ) {
    const sorted = [...rows].sort((a, b) => a.last_update_id - b.last_update_id);
    for (const r of sorted) {
      this.byUser.set(r.user_id, {
        last_active_time: r.last_active_time,
        last_connected_time: r.last_connected_time,
        last_update_id: r.last_update_id,
      });
      this.logUsers.push(r.user_id);
      this.logIds.push(r.last_update_id);
      if (r.last_update_id > this.lastUpdateId) this.lastUpdateId = r.last_update_id;
    }
  }

  /**
   * The records changed after `fetched` (a `last_update_id`), oldest change first: O(log n + the
   * changes), whatever the realm's size.
   */
  *changedSince(fetched: number): IterableIterator<[number, PresenceRecord]> {
    const ids = this.logIds;
    for (let i = this.firstAfter(fetched); i < ids.length; i++) {
      const userId = this.logUsers[i]!;
      const r = this.byUser.get(userId);
      // A later change of the same user comes later in the log.
      if (r && r.last_update_id === ids[i]) yield [userId, r];
    }
  }

  /**
   * How many log entries come after `fetched`: at least the changed records, at most twice as
   * many (the log is compacted when stale entries outnumber live ones). O(log n).
   */
  entriesAfter(fetched: number): number {
    return this.logIds.length - this.firstAfter(fetched);
  }

  /** The log index of the first entry changed after `fetched` (binary search). */
  private firstAfter(fetched: number): number {
    const ids = this.logIds;
    let lo = 0;
    let hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ids[mid]! <= fetched) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  get size(): number {
    return this.byUser.size;
  }

  /** Drops the log's stale entries once they outnumber the live ones. */
  private compactLog(): void {
    if (this.logIds.length <= 2 * this.byUser.size + 64) return;
    const users: number[] = [];
    const ids: number[] = [];
    for (let i = 0; i < this.logIds.length; i++) {
      const userId = this.logUsers[i]!;
      if (this.byUser.get(userId)?.last_update_id === this.logIds[i]) {
        users.push(userId);
        ids.push(this.logIds[i]!);
      }
    }
    this.logUsers = users;
    this.logIds = ids;
  }

  get(userId: number): PresenceRecord | undefined {
    return this.byUser.get(userId);
  }

  /** Applies a client's report; what changed decides whether anyone is told. */
  report(userId: number, status: PresenceStatus, now: number): PresenceChange {
    const change = applyPresenceReport(this.byUser.get(userId), status, now, this.lastUpdateId + 1);
    if (change.next) this.put(userId, change.next);
    return change;
  }

  /**
   * The record a user gets on turning `presence_enabled` off (shown offline from now on) or on
   * (active now); not stored until `put` (after the setting's transaction commits).
   */
  visibilityRecord(userId: number, visible: boolean, now: number): PresenceRecord {
    const prev = this.byUser.get(userId);
    if (!visible) return invisibleRecord(prev, now, this.lastUpdateId + 1);
    return {
      last_active_time: now,
      last_connected_time: Math.max(now, prev?.last_connected_time ?? now),
      last_update_id: this.lastUpdateId + 1,
    };
  }

  put(userId: number, rec: PresenceRecord): void {
    if (rec.last_update_id <= this.lastUpdateId)
      rec = { ...rec, last_update_id: this.lastUpdateId + 1 };
    this.lastUpdateId = rec.last_update_id;
    this.byUser.set(userId, rec);
    this.dirty.add(userId);
    this.logUsers.push(userId);
    this.logIds.push(rec.last_update_id);
    this.compactLog();
  }
  get dirtyCount(): number {
    return this.dirty.size;
  }

  /** The changed rows not yet written, and forgets them (the caller writes them). */
  takeDirty(): PresenceRow[] {
    const rows: PresenceRow[] = [];
    for (const userId of this.dirty) {
      const r = this.byUser.get(userId)!;
      rows.push({ user_id: userId, realm_id: this.realmId, ...r });
    }
    this.dirty.clear();
    return rows;
  }

  /** Marks rows as unwritten again (their write failed). */
  restoreDirty(rows: readonly PresenceRow[]): void {
    for (const r of rows) this.dirty.add(r.user_id);
  }

  entries(): IterableIterator<[number, PresenceRecord]> {
    return this.byUser.entries();
  }
}

const PRESENCE = cacheSlot<RealmPresence>('presence');

/** The realm's presence model (created from the store on first use). */
export function realmPresence(store: ReadStore, view: RealmView): RealmPresence {
  let p = view.caches.get(PRESENCE);
  if (!p) {
    p = new RealmPresence(view.id, store.presence.byRealm(view.id));
    view.caches.set(PRESENCE, p);
  }
  return p;
}

export type PresenceQuery = {
  /** Modern format keyed by user id (else legacy, keyed by e-mail). */
  slim: boolean;
  /** Only data changed after this sequence number (the client's `last_update_id`). */
  lastUpdateId: number | null;
  historyLimitDays: number | null;
  now: number;
};

/**
 * The realm's presence data as clients fetch it: active human users connected within the history
 * limit (default 14 days; ignored once the client has data, `last_update_id` > 0), changed after
 * the client's `last_update_id`. Nothing when the realm disabled presence.
 */
export function presencesFor(
  view: RealmView,
  presence: RealmPresence,
  q: PresenceQuery,
): { presences: Record<string, unknown>; presence_last_update_id: number } {
  const out: Record<string, unknown> = {};
  if (view.settings.presence_disabled) return { presences: out, presence_last_update_id: -1 };
  const maxId = eachPresence(view, presence, q, (userId, r, u) => {
    if (q.slim) out[String(userId)] = modernPresence(r, u.date_joined);
    else out[u.email] = legacyPresence(r, u.date_joined, q.now);
  });
  return { presences: out, presence_last_update_id: maxId };
}

/** Calls `fn` for each presence the query returns; answers the largest last_update_id seen. */
function eachPresence(
  view: RealmView,
  presence: RealmPresence,
  q: PresenceQuery,
  fn: (userId: number, r: PresenceRecord, u: UserRow) => void,
): number {
  const fetched = q.lastUpdateId ?? -1;
  const days =
    q.lastUpdateId !== null && q.lastUpdateId > 0
      ? PRESENCE_DEFAULT_HISTORY_DAYS
      : (q.historyLimitDays ?? PRESENCE_DEFAULT_HISTORY_DAYS);
  const since = q.now - days * 86400;
  let maxId = fetched;
  const records = fetched > 0 ? presence.changedSince(fetched) : presence.entries();
  for (const [userId, r] of records) {
    if (r.last_update_id <= fetched || r.last_connected_time < since) continue;
    const u = view.user(userId);
    if (!u || !u.is_active || u.is_bot) continue;
    if (r.last_update_id > maxId) maxId = r.last_update_id;
    fn(userId, r, u);
  }
  return maxId;
}

/** A record's `"<user id>":{modern format}` JSON, built once per record. */
const slimJson = new WeakMap<PresenceRecord, string>();

function slimEntry(userId: number, r: PresenceRecord, u: UserRow): string {
  let json = slimJson.get(r);
  if (json === undefined) {
    json = `"${userId}":${JSON.stringify(modernPresence(r, u.date_joined))}`;
    slimJson.set(r, json);
  }
  return json;
}

/**
 * presencesFor in the modern format, as JSON: `presences` (an object's JSON) and
 * `presence_last_update_id`. Each record's JSON is built once and reused by every answer.
 */
export function presencesJsonFor(
  view: RealmView,
  presence: RealmPresence,
  q: Omit<PresenceQuery, 'slim'>,
): { presences: string; presence_last_update_id: number } {
  if (view.settings.presence_disabled) return { presences: '{}', presence_last_update_id: -1 };
  const parts: string[] = [];
  const maxId = eachPresence(view, presence, { ...q, slim: true }, (userId, r, u) => {
    parts.push(slimEntry(userId, r, u));
  });
  return { presences: `{${parts.join(',')}}`, presence_last_update_id: maxId };
}

/**
 * Realms with fewer presence records than this always answer exactly the changes
 * (`presencesJsonFor`): the shared snapshot below pays off only when answers are large.
 */
export const PRESENCE_SNAPSHOT_MIN = 256;

/**
 * Every shown presence of a realm in the modern format as of one moment, serialized once and
 * shared, whole, by the answers to many pings (presenceSnapshotFor).
 */
type PresenceSnapshot = {
  /** view.version when built: a change to users or the realm's settings makes a new one. */
  version: number;
  /** presence.lastUpdateId when built: every change up to it is in `json`, none after it. */
  upTo: number;
  /** How many presences it shows. */
  entries: number;
  /** When it was built (the server's clock, seconds). */
  builtAt: number;
  /** The `presences` object's JSON. */
  json: Buffer;
};

const snapshots = new WeakMap<RealmPresence, PresenceSnapshot>();

/**
 * A snapshot is made again once more presences changed after it than this share of it, or once
 * it is older than PRESENCE_SNAPSHOT_MAX_AGE seconds and anything changed: what a client is shown
 * lags the newest reports by at most that (clients report every 60 s anyway).
 */
const SNAPSHOT_STALE_SHARE = 1 / 8;
export const PRESENCE_SNAPSHOT_MAX_AGE = 5;

function buildSnapshot(view: RealmView, presence: RealmPresence, now: number): PresenceSnapshot {
  const entries: string[] = [];
  eachPresence(
    view,
    presence,
    { slim: true, lastUpdateId: null, historyLimitDays: null, now },
    (userId, r, u) => void entries.push(slimEntry(userId, r, u)),
  );
  return {
    version: view.version,
    upTo: presence.lastUpdateId,
    entries: entries.length,
    builtAt: now,
    // Shared by every answer until rebuilt: compressed once for the clients that take gzip.
    json: markShared(Buffer.from(`{${entries.join(',')}}`)),
  };
}

/**
 * The modern-format answer to a ping in a large realm when it is cheaper to send every shown
 * presence than to assemble the changes: the realm has at least PRESENCE_SNAPSHOT_MIN records and
 * more than half of them changed since the client's `last_update_id` (as happens when every client
 * pings once a minute: by a user's next ping nearly everyone else's presence has changed, and
 * assembling those answers was quadratic in the active users), or fewer changed but the snapshot
 * is smaller on the wire than they would be (`wireSize`: what the snapshot costs this client, its
 * compressed size when it takes gzip; null when it costs its own bytes). Null
 * otherwise, and the caller answers with `presencesJsonFor`.
 *
 * The answer is the realm's snapshot, whole and shared (its bytes are written to the socket as
 * they are), with `presence_last_update_id` the snapshot's position: every presence as of then,
 * which is what the client asked for (what changed since its last fetch, up to the snapshot) plus
 * records it already has, which it merges unchanged. What changed after the snapshot comes in its
 * next answer. The 14-day history limit is applied as of the snapshot (seconds old).
 */
export function presenceSnapshotFor(
  view: RealmView,
  presence: RealmPresence,
  q: Omit<PresenceQuery, 'slim'>,
  wireSize: (json: Buffer) => number | null = () => null,
): { presences: Buffer; presence_last_update_id: number } | null {
  if (view.settings.presence_disabled || presence.size < PRESENCE_SNAPSHOT_MIN) return null;
  const fetched = q.lastUpdateId ?? -1;
  // A first fetch with its own history limit gets exactly that.
  if (
    fetched <= 0 &&
    q.historyLimitDays !== null &&
    q.historyLimitDays !== PRESENCE_DEFAULT_HISTORY_DAYS
  )
    return null;
  let snap = snapshots.get(presence);
  const changed = snap ? presence.lastUpdateId - snap.upTo : 0;
  if (
    !snap ||
    snap.version !== view.version ||
    changed > snap.entries * SNAPSHOT_STALE_SHARE ||
    (changed > 0 && q.now - snap.builtAt >= PRESENCE_SNAPSHOT_MAX_AGE)
  ) {
    snap = buildSnapshot(view, presence, q.now);
    snapshots.set(presence, snap);
  }
  // A client that already has the snapshot's position (or later) gets exactly the changes.
  if (fetched >= snap.upTo) return null;
  const answer = { presences: snap.json, presence_last_update_id: snap.upTo };
  const news = presence.entriesAfter(fetched);
  if (news * 2 >= snap.entries) return answer;
  // Fewer changed, but the snapshot is smaller on the wire for this client than the changes
  // would be (one that takes gzip gets it compressed: about 5 bytes a presence against about
  // 67 for each changed one assembled for it), and costs no assembling.
  const wire = wireSize(snap.json);
  if (wire !== null && news * (snap.json.length / snap.entries) > wire) return answer;
  return null;
}

/** The `presence` event for a user's new record (legacy format; slim queues drop `email`). */
export function presenceEvent(
  user: UserRow,
  r: PresenceRecord,
  serverTimestamp: number,
): WireEvent {
  return {
    type: 'presence',
    user_id: user.id,
    email: user.email,
    server_timestamp: serverTimestamp,
    presence: presenceEventInfo(r, user.date_joined),
  };
}
