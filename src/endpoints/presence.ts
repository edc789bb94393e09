/**
 * Presence. Reference: views/presence.py (update_active_status_backend, get_presence_backend,
 * get_statuses_for_realm), actions/presence.py, lib/presence.py.
 *
 * POST /users/me/presence is the hottest endpoint of a chat server (every client, every minute),
 * so it does not enter the realm actor's queue: it updates the realm's in-memory presence
 * (src/queries/presence.ts) synchronously, and the changed rows reach SQLite in one batched
 * transaction a few seconds later (`presence.flush`). An event is sent only when what clients
 * show changes: a user's first presence, or an `active` report after long enough without one
 * (the user came back online) — never for the routine pings in between.
 */
import { log } from '../observability/log.js';
import { z } from 'zod';
import type { RealmRuntime } from '../../actors/registry.js';
import type { ServerContext } from '../context.js';
import { endpoint, type AuthedCtx } from '../http/endpoint.js';
import { HumanUsersOnlyError, JsonableError, NoSuchUserError } from '../lib/errors.js';
import { PRESENCE_OFFLINE_THRESHOLD_SECONDS } from '../lib/limits.js';
import { legacyPresence } from '../lib/presence.js';
import { bool, int, ownNulRule, str } from '../lib/params.js';
import { RawJson } from '../http/respond.js';
import { acceptsGzip, compressedSize } from '../http/gzip.js';
import {
  presenceEvent,
  presencesFor,
  presencesJsonFor,
  presenceSnapshotFor,
  realmPresence,
  type RealmPresence,
} from '../queries/presence.js';
import type { RealmView } from '../queries/realm-view.js';
import { answered } from '../lib/events.js';
import { putPreserialized } from '../lib/preserialized.js';

/** Now, in seconds with a fraction (`server_timestamp`). */
export function presenceNow(config: ServerContext['config']): number {
  return config.clock() / 1000;
}

const flushScheduled = new WeakSet<RealmRuntime>();

/** Schedules the batch write of the realm's changed presence, once per interval. */
function scheduleFlush(server: ServerContext, realm: RealmRuntime): void {
  if (flushScheduled.has(realm)) return;
  flushScheduled.add(realm);
  const timer = setTimeout(() => {
    flushScheduled.delete(realm);
    if (realm.status !== 'open') return;
    realm.ask('presence.flush', {}).catch((err: unknown) => {
      log.error({ err, realmId: realm.id }, 'writing presence failed');
    });
  }, server.config.presenceFlushMs);
  timer.unref();
}

const presenceParams = z.object({
  status: ownNulRule(str()), // "Invalid status: …"
  ping_only: bool().default(false),
  new_user_input: bool().default(false),
  slim_presence: bool().default(false),
  last_update_id: int().optional(),
  history_limit_days: int().optional(),
});

/** POST /api/v1/users/me/presence */
export const updatePresence = endpoint({
  method: 'POST',
  path: '/api/v1/users/me/presence',
  params: presenceParams,
  handle: ({ server, realm, user, req }: AuthedCtx, p) => {
    if (user.is_bot) throw new HumanUsersOnlyError();
    if (p.status !== 'active' && p.status !== 'idle')
      throw new JsonableError(`Invalid status: ${p.status}`);
    const nowFloat = presenceNow(server.config);
    const now = Math.floor(nowFloat);
    const view = realm.view;
    const presence = realmPresence(server.store, view);
    // Whether an event went out: the answer then waits until it is on its way to every node's
    // queues (a cluster; at once otherwise), as typing's does.
    let published = false;
    // A user who turned presence sharing off is not recorded at all (invisible mode).
    if (view.userSettings(user.id).presence_enabled) {
      const change = presence.report(user.id, p.status, now);
      if (change.next) scheduleFlush(server, realm);
      if (
        change.next &&
        (change.created || change.becameOnline) &&
        !view.settings.presence_disabled
      ) {
        // (The count first: in a large realm, above the limit, no list of its users is built.)
        if (view.activeUserCount() <= server.config.presenceEventUserLimit) {
          published = true;
          server.publisher.publish(realm.id, [
            {
              event: presenceEvent(user, change.next, nowFloat),
              users: view.activeUsers().map((u) => u.id),
            },
          ]);
        }
      }
    }
    const answer = presenceAnswer(view, presence, p, now, nowFloat, req.acceptEncoding);
    return published ? answered(server.publisher, answer) : answer;
  },
});

/** The answer to a presence report: the presences the client asked for, in its format. */
function presenceAnswer(
  view: RealmView,
  presence: RealmPresence,
  p: z.infer<typeof presenceParams>,
  now: number,
  nowFloat: number,
  /** Its Accept-Encoding: a shared snapshot costs a client that takes gzip its compressed size. */
  acceptEncoding: string,
): object {
  if (p.ping_only) return {};
  const query = {
    lastUpdateId: p.last_update_id ?? null,
    historyLimitDays: p.history_limit_days ?? null,
    now,
  };
  // `last_update_id` means a modern client; modern answers are assembled from each record's
  // JSON, built once (every client asks every minute: src/queries/presence.ts).
  if (p.slim_presence || p.last_update_id !== undefined) {
    // In a large realm where most presences changed since the client's last fetch, every shown
    // presence from a snapshot shared by many answers.
    const shared = presenceSnapshotFor(view, presence, query, (json) =>
      acceptsGzip(acceptEncoding) ? compressedSize(json) : null,
    );
    if (shared) {
      const out = {
        presence_last_update_id: shared.presence_last_update_id,
        server_timestamp: nowFloat,
      };
      putPreserialized(out, 'presences', [shared.presences]);
      return out;
    }
    const data = presencesJsonFor(view, presence, query);
    return new RawJson(
      `{"result":"success","msg":"","presences":${data.presences},"presence_last_update_id":` +
        `${data.presence_last_update_id},"server_timestamp":${JSON.stringify(nowFloat)}}`,
    );
  }
  const data = presencesFor(view, presence, { ...query, slim: false });
  return { ...data, server_timestamp: nowFloat };
}

/** GET /api/v1/realm/presence — everyone's presence, legacy format (for bots and scripts). */
export const getRealmPresence = endpoint({
  method: 'GET',
  path: '/api/v1/realm/presence',
  params: z.object({}),
  handle: ({ server, realm }: AuthedCtx) => {
    const nowFloat = presenceNow(server.config);
    const { presences } = presencesFor(realm.view, realmPresence(server.store, realm.view), {
      slim: false,
      lastUpdateId: null,
      historyLimitDays: null,
      now: Math.floor(nowFloat),
    });
    return { presences, server_timestamp: nowFloat };
  },
});

/**
 * GET /api/v1/users/{user_id_or_email}/presence — one user's presence, legacy format without
 * `client` and `pushable`; `aggregated` says `offline` past the offline threshold.
 */
export const getUserPresence = endpoint({
  method: 'GET',
  path: '/api/v1/users/:user_id_or_email/presence',
  params: z.object({ user_id_or_email: z.string() }),
  handle: ({ server, realm }: AuthedCtx, p) => {
    const view = realm.view;
    const key = p.user_id_or_email;
    const target = /^\d+$/.test(key) ? view.user(Number(key)) : view.userByEmail(key);
    if (!target || !target.is_active) throw new NoSuchUserError();
    if (target.is_bot) throw new JsonableError('Presence is not supported for bot users.');
    const rec = realmPresence(server.store, view).get(target.id);
    if (!rec) throw new JsonableError(`No presence data for ${key}`);
    const now = Math.floor(presenceNow(server.config));
    const legacy = legacyPresence(rec, target.date_joined, now);
    const aggregated: { status: string; timestamp: number } = {
      status: legacy.aggregated.status,
      timestamp: legacy.aggregated.timestamp,
    };
    if (now - aggregated.timestamp > PRESENCE_OFFLINE_THRESHOLD_SECONDS)
      aggregated.status = 'offline';
    return {
      presence: {
        website: { status: legacy.website.status, timestamp: legacy.website.timestamp },
        aggregated,
      },
    };
  },
});
