/**
 * Real-time events: POST /register (a queue and the state snapshot), GET /events (long-poll),
 * DELETE /events. Reference: views/events_register.py, tornado/views.py, lib/events.py.
 * The queues themselves: src/delivery (a held poll is a Consumer: src/delivery/consumer.ts); the
 * WebSocket channel: src/http/socket.ts.
 */
import { z } from 'zod';
import type { PollConsumer } from '../delivery/consumer.js';
import { checkLifespan } from '../delivery/limits.js';
import { endpoint, requestDialect, type HandlerCtx } from '../http/endpoint.js';
import { HeldResponse, RawJson } from '../http/respond.js';
import {
  BadEventQueueIdError,
  JsonableError,
  UnauthorizedError,
  UserNotAuthorizedForQueryError,
} from '../lib/errors.js';
import { capabilitiesFrom, type QueueSettings } from '../delivery/filter.js';
import { eventsResponseBytes, eventsResponseJson } from '../delivery/wire.js';
import { checkNarrowForEvents, type NarrowTerm } from '../lib/narrow.js';
import { bool, boolValue, int, json, str } from '../lib/params.js';
import { Role } from '../lib/roles.js';
import type { Dialect } from '../lib/wire-names.js';
import { fetchInitialState } from '../queries/initial-state.js';
import type { UserRow } from '../storage/users.js';
import { VERSION_FIELDS } from '../version.js';

const stringListParam = () =>
  json(z.array(z.string({ error: '{var} is not a string' }), { error: '{var} is not a list' }));

const narrowParam = () =>
  json(
    z.array(
      z.tuple(
        [
          z.string({ error: '{var} is not a string' }),
          z.string({ error: '{var} is not a string' }),
        ],
        {
          error: '{var} is not a list of length 2',
        },
      ),
      { error: '{var} is not a list' },
    ),
  );

const capabilitiesParam = () =>
  json(z.record(z.string(), boolValue(), { error: '{var} is not a dict' }));

/** The registration parameters POST /register takes (GET /events accepts them too). */
const REGISTRATION = {
  apply_markdown: bool().default(false),
  client_extavatar: bool().optional(),
  slim_presence: bool().default(false),
  event_types: stringListParam().optional(),
  all_public_streams: bool().optional(),
  client_capabilities: capabilitiesParam().optional(),
  narrow: narrowParam().default([]),
  queue_lifespan_secs: int().default(0),
};

type Registration = {
  apply_markdown: boolean;
  client_extavatar?: boolean | undefined;
  slim_presence: boolean;
  event_types?: string[] | undefined;
  all_public_streams?: boolean | undefined;
  client_capabilities?: Record<string, boolean> | undefined;
  narrow: [string, string][];
  queue_lifespan_secs: number;
};

/** Checks a registration and turns it into queue settings (for `user`, in `dialect`). */
function queueSettings(user: UserRow, p: Registration, dialect: Dialect): QueueSettings {
  const narrow: NarrowTerm[] = p.narrow.map(([o, v]) => [o, v] as const);
  checkNarrowForEvents(narrow);
  if (p.all_public_streams && user.role === Role.GUEST) {
    throw new UserNotAuthorizedForQueryError();
  }
  return {
    userId: user.id,
    realmId: user.realm_id,
    eventTypes: p.event_types ?? null,
    applyMarkdown: p.apply_markdown,
    clientExtAvatar: p.client_extavatar ?? true,
    slimPresence: p.slim_presence,
    allPublicStreams: p.all_public_streams ?? false,
    narrow,
    capabilities: capabilitiesFrom(p.client_capabilities ?? {}),
    lifespanMs: checkLifespan(p.queue_lifespan_secs),
    dialect,
  };
}

/**
 * POST /api/v1/register — a new event queue and the snapshot of everything its event types cover.
 * Anonymous callers are allowed in realms with public access (`enable_spectator_access`): no
 * queue, a guest's view.
 */
export const registerQueue = endpoint({
  method: 'POST',
  path: '/api/v1/register',
  compressAnswer: true,
  auth: 'optional',
  params: z.object({
    ...REGISTRATION,
    include_subscribers: bool().default(false),
    fetch_event_types: stringListParam().optional(),
    presence_history_limit_days: int().optional(),
  }),
  handle: (ctx: HandlerCtx, p) => {
    const { server, realm, user } = ctx;
    if (!realm) throw new UnauthorizedError();
    const dialect = requestDialect(ctx);
    let settings: QueueSettings | null = null;
    if (user) {
      settings = queueSettings(user, p, dialect);
    } else {
      if (!realm.view.settings.enable_spectator_access) throw new UnauthorizedError();
      // These parameters must be false for anonymous requests.
      if (p.client_extavatar === true) {
        throw new JsonableError("Invalid 'client_extavatar' parameter for anonymous request");
      }
      if (p.include_subscribers) {
        throw new JsonableError("Invalid 'include_subscribers' parameter for anonymous request");
      }
      checkNarrowForEvents(p.narrow.map(([o, v]) => [o, v] as const));
    }
    const capabilities = settings?.capabilities ?? capabilitiesFrom(p.client_capabilities ?? {});
    const fetchTypes = p.fetch_event_types ?? p.event_types ?? null;
    // One synchronous block: no mutation can commit between the queue's creation and the
    // snapshot, so every later event is in the queue and none is already in the snapshot.
    const rt = settings ? server.queues.register(settings) : null;
    const state = fetchInitialState({
      store: server.store,
      config: server.config,
      realm: realm.view,
      user,
      fetchEventTypes: fetchTypes === null ? null : new Set(fetchTypes),
      capabilities,
      applyMarkdown: p.apply_markdown,
      clientExtAvatar: user ? (p.client_extavatar ?? true) : false,
      includeSubscribers: p.include_subscribers,
      slimPresence: p.slim_presence,
      presenceHistoryLimitDays: p.presence_history_limit_days ?? null,
      narrow: p.narrow,
      serverGeneration: server.queues.serverGeneration,
      dialect,
    });
    return {
      queue_id: rt ? rt.id : null,
      last_event_id: rt ? rt.queue.lastId : -1,
      ...VERSION_FIELDS,
      ...state,
    };
  },
});

/**
 * GET /api/v1/events — acknowledges `last_event_id` and returns newer events, holding the request
 * until one arrives (or a heartbeat) unless `dont_block`. Without `queue_id` and with `dont_block`,
 * registers a queue from the POST /register parameters and returns its id.
 */
export const getEvents = endpoint({
  method: 'GET',
  path: '/api/v1/events',
  rateLimitBucket: 'events',
  params: z.object({
    ...REGISTRATION,
    queue_id: str().optional(),
    last_event_id: int().optional(),
    dont_block: bool().default(false),
  }),
  handle: (ctx, p) => {
    const { server, user, req } = ctx;
    const queues = server.queues;
    if (p.queue_id === undefined) {
      if (!p.dont_block) throw new JsonableError("Missing 'queue_id' argument");
      const rt = queues.register(
        queueSettings(
          user,
          { ...p, client_extavatar: p.client_extavatar ?? false },
          requestDialect(ctx),
        ),
      );
      return new RawJson(eventsResponseJson([], rt.id));
    }
    if (p.last_event_id === undefined) throw new JsonableError("Missing 'last_event_id' argument");
    if (p.all_public_streams && user.role === Role.GUEST) {
      throw new UserNotAuthorizedForQueryError();
    }
    const rt = queues.access(user.id, p.queue_id);
    queues.acknowledge(rt, p.last_event_id);
    // Answered at once when events are pending, or later by the queue — in the publisher's flush,
    // outside any handler, written at once (HeldResponse: no promise hop).
    const held = new HeldResponse();
    const poll: PollConsumer = {
      kind: 'poll',
      dontBlock: p.dont_block,
      deliver: (events) => held.answer(new RawJson(eventsResponseBytes(events))),
    };
    if (queues.attach(rt, poll)) req.onAbort(() => queues.detach(rt, poll));
    return held;
  },
});

const notYourQueue = () => new JsonableError('You are not authorized to access this queue');

/**
 * DELETE /api/v1/events — deletes a queue (finishing a held poll, closing a socket). On a cluster
 * node, a queue another node holds (its `queue_id` came in the body, which the front proxy cannot
 * route by) is deleted by that node (ServerContext.deleteRemoteQueue).
 */
export const deleteQueue = endpoint({
  method: 'DELETE',
  path: '/api/v1/events',
  rateLimitBucket: 'events',
  params: z.object({ queue_id: str() }),
  handle: ({ server, user }, p) => {
    const rt = server.queues.get(p.queue_id);
    if (!rt) {
      if (!server.deleteRemoteQueue) throw new BadEventQueueIdError(p.queue_id);
      return server.deleteRemoteQueue(p.queue_id, user.id).then((remote) => {
        if (remote === 'deleted') return {};
        if (remote === 'not-yours') throw notYourQueue();
        throw new BadEventQueueIdError(p.queue_id);
      });
    }
    if (rt.userId !== user.id) throw notYourQueue();
    server.queues.remove(rt);
    return {};
  },
});
