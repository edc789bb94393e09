/**
 * The channel area's register snapshot fields, through fetchInitialState with a StateRequest
 * (POST /register itself belongs to the event-queue area): streams, subscriptions /
 * unsubscribed / never_subscribed, realm_default_streams, realm_user_groups, user_topics — who
 * sees what, and the shapes of the OpenAPI description.
 */
import { CHANNEL_SPEC_EXTRAS, REGISTER_SPEC_EXTRAS } from '../helpers/spec-extras.js';
import t, { type Test } from 'tap';
import {
  fetchInitialState,
  type ClientCapabilities,
  type StateRequest,
} from '../../src/queries/initial-state.js';
import type { UserRow } from '../../src/storage/users.js';
import { successJson } from '../../src/http/respond.js';
import { assertSuccess } from '../helpers/api.js';
import { createChannel, setRealmSettings } from '../helpers/channels.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer, type TestServer } from '../helpers/server.js';

const NO_CAPABILITIES: ClientCapabilities = {
  notification_settings_null: false,
  bulk_message_deletion: false,
  user_avatar_url_field_optional: false,
  stream_typing_notifications: false,
  user_settings_object: false,
  linkifier_url_template: false,
  user_list_incomplete: false,
  include_deactivated_groups: false,
  archived_channels: false,
  empty_topic_name: false,
  simplified_presence_events: false,
};

function state(
  ts: TestServer,
  who: string | null,
  opts: {
    types?: string[];
    capabilities?: Partial<ClientCapabilities>;
    includeSubscribers?: boolean;
  } = {},
) {
  const { server, fx } = ts;
  const rt = server.context.realms.get(fx.realmId)!;
  const user: UserRow | null = who === null ? null : rt.view.user(fx.users[who]!.id)!;
  const req: StateRequest = {
    store: server.store,
    config: server.context.config,
    realm: rt.view,
    user,
    fetchEventTypes: opts.types ? new Set(opts.types) : null,
    serverGeneration: 1,
    capabilities: { ...NO_CAPABILITIES, ...opts.capabilities },
    applyMarkdown: true,
    clientExtAvatar: true,
    includeSubscribers: opts.includeSubscribers ?? false,
    slimPresence: false,
    narrow: [],
    dialect: 'spec',
  };
  // As the client gets it: large lists are kept serialized (src/lib/preserialized.ts).
  const wire = JSON.parse(String(successJson(fetchInitialState(req), []))) as Record<
    string,
    unknown
  >;
  delete wire.result;
  delete wire.msg;
  return wire;
}

/**
 * Checks fields against the /register response description (other fields are not ours).
 * spec/API.md adds to channel objects the fields below, and `subscribers` to the register
 * `streams` (with include_subscribers) where the description has them only on subscriptions.
 */
function checkShapes(t: Test, s: Record<string, unknown>) {
  assertMatchesOpenApi(
    t,
    '/register',
    'post',
    {
      result: 'success',
      msg: '',
      queue_id: 'q',
      last_event_id: -1,
      service_feature_level: 1,
      service_version: 'x',
      service_merge_base: '',
      ...s,
    },
    {
      allowExtra: [...REGISTER_SPEC_EXTRAS, ...CHANNEL_SPEC_EXTRAS],
    },
  );
}

const names = (v: unknown) => (v as { name: string }[]).map((x) => x.name);

t.test('snapshot fields, by user', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  setRealmSettings(ts, { enable_spectator_access: true });
  const pub = await createChannel(api, 'hamlet', 'pub');
  await createChannel(api, 'iago', 'secret', { invite_only: true });
  await createChannel(api, 'desdemona', 'web', { is_web_public: true });
  const old = await createChannel(api, 'hamlet', 'old');
  assertSuccess(t, await api.delete('iago', `streams/${old}`));
  await createChannel(api, 'othello', 'left');
  assertSuccess(
    t,
    await api.delete('othello', 'users/me/subscriptions', { subscriptions: ['left'] }),
  );
  assertSuccess(t, await api.post('iago', 'default_streams', { stream_id: pub }));
  assertSuccess(
    t,
    await api.post('hamlet', 'user_topics', { stream_id: pub, topic: '', visibility_policy: 1 }),
  );
  const gid = assertSuccess(
    t,
    await api.post('hamlet', 'user_groups/create', { name: 'g', description: '', members: [] }),
  ).group_id as number;
  assertSuccess(t, await api.post('hamlet', `user_groups/${gid}/deactivate`));

  const hamlet = state(ts, 'hamlet');
  checkShapes(t, hamlet);
  t.same(
    names(hamlet.streams),
    ['left', 'pub', 'web'],
    'public and web-public, not the private one',
  );
  t.same(names(hamlet.subscriptions), ['pub']);
  t.same(names(hamlet.unsubscribed), []);
  t.same(names(hamlet.never_subscribed), ['left', 'web']);
  t.same(hamlet.realm_default_streams, [pub]);
  t.same(hamlet.user_topics, [
    {
      stream_id: pub,
      topic_name: 'general chat',
      last_updated: (hamlet.user_topics as { last_updated: number }[])[0]!.last_updated,
      visibility_policy: 1,
    },
  ]);
  t.notOk(
    (hamlet.realm_user_groups as { id: number }[]).some((g) => g.id === gid),
    'deactivated hidden',
  );

  const withCaps = state(ts, 'hamlet', {
    capabilities: {
      archived_channels: true,
      empty_topic_name: true,
      include_deactivated_groups: true,
    },
  });
  t.same(names(withCaps.streams), ['left', 'old', 'pub', 'web']);
  t.same(names(withCaps.subscriptions), ['old', 'pub']);
  t.equal((withCaps.user_topics as { topic_name: string }[])[0]!.topic_name, '');
  t.ok((withCaps.realm_user_groups as { id: number }[]).some((g) => g.id === gid));

  const othello = state(ts, 'othello');
  t.same(names(othello.unsubscribed), ['left']);

  const iago = state(ts, 'iago', { includeSubscribers: true });
  checkShapes(t, iago);
  t.same(names(iago.streams), ['left', 'pub', 'secret', 'web'], 'administrators: every channel');
  t.same(names(iago.never_subscribed), ['left', 'pub', 'web']);
  t.same(
    (iago.never_subscribed as { name: string; subscribers: number[] }[]).find(
      (s) => s.name === 'pub',
    )!.subscribers,
    [fx.users.hamlet!.id],
  );

  t.same(
    (iago.streams as { name: string; subscribers: number[] }[]).find((s) => s.name === 'pub')!
      .subscribers,
    [fx.users.hamlet!.id],
    'register streams carry subscribers when asked (spec/API.md)',
  );

  const guest = state(ts, 'polonius', { includeSubscribers: true });
  checkShapes(t, guest);
  t.same(names(guest.streams), ['web']);
  t.same(names(guest.never_subscribed), ['web']);
  t.same(guest.realm_default_streams, [], 'guests get no default channels');

  const spectator = state(ts, null);
  t.same(names(spectator.streams), ['web']);
  t.same(names(spectator.subscriptions), ['web']);
  t.same(spectator.user_topics, []);

  // Only the wanted types.
  const only = state(ts, 'hamlet', { types: ['default_streams'] });
  t.same(Object.keys(only), ['realm_default_streams']);
});
