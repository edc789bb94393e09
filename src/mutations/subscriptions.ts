/**
 * Subscribing (creating channels that do not exist), unsubscribing, and personal subscription
 * settings. Reference: views/streams.py (add_subscriptions_backend, remove_subscriptions_backend,
 * update_subscription_properties_backend), actions/streams.py (bulk_add_subscriptions,
 * bulk_remove_subscriptions, do_change_subscription_property).
 */
import {
  addSubscribersDecision,
  canRemoveSubscribers,
  hasContentAccess,
} from '../lib/channel-permissions.js';
import { checkChannelName } from '../lib/channel-rules.js';
import {
  GuestNotAllowedError,
  InsufficientPermissionError,
  InvalidChannelIdError,
  JsonableError,
  NoSuchUserError,
  StreamDoesNotExistError,
} from '../lib/errors.js';
import type { SubscribeCommand } from '../lib/subscribe-command.js';
import { pickColor } from '../lib/stream-colors.js';
import type { Channel } from '../queries/channels-view.js';
import { formatSubscription } from '../queries/channels.js';
import type { RealmView } from '../queries/realm-view.js';
import type { SubscriptionPropertyColumn } from '../storage/channels.js';
import type { UserRow } from '../storage/users.js';
import { announceAccessChange, difference } from './channel-events.js';
import {
  canSetTopicsPolicy,
  channelGroupSettingsForCreation,
  checkChannelCreation,
  checkFolderId,
  emitDefaultStreams,
  insertChannel,
} from './channels.js';
import { actingUser, type MutationContext } from './context.js';

/**
 * The users named by `principals` (user ids, or API e-mail addresses): every one must be an active
 * user of the realm. Reference: lib/users.py bulk_access_users_by_id / _by_email.
 */
export function resolvePrincipals(
  realm: RealmView,
  principals: readonly (number | string)[],
): UserRow[] {
  const out = new Map<number, UserRow>();
  for (const p of principals) {
    const u = typeof p === 'number' ? realm.user(p) : realm.userByEmail(p.trim());
    if (!u) throw new NoSuchUserError();
    if (!u.is_active) throw new JsonableError('User is deactivated');
    out.set(u.id, u);
  }
  return [...out.values()];
}

export type { SubscribeCommand };

export type SubscribeResult = {
  subscribed: Record<string, string[]>;
  already_subscribed: Record<string, string[]>;
  unauthorized?: string[];
};

/** A checked subscription request: the channels to create, those to join, and who joins. */
export type SubscribePlan = {
  cmd: SubscribeCommand;
  creatorId: number;
  /** The channels to create (none exists by that name), in request order. */
  missing: SubscribeCommand['subscriptions'];
  /** Their group settings; null when none is created. */
  groupSettings: ReturnType<typeof channelGroupSettingsForCreation> | null;
  authorized: Channel[];
  unauthorized: Channel[];
  subscribers: UserRow[];
};

export function checkSubscribe(ctx: MutationContext, cmd: SubscribeCommand): SubscribePlan {
  const { realm } = ctx;
  const view = realm.channels;
  const user = actingUser(realm, cmd.acting_user_id);
  if (user.role === 600) throw new GuestNotAllowedError();

  // Requested names, in order, without duplicates (the first spelling wins).
  const requests: SubscribeCommand['subscriptions'] = [];
  const seen = new Set<string>();
  for (const s of cmd.subscriptions) {
    checkChannelName(s.name);
    const key = s.name.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    requests.push(s);
  }

  if (
    cmd.topics_policy !== null &&
    cmd.topics_policy !== 'inherit' &&
    !canSetTopicsPolicy(realm, user)
  )
    throw new InsufficientPermissionError();
  checkFolderId(realm, cmd.folder_id);

  const existing: Channel[] = [];
  const missing: SubscribeCommand['subscriptions'] = [];
  for (const r of requests) {
    const ch = view.byName(r.name);
    if (ch) existing.push(ch);
    else missing.push(r);
  }
  let groupSettings: ReturnType<typeof channelGroupSettingsForCreation> | null = null;
  if (missing.length > 0) {
    groupSettings = channelGroupSettingsForCreation(realm, user.id, cmd.settings);
    checkChannelCreation(
      realm,
      user,
      {
        invite_only: cmd.invite_only,
        is_web_public: cmd.is_web_public,
        retentionGiven: cmd.retention_given,
      },
      cmd.is_default_stream,
    );
  }

  const principals = cmd.principals ?? [];
  const subscribingOthers = principals.length > 0 && !principals.every((p) => p === user.id);

  // Existing channels: the acting user needs content access, and, to add others, permission.
  const authorized: Channel[] = [];
  const unauthorized: Channel[] = [];
  let cannotAddOthers = false;
  for (const ch of existing) {
    const facts = view.facts(user.id, ch);
    if (!hasContentAccess(facts)) {
      unauthorized.push(ch);
      continue;
    }
    if (subscribingOthers && addSubscribersDecision(facts) !== 'ok') cannotAddOthers = true;
    authorized.push(ch);
  }
  if (unauthorized.length > 0 && cmd.authorization_errors_fatal)
    throw new JsonableError(`Unable to access channel (${unauthorized[0]!.name}).`);
  if (cannotAddOthers) throw new InsufficientPermissionError();

  const subscribers = subscribingOthers ? resolvePrincipals(realm, principals) : [user];
  return {
    cmd,
    creatorId: user.id,
    missing,
    groupSettings,
    authorized,
    unauthorized,
    subscribers,
  };
}

/** Creates the missing channels, then subscribes (see bulkAddSubscriptions). */
export function doSubscribe(ctx: MutationContext, plan: SubscribePlan): SubscribeResult {
  const { realm, store } = ctx;
  const { cmd, missing, groupSettings, authorized, unauthorized, subscribers } = plan;
  // Create the missing channels.
  const created: Channel[] = [];
  for (const r of missing) {
    created.push(
      insertChannel(ctx, plan.creatorId, {
        name: r.name,
        description: r.description ?? '',
        rendered_description: r.rendered_description ?? '',
        invite_only: cmd.invite_only,
        is_web_public: cmd.is_web_public,
        history_public_to_subscribers: cmd.history_public_to_subscribers,
        message_retention_days: cmd.message_retention_days,
        topics_policy: cmd.topics_policy ?? 'inherit',
        folder_id: cmd.folder_id,
        settings: groupSettings!,
      }),
    );
  }
  for (const ch of created) {
    ctx.audit({
      event_type: 'channel_created',
      acting_user_id: plan.creatorId,
      modified_channel_id: ch.id,
      extra: {
        name: ch.name,
        invite_only: cmd.invite_only,
        is_web_public: cmd.is_web_public,
        is_default_stream: cmd.is_default_stream,
      },
    });
  }
  if (cmd.is_default_stream && created.length > 0) {
    for (const ch of created) store.channels.addDefaultStream(realm.id, ch.id);
    emitDefaultStreams(ctx);
  }

  const colors = new Map(
    cmd.subscriptions.filter((s) => s.color !== null).map((s) => [s.name.toLowerCase(), s.color!]),
  );
  return bulkAddSubscriptions(
    ctx,
    [
      ...created.map((ch) => ({ ch, created: true })),
      ...authorized.map((ch) => ({ ch, created: false })),
    ],
    subscribers,
    {
      colors,
      unauthorized: cmd.authorization_errors_fatal ? null : unauthorized.map((c) => c.name),
    },
  );
}

/**
 * Subscribes `users` to `channels` and announces it: `stream create` to whoever may now know a
 * channel they did not, `subscription add` to each new subscriber, `peer_add` to the others who
 * may see the subscriber list.
 */
export function bulkAddSubscriptions(
  ctx: MutationContext,
  channels: { ch: Channel; created: boolean }[],
  users: UserRow[],
  opts: { colors?: Map<string, string>; unauthorized?: string[] | null } = {},
): SubscribeResult {
  const { realm, store } = ctx;
  const view = realm.channels;
  const result: SubscribeResult = { subscribed: {}, already_subscribed: {} };
  const newSubsByUser = new Map<number, Channel[]>();
  const usedColors = new Map<number, string[]>();
  const subscribersAfterById = new Map<number, number[]>();
  // As the reference orders them: `stream create`, then `subscription add`, then `peer_add`.
  const peerEvents: (() => void)[] = [];

  for (const { ch, created } of channels) {
    const before = new Set(created ? [] : view.subscriberIds(ch.id));
    const added: number[] = [];
    for (const u of users) {
      if (before.has(u.id)) {
        (result.already_subscribed[String(u.id)] ??= []).push(ch.name);
        continue;
      }
      let used = usedColors.get(u.id);
      if (!used) usedColors.set(u.id, (used = store.channels.colorsOfUser(u.id)));
      const color = opts.colors?.get(ch.name.toLowerCase()) ?? pickColor(used);
      store.channels.subscribe(u.id, ch.id, color);
      ctx.afterCommit(() => view.reloadSubscription(u.id, ch.id));
      used.push(color);
      added.push(u.id);
      (result.subscribed[String(u.id)] ??= []).push(ch.name);
      let mine = newSubsByUser.get(u.id);
      if (!mine) newSubsByUser.set(u.id, (mine = []));
      mine.push(ch);
    }
    if (added.length === 0 && !created) continue;
    const after = new Set([...before, ...added]);
    const audienceBefore = created ? [] : view.metadataAudience(ch);
    const audienceAfter = view.metadataAudience(ch, { subscribers: after });
    const subscribersAfter = [...after].sort((a, b) => a - b);
    subscribersAfterById.set(ch.id, subscribersAfter);
    const addedSet = new Set(added);
    // New subscribers learn the subscriber list from their `subscription add`.
    const { kept } = announceAccessChange(
      ctx,
      ch,
      audienceBefore,
      audienceAfter,
      subscribersAfter,
      { exceptPeerAdd: addedSet, defer: peerEvents },
    );
    const peers = difference(kept, added);
    if (added.length > 0 && peers.length > 0)
      peerEvents.push(() =>
        ctx.emit(
          { type: 'subscription', op: 'peer_add', stream_ids: [ch.id], user_ids: added },
          peers,
        ),
      );
  }

  for (const [userId, chans] of newSubsByUser) {
    const subscriptions = chans.map((ch) => {
      const row = store.channels.subscription(userId, ch.id)!;
      const o = formatSubscription(realm, ch, row, ctx.now);
      o.subscribers = subscribersAfterById.get(ch.id) ?? [];
      return o;
    });
    ctx.emit({ type: 'subscription', op: 'add', subscriptions }, [userId]);
  }
  for (const emit of peerEvents) emit();
  if (opts.unauthorized) result.unauthorized = opts.unauthorized;
  return result;
}

export type UnsubscribeCommand = {
  acting_user_id: number;
  subscriptions: string[];
  principals: (number | string)[] | null;
};

/** A checked unsubscription: whom to remove from which channels (each once, in order). */
export type UnsubscribePlan = { targets: UserRow[]; channels: Channel[] };

export function checkUnsubscribe(ctx: MutationContext, cmd: UnsubscribeCommand): UnsubscribePlan {
  const { realm } = ctx;
  const view = realm.channels;
  const user = actingUser(realm, cmd.acting_user_id);

  let targets: UserRow[] = [user];
  let unsubscribingOthers = false;
  if (cmd.principals && cmd.principals.length > 0) {
    targets = resolvePrincipals(realm, cmd.principals);
    unsubscribingOthers = targets.some(
      (t) => t.id !== user.id && !(t.is_bot && t.bot_owner_id === user.id),
    );
  }

  // Channels the acting user may not know exist are reported as not existing.
  const channels: Channel[] = [];
  const seen = new Set<number>();
  let missing: string | null = null;
  for (const raw of cmd.subscriptions) {
    const name = raw.trim();
    const ch = view.byName(name);
    if (!ch || !view.may(user.id, ch, 'metadata')) {
      missing ??= name;
      continue;
    }
    if (!seen.has(ch.id)) {
      seen.add(ch.id);
      channels.push(ch);
    }
  }
  if (unsubscribingOthers && !channels.every((ch) => canRemoveSubscribers(view.facts(user.id, ch))))
    throw new InsufficientPermissionError();
  if (missing !== null) throw new StreamDoesNotExistError(missing);
  return { targets, channels };
}

export function doUnsubscribe(
  ctx: MutationContext,
  { targets, channels }: UnsubscribePlan,
): { removed: string[]; not_removed: string[] } {
  const { realm, store } = ctx;
  const view = realm.channels;
  const result = { removed: [] as string[], not_removed: [] as string[] };
  const removedByUser = new Map<number, Channel[]>();
  // As the reference orders them: `subscription remove`, `peer_remove`, then `stream delete`.
  const peerEvents: (() => void)[] = [];
  const deleteEvents: (() => void)[] = [];
  for (const ch of channels) {
    const before = view.subscriberIds(ch.id);
    const beforeSet = new Set(before);
    const removed: number[] = [];
    for (const t of targets) {
      if (!beforeSet.has(t.id)) {
        result.not_removed.push(ch.name);
        continue;
      }
      store.channels.unsubscribe(t.id, ch.id);
      ctx.afterCommit(() => view.reloadSubscription(t.id, ch.id));
      removed.push(t.id);
      result.removed.push(ch.name);
      let mine = removedByUser.get(t.id);
      if (!mine) removedByUser.set(t.id, (mine = []));
      mine.push(ch);
    }
    if (removed.length === 0) continue;
    const after = new Set(difference(before, removed));
    const audienceBefore = view.metadataAudience(ch);
    const audienceAfter = view.metadataAudience(ch, { subscribers: after });
    const subscribersAfter = [...after].sort((a, b) => a - b);
    const { kept } = announceAccessChange(
      ctx,
      ch,
      audienceBefore,
      audienceAfter,
      subscribersAfter,
      {
        defer: deleteEvents,
      },
    );
    const peers = difference(kept, removed);
    if (peers.length > 0)
      peerEvents.push(() =>
        ctx.emit(
          { type: 'subscription', op: 'peer_remove', stream_ids: [ch.id], user_ids: removed },
          peers,
        ),
      );
  }
  for (const [userId, chans] of removedByUser) {
    ctx.emit(
      {
        type: 'subscription',
        op: 'remove',
        subscriptions: chans.map((ch) => ({ name: ch.name, stream_id: ch.id })),
      },
      [userId],
    );
  }
  for (const emit of [...peerEvents, ...deleteEvents]) emit();
  return result;
}

// ---- POST /users/me/subscriptions/properties -------------------------------------------------

export type SubscriptionPropertyChange = {
  stream_id: number;
  property: 'in_home_view' | SubscriptionPropertyColumn;
  value: boolean | string;
};

type SubscriptionPropertiesCommand = {
  acting_user_id: number;
  changes: SubscriptionPropertyChange[];
};

/** Every change must be to a subscription of the user's (checked all before any is applied). */
export function checkChangeSubscriptionProperties(
  ctx: MutationContext,
  cmd: SubscriptionPropertiesCommand,
): SubscriptionPropertiesCommand {
  const view = ctx.realm.channels;
  const user = actingUser(ctx.realm, cmd.acting_user_id);
  for (const c of cmd.changes) {
    const ch = view.byId(c.stream_id);
    if (!ch || !view.may(user.id, ch, 'content')) throw new InvalidChannelIdError();
    if (!view.isSubscribed(user.id, ch.id))
      throw new JsonableError(`Not subscribed to channel ID ${c.stream_id}`);
  }
  return cmd;
}

export function doChangeSubscriptionProperties(
  ctx: MutationContext,
  cmd: SubscriptionPropertiesCommand,
): Record<string, never> {
  const { store } = ctx;
  const view = ctx.realm.channels;
  const user = { id: cmd.acting_user_id };
  for (const c of cmd.changes) {
    const emit = (property: string, value: boolean | string) =>
      ctx.emit({ type: 'subscription', op: 'update', stream_id: c.stream_id, property, value }, [
        user.id,
      ]);
    if (c.property === 'in_home_view' || c.property === 'is_muted') {
      const muted = c.property === 'is_muted' ? c.value === true : c.value === false;
      store.channels.setSubscriptionProperty(user.id, c.stream_id, 'is_muted', muted ? 1 : 0);
      emit('in_home_view', !muted);
      emit('is_muted', muted);
    } else if (c.property === 'color') {
      store.channels.setSubscriptionProperty(user.id, c.stream_id, 'color', String(c.value));
      emit('color', c.value);
    } else {
      store.channels.setSubscriptionProperty(user.id, c.stream_id, c.property, c.value ? 1 : 0);
      emit(c.property, c.value);
    }
    ctx.afterCommit(() => view.reloadSubscription(user.id, c.stream_id));
  }
  return {};
}

// ---- PATCH /users/me/subscriptions ----------------------------------------------------------

/** Both parts of a checked PATCH /users/me/subscriptions. */
export type UpdateSubscriptionsPlan = {
  add: SubscribePlan | null;
  delete: UnsubscribePlan | null;
};

/**
 * Subscribing and unsubscribing in one transaction (either both apply or neither): both parts are
 * checked before either applies. The unsubscribing part sees the channels as they were before
 * the request.
 */
export function checkUpdateSubscriptions(
  ctx: MutationContext,
  cmd: { add: SubscribeCommand | null; delete: UnsubscribeCommand | null },
): UpdateSubscriptionsPlan {
  return {
    add: cmd.add ? checkSubscribe(ctx, cmd.add) : null,
    delete: cmd.delete ? checkUnsubscribe(ctx, cmd.delete) : null,
  };
}

export function doUpdateSubscriptions(
  ctx: MutationContext,
  plan: UpdateSubscriptionsPlan,
): Partial<SubscribeResult> & { removed?: string[]; not_removed?: string[] } {
  const added = plan.add ? doSubscribe(ctx, plan.add) : { subscribed: {}, already_subscribed: {} };
  const removed = plan.delete
    ? doUnsubscribe(ctx, plan.delete)
    : { removed: [] as string[], not_removed: [] as string[] };
  return { ...added, ...removed };
}
