/**
 * Event variants chosen by client capability, through real queues: each change is made over HTTP
 * and read back from queues registered with and without the capability. The markers mutations
 * put on these events for the queues (`for_archiving`, `for_unarchiving`, `deactivated`) never
 * reach a client, and what a client receives matches the GET /events description.
 * Reference: tornado/event_queue.py (accepts_event and the process_* variants).
 */
import t, { type Test } from 'tap';
import { assertSuccess, type ApiClient } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { register, type Ev } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { CHANNEL_SPEC_EXTRAS } from '../helpers/spec-extras.js';
import { startServer } from '../helpers/server.js';

/** A registered queue, read without blocking: each read returns what arrived since the last. */
class Reader {
  private last = -1;
  constructor(
    private readonly t: Test,
    private readonly api: ApiClient,
    readonly who: string,
    readonly queueId: string,
  ) {}

  static async open(
    t: Test,
    api: ApiClient,
    who: string,
    params: Record<string, unknown>,
  ): Promise<Reader> {
    const q = await register(t, api, who, params);
    return new Reader(t, api, who, q.queue_id);
  }

  async take(): Promise<Ev[]> {
    const res = await this.api.get(this.who, 'events', {
      queue_id: this.queueId,
      last_event_id: this.last,
      dont_block: true,
    });
    const body = assertSuccess(this.t, res, `GET /events for ${this.who}`);
    assertMatchesOpenApi(this.t, '/events', 'get', body, { allowExtra: CHANNEL_SPEC_EXTRAS });
    const evs = body.events as Ev[];
    if (evs.length > 0) this.last = evs[evs.length - 1]!.id;
    return evs;
  }
}

const MARKERS = ['for_archiving', 'for_unarchiving', 'deactivated'];

function noMarkers(t: Test, evs: Ev[]): void {
  for (const e of evs) {
    for (const m of MARKERS)
      if (m in e) t.fail(`a ${e.type} ${String(e.op)} event reached a client with ${m}`);
  }
}

t.test('archiving and unarchiving a channel, with and without archived_channels', async (t) => {
  const { api, fx } = await startServer(t);
  const id = (who: string) => fx.users[who]!.id;
  const ch = await createChannel(api, 'hamlet', 'old news', {
    principals: [id('hamlet'), id('othello')],
  });
  const types = { event_types: ['stream'] };
  const modern = await Reader.open(t, api, 'othello', {
    ...types,
    client_capabilities: { archived_channels: true },
  });
  const legacy = await Reader.open(t, api, 'othello', types);
  // Not subscribed, public channel: still knows the channel, so gets the same.
  const modernCordelia = await Reader.open(t, api, 'cordelia', {
    ...types,
    client_capabilities: { archived_channels: true },
  });
  const legacyCordelia = await Reader.open(t, api, 'cordelia', types);

  assertSuccess(t, await api.delete('hamlet', `streams/${ch}`));
  const archived = { type: 'stream', op: 'update', stream_id: ch, name: 'old news' };
  for (const r of [modern, modernCordelia]) {
    const evs = await r.take();
    t.match(evs, [{ ...archived, property: 'is_archived', value: true }], `${r.who}: update`);
    t.equal(evs.length, 1);
    noMarkers(t, evs);
  }
  for (const r of [legacy, legacyCordelia]) {
    const evs = await r.take();
    t.same(
      evs.map(({ id: _id, ...e }) => e),
      [{ type: 'stream', op: 'delete', streams: [{ stream_id: ch }], stream_ids: [ch] }],
      `${r.who}: the channel is deleted, without the marker`,
    );
  }

  assertSuccess(t, await api.patch('hamlet', `streams/${ch}`, { is_archived: false }));
  for (const r of [modern, modernCordelia]) {
    const evs = await r.take();
    t.match(evs, [{ ...archived, property: 'is_archived', value: false }], `${r.who}: update`);
    t.equal(evs.length, 1);
    noMarkers(t, evs);
  }
  for (const r of [legacy, legacyCordelia]) {
    const evs = await r.take();
    t.match(
      evs,
      [{ type: 'stream', op: 'create', streams: [{ stream_id: ch, name: 'old news' }] }],
      `${r.who}: the channel is created again`,
    );
    t.equal(evs.length, 1);
    noMarkers(t, evs);
    t.equal((evs[0]!.streams as { is_archived: boolean }[])[0]!.is_archived, false);
  }

  // A register snapshot without the capability has no archived channel; with it, it has.
  assertSuccess(t, await api.delete('hamlet', `streams/${ch}`));
  const snap = async (caps: Record<string, boolean>) =>
    (
      (
        await register(t, api, 'othello', {
          fetch_event_types: ['stream'],
          client_capabilities: caps,
        })
      ).body.streams as { stream_id: number }[]
    ).some((s) => s.stream_id === ch);
  t.equal(await snap({}), false);
  t.equal(await snap({ archived_channels: true }), true);
});

t.test('archiving a private channel: only who may know it, by capability', async (t) => {
  const { api, fx } = await startServer(t);
  const id = (who: string) => fx.users[who]!.id;
  const ch = await createChannel(api, 'hamlet', 'hush', {
    invite_only: true,
    principals: [id('hamlet')],
  });
  const caps = { client_capabilities: { archived_channels: true } };
  const readers = {
    hamletModern: await Reader.open(t, api, 'hamlet', caps),
    hamletLegacy: await Reader.open(t, api, 'hamlet', {}),
    iagoModern: await Reader.open(t, api, 'iago', caps),
    iagoLegacy: await Reader.open(t, api, 'iago', {}),
    othelloModern: await Reader.open(t, api, 'othello', caps),
    othelloLegacy: await Reader.open(t, api, 'othello', {}),
  };
  assertSuccess(t, await api.delete('hamlet', `streams/${ch}`));
  for (const [name, r] of Object.entries(readers)) {
    const evs = (await r.take()).filter((e) => e.type === 'stream');
    noMarkers(t, evs);
    if (name.startsWith('othello')) t.same(evs, [], `${name}: nothing`);
    else if (name.endsWith('Modern'))
      t.match(evs, [{ op: 'update', property: 'is_archived', value: true }], name);
    else t.match(evs, [{ op: 'delete', stream_ids: [ch] }], name);
  }
});

t.test('deactivating and renaming a user group, with and without the capability', async (t) => {
  const { api, fx } = await startServer(t);
  const gid = assertSuccess(
    t,
    await api.post('hamlet', 'user_groups/create', {
      name: 'leads',
      description: 'team leads',
      members: [fx.users.hamlet!.id],
    }),
  ).group_id as number;
  const types = { event_types: ['user_group'] };
  const modern = await Reader.open(t, api, 'othello', {
    ...types,
    client_capabilities: { include_deactivated_groups: true },
  });
  const legacy = await Reader.open(t, api, 'othello', types);

  assertSuccess(t, await api.post('hamlet', `user_groups/${gid}/deactivate`));
  const m = await modern.take();
  t.same(
    m.map(({ id: _id, ...e }) => e),
    [{ type: 'user_group', op: 'update', group_id: gid, data: { deactivated: true } }],
  );
  const l = await legacy.take();
  t.same(
    l.map(({ id: _id, ...e }) => e),
    [{ type: 'user_group', op: 'remove', group_id: gid }],
  );

  // A deactivated group may be renamed: only clients that keep deactivated groups hear of it.
  assertSuccess(t, await api.patch('hamlet', `user_groups/${gid}`, { name: 'former leads' }));
  const m2 = await modern.take();
  t.same(
    m2.map(({ id: _id, ...e }) => e),
    [{ type: 'user_group', op: 'update', group_id: gid, data: { name: 'former leads' } }],
  );
  noMarkers(t, m2);
  t.same(await legacy.take(), [], 'no event about a group this client does not know');

  // An active group's rename reaches both.
  const other = assertSuccess(
    t,
    await api.post('hamlet', 'user_groups/create', { name: 'ops', description: '', members: [] }),
  ).group_id as number;
  await modern.take();
  await legacy.take();
  assertSuccess(t, await api.patch('hamlet', `user_groups/${other}`, { name: 'operations' }));
  for (const r of [modern, legacy]) {
    const evs = await r.take();
    t.match(evs, [{ op: 'update', group_id: other, data: { name: 'operations' } }], r.who);
    noMarkers(t, evs);
  }
});

t.test('user_topic in the empty topic, with and without empty_topic_name', async (t) => {
  const { api } = await startServer(t);
  const ch = await createChannel(api, 'hamlet', 'lounge');
  const types = { event_types: ['user_topic'] };
  const modern = await Reader.open(t, api, 'hamlet', {
    ...types,
    client_capabilities: { empty_topic_name: true },
  });
  const legacy = await Reader.open(t, api, 'hamlet', types);
  assertSuccess(
    t,
    await api.post('hamlet', 'user_topics', { stream_id: ch, topic: '', visibility_policy: 1 }),
  );
  t.match(await modern.take(), [{ type: 'user_topic', stream_id: ch, topic_name: '' }]);
  t.match(await legacy.take(), [
    { type: 'user_topic', stream_id: ch, topic_name: 'general chat', visibility_policy: 1 },
  ]);
  // A named topic is the same for both.
  assertSuccess(
    t,
    await api.post('hamlet', 'user_topics', { stream_id: ch, topic: 'tea', visibility_policy: 1 }),
  );
  t.match(await modern.take(), [{ topic_name: 'tea' }]);
  t.match(await legacy.take(), [{ topic_name: 'tea' }]);
});
