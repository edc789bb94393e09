/**
 * POST /register's `streams`, `never_subscribed` and `realm_user_groups` come from lists shared
 * by every register (the open channels, spliced per member; the groups), kept until what they
 * show changes. For a member, an administrator, a guest and a member with unsubscribed and
 * private channels, with and without the capabilities that widen them, they equal what asking
 * each channel gives (streamsJsonByChannel, gatherSubscriptions over every channel,
 * listUserGroups) — first, and again after each kind of change, so that no cache goes stale;
 * only is_recently_active may lag, by at most the shared list's age limit.
 */
import zlib from 'node:zlib';
import t, { type Test } from 'tap';
import { nowSeconds } from '../../src/config.js';
import { capabilitiesFrom } from '../../src/delivery/filter.js';
import { gatherSubscriptions, OPEN_CHANNELS_MAX_AGE } from '../../src/queries/channels.js';
import type { StateRequest } from '../../src/queries/initial-state.js';
import { streamsJsonByChannel } from '../../src/queries/state/channels.js';
import { listUserGroups } from '../../src/queries/user-groups.js';
import { assertSuccess, gzipPost } from '../helpers/api.js';
import { createChannel, setRealmSettings, systemGroupId } from '../helpers/channels.js';
import { TestClock } from '../helpers/clock.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { SEGMENT } from '../../src/http/gzip.js';

const WHO = ['hamlet', 'iago', 'polonius', 'othello', 'cordelia'];
const CAPABILITIES = [{}, { archived_channels: true, include_deactivated_groups: true }] as const;
const FIELDS = [
  'streams',
  'subscriptions',
  'unsubscribed',
  'never_subscribed',
  'realm_user_groups',
];

/** The fields as the per-channel path makes them, for `who` with `caps`. */
function expected(ts: TestServer, who: string, caps: Record<string, boolean>) {
  const { server, fx } = ts;
  const view = server.context.realms.get(fx.realmId)!.view;
  const user = view.user(fx.users[who]!.id)!;
  const capabilities = capabilitiesFrom(caps);
  const now = nowSeconds(server.context.config);
  const req: StateRequest = {
    store: server.store,
    config: server.context.config,
    realm: view,
    user,
    fetchEventTypes: null,
    capabilities,
    applyMarkdown: true,
    clientExtAvatar: true,
    includeSubscribers: false,
    slimPresence: false,
    narrow: [],
    serverGeneration: 1,
    dialect: 'spec',
  };
  const lists = gatherSubscriptions(view, user.id, {
    includeSubscribers: false,
    includeArchived: capabilities.archived_channels,
    nowSeconds: now,
  });
  return JSON.parse(
    JSON.stringify({
      streams: JSON.parse(streamsJsonByChannel(req, now)) as unknown,
      subscriptions: lists.subscriptions,
      unsubscribed: lists.unsubscribed,
      never_subscribed: lists.never_subscribed,
      realm_user_groups: listUserGroups(view, capabilities.include_deactivated_groups),
    }),
  ) as Record<string, unknown>;
}

async function compare(t: Test, ts: TestServer, when: string): Promise<void> {
  for (const who of WHO) {
    for (const caps of CAPABILITIES) {
      const res = await ts.api.post(who, 'register', {
        fetch_event_types: ['stream', 'subscription', 'realm_user_groups'],
        client_capabilities: caps,
      });
      const body = assertSuccess(t, res, `${when}: ${who} registers`);
      const want = expected(ts, who, caps);
      for (const field of FIELDS)
        t.same(body[field], want[field], `${when}: ${who} ${JSON.stringify(caps)} ${field}`);
      assertSuccess(t, await ts.api.delete(who, 'events', { queue_id: body.queue_id }));
    }
  }
}

t.test('shared register lists equal the per-channel ones, through changes', async (t) => {
  const clock = new TestClock();
  const ts = await startServer(t, { clock: clock.now });
  const { api, fx } = ts;
  const id = (who: string) => fx.users[who]!.id;

  // Enough open channels for the shared list to span gzip segments; some private, one web-public.
  const names = Array.from({ length: 120 }, (_, i) => `open ${String(i).padStart(2, '0')}`);
  assertSuccess(
    t,
    await api.post('desdemona', 'users/me/subscriptions', {
      subscriptions: names.map((name) => ({ name, description: `About ${name}` })),
    }),
  );
  const open = await Promise.all(names.map((n) => createChannel(api, 'desdemona', n)));
  const secret = await createChannel(api, 'desdemona', 'secret', { invite_only: true });
  const crew = assertSuccess(
    t,
    await api.post('desdemona', 'user_groups/create', {
      name: 'crew',
      description: 'may join the club',
      members: [id('othello')],
    }),
  ).group_id as number;
  await createChannel(api, 'desdemona', 'club', {
    invite_only: true,
    can_subscribe_group: crew,
  });
  setRealmSettings(ts, { enable_spectator_access: true });
  await createChannel(api, 'desdemona', 'web', {
    is_web_public: true,
    can_send_message_group: systemGroupId(ts, 'role:members'),
  });
  // Othello (and the guest): a private channel they are in, and rows left behind in an open and
  // a private one.
  for (const name of ['private room', 'left private', 'open 07', 'open 30'])
    assertSuccess(
      t,
      await api.post('desdemona', 'users/me/subscriptions', {
        subscriptions: [{ name }],
        principals: [id('othello'), id('polonius')],
        invite_only: name.includes('private'),
      }),
    );
  assertSuccess(
    t,
    await api.delete('othello', 'users/me/subscriptions', {
      subscriptions: ['left private', 'open 30'],
    }),
  );
  await compare(t, ts, 'at first');
  await compare(t, ts, 'again, from the caches');

  // A gzipped register reads back as the plain one (views of the shared list's segments).
  const plain = assertSuccess(t, await api.post('hamlet', 'register', {}));
  const size = Buffer.byteLength(JSON.stringify(plain.streams));
  t.ok(size > 2 * SEGMENT, `streams: ${size} bytes, whole segments`);
  let raw: Awaited<ReturnType<typeof gzipPost>> | null = null;
  // (Bounded by time, not by tries: on a loaded machine the pool's threads wait for a core.)
  for (
    const start = Date.now();
    Date.now() - start < 60_000 && raw?.headers['content-encoding'] !== 'gzip';
  ) {
    if (raw) await new Promise((r) => setTimeout(r, 20));
    raw = await gzipPost(ts.url, fx.users.hamlet!, 'register', {});
  }
  t.equal(raw!.headers['content-encoding'], 'gzip', 'gzipped');
  const unzipped = JSON.parse(zlib.gunzipSync(raw!.body).toString()) as Record<string, unknown>;
  for (const field of FIELDS) t.same(unzipped[field], plain[field], `gzipped ${field}`);

  assertSuccess(t, await api.patch('desdemona', `streams/${open[3]}`, { new_name: 'zz renamed' }));
  await compare(t, ts, 'after a rename');

  assertSuccess(
    t,
    await api.post('hamlet', 'users/me/subscriptions', { subscriptions: [{ name: 'open 12' }] }),
  );
  assertSuccess(
    t,
    await api.delete('othello', 'users/me/subscriptions', { subscriptions: ['open 07'] }),
  );
  await compare(t, ts, 'after subscribing and unsubscribing');

  // Hamlet joins the group: the group lists change, and he may now know the club.
  assertSuccess(
    t,
    await api.post('desdemona', `user_groups/${crew}/members`, { add: [id('hamlet')] }),
  );
  await compare(t, ts, 'after a group member was added');

  // A first message gives an open channel its first_message_id; a second one changes nothing.
  await sendChannelMessage(api, 'desdemona', 'open 40', 'hello', 'first');
  await compare(t, ts, 'after a first message');
  await sendChannelMessage(api, 'desdemona', 'open 40', 'hello', 'second');
  await compare(t, ts, 'after a second message');

  assertSuccess(t, await api.patch('desdemona', `streams/${open[5]}`, { is_private: true }));
  assertSuccess(t, await api.delete('desdemona', `streams/${open[9]}`));
  assertSuccess(t, await api.delete('desdemona', `streams/${secret}`));
  await compare(t, ts, 'after privacy changes and archiving');

  assertSuccess(t, await api.delete('iago', `users/${id('prospero')}`));
  await compare(t, ts, 'after a user was deactivated');
  const spare = assertSuccess(
    t,
    await api.post('desdemona', 'user_groups/create', {
      name: 'spare',
      description: '',
      members: [id('cordelia')],
    }),
  ).group_id as number;
  assertSuccess(t, await api.post('desdemona', `user_groups/${spare}/deactivate`));
  await compare(t, ts, 'after a group was deactivated');

  // 180 days without messages: no channel is recently active any more.
  clock.advance(181 * 86400);
  await compare(t, ts, '181 days later');
  // A message to a channel with messages already: its is_recently_active in the shared list lags
  // (OPEN_CHANNELS_MAX_AGE), then catches up.
  await sendChannelMessage(api, 'desdemona', 'open 40', 'hello', 'after a long time');
  const lagging = assertSuccess(t, await api.post('cordelia', 'register', {}));
  const recent = (body: Record<string, unknown>) =>
    (body.streams as { name: string; is_recently_active: boolean }[]).find(
      (s) => s.name === 'open 40',
    )!.is_recently_active;
  t.equal(recent(lagging), false, 'not yet');
  clock.advance(OPEN_CHANNELS_MAX_AGE);
  await compare(t, ts, 'the shared list’s age limit later');
  t.equal(recent(assertSuccess(t, await api.post('cordelia', 'register', {}))), true, 'now');
});
