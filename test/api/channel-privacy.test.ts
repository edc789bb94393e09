/**
 * "A private-channel event never reaches a non-subscriber" (issue #3), through real queues: users
 * of every role register queues (some with all_public_streams, some with and some without the
 * archived_channels and stream_typing_notifications capabilities), then a private channel is
 * created, changed, joined, left, typed in and archived over HTTP. Each queue must receive exactly
 * the events its user may see — and a user who may not know the channel exists receives nothing
 * that mentions it. Who may know a private channel (the reference's rules): its subscribers, and
 * the organization's administrators and owners (metadata only: they see it exists and who is
 * subscribed, not its content — no typing).
 */
import t, { type Test } from 'tap';
import { assertSuccess, type ApiClient } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { register, type Ev } from '../helpers/events.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { CHANNEL_SPEC_EXTRAS } from '../helpers/spec-extras.js';
import { startServer } from '../helpers/server.js';

const NAME = 'cloak-and-dagger';
const RENAMED = 'dagger-and-cloak';
const DESCRIPTION = 'plans nobody else may read';

type Queue = { label: string; who: string; queueId: string; got: Ev[]; last: number };

async function open(
  t: Test,
  api: ApiClient,
  label: string,
  who: string,
  params: Record<string, unknown> = {},
): Promise<Queue> {
  const q = await register(t, api, who, params);
  return { label, who, queueId: q.queue_id, got: [], last: -1 };
}

/** Reads what arrived (the request that caused it has been answered: it is all there). */
async function drain(t: Test, api: ApiClient, q: Queue): Promise<Ev[]> {
  const res = await api.get(q.who, 'events', {
    queue_id: q.queueId,
    last_event_id: q.last,
    dont_block: true,
  });
  const body = assertSuccess(t, res, `GET /events for ${q.label}`);
  assertMatchesOpenApi(t, '/events', 'get', body, { allowExtra: CHANNEL_SPEC_EXTRAS });
  const evs = body.events as Ev[];
  if (evs.length > 0) q.last = evs[evs.length - 1]!.id;
  q.got.push(...evs);
  return evs;
}

/** Whether an event says anything about the channel: its id in a channel field, or its names. */
function mentions(v: unknown, id: number, key = ''): boolean {
  if (typeof v === 'string') return v.includes(NAME) || v.includes(RENAMED) || v.includes('nobody');
  if (typeof v === 'number') return v === id && /stream_id|^streams?$/.test(key);
  if (Array.isArray(v)) return v.some((x) => mentions(x, id, key));
  if (v !== null && typeof v === 'object')
    return Object.entries(v).some(([k, x]) => mentions(x, id, k));
  return false;
}

const kind = (e: Ev) => [e.type, e.op, e.property].filter((x) => typeof x === 'string').join(' ');

t.test('a private channel reaches exactly the users who may know it', async (t) => {
  const { api, fx } = await startServer(t);
  const id = (who: string) => fx.users[who]!.id;
  const everything = { client_capabilities: { stream_typing_notifications: true } };
  const modern = {
    client_capabilities: { stream_typing_notifications: true, archived_channels: true },
  };
  const q = {
    hamlet: await open(t, api, 'hamlet (creator, subscribed)', 'hamlet', everything),
    prospero: await open(t, api, 'prospero (subscribed, then leaves)', 'prospero', everything),
    iago: await open(t, api, 'iago (administrator)', 'iago', everything),
    iagoModern: await open(t, api, 'iago (administrator, archived_channels)', 'iago', modern),
    desdemona: await open(t, api, 'desdemona (owner, all_public_streams)', 'desdemona', {
      ...everything,
      all_public_streams: true,
    }),
    othello: await open(t, api, 'othello (member)', 'othello', everything),
    cordelia: await open(t, api, 'cordelia (member, all_public_streams)', 'cordelia', {
      ...modern,
      all_public_streams: true,
    }),
    shiva: await open(t, api, 'shiva (moderator)', 'shiva', modern),
    polonius: await open(t, api, 'polonius (guest)', 'polonius', everything),
  };
  const admins = [q.iago, q.iagoModern, q.desdemona];
  const outsiders = [q.othello, q.cordelia, q.shiva, q.polonius];
  const step = async (
    what: string,
    expected: [Queue[], string[]][],
    action: () => Promise<unknown>,
  ) => {
    await action();
    const listed = new Set<Queue>();
    for (const [queues, kinds] of expected) {
      for (const queue of queues) {
        listed.add(queue);
        const evs = await drain(t, api, queue);
        t.same(evs.map(kind), kinds, `${what}: ${queue.label}`);
      }
    }
    for (const queue of Object.values(q)) {
      if (listed.has(queue)) continue;
      t.same((await drain(t, api, queue)).map(kind), [], `${what}: ${queue.label} gets nothing`);
    }
  };

  let ch = 0;
  await step(
    'created',
    [
      [[q.hamlet], ['stream create', 'subscription add']],
      [admins, ['stream create', 'subscription peer_add']],
    ],
    async () => {
      ch = await createChannel(api, 'hamlet', NAME, { invite_only: true });
    },
  );
  t.match(q.hamlet.got[1], { subscriptions: [{ stream_id: ch, name: NAME, invite_only: true }] });
  t.match(q.iago.got[1], { stream_ids: [ch], user_ids: [id('hamlet')] });

  await step(
    'described and renamed',
    [
      [
        [q.hamlet, ...admins],
        ['stream update description', 'stream update name'],
      ],
    ],
    async () =>
      assertSuccess(
        t,
        await api.patch('hamlet', `streams/${ch}`, { description: DESCRIPTION, new_name: RENAMED }),
      ),
  );

  await step(
    'prospero subscribed',
    [
      [[q.prospero], ['stream create', 'subscription add']],
      [[q.hamlet, ...admins], ['subscription peer_add']],
    ],
    async () =>
      assertSuccess(
        t,
        await api.post('hamlet', 'users/me/subscriptions', {
          subscriptions: [{ name: RENAMED }],
          principals: [id('prospero')],
        }),
      ),
  );
  t.match(q.prospero.got[0], { streams: [{ stream_id: ch, name: RENAMED }] });

  await step('typing', [[[q.hamlet, q.prospero], ['typing start']]], async () =>
    assertSuccess(
      t,
      await api.post('hamlet', 'typing', {
        type: 'channel',
        op: 'start',
        stream_id: ch,
        topic: 'heist',
      }),
    ),
  );

  await step(
    'prospero leaves',
    [
      [[q.prospero], ['subscription remove', 'stream delete']],
      [[q.hamlet, ...admins], ['subscription peer_remove']],
    ],
    async () =>
      assertSuccess(
        t,
        await api.delete('prospero', 'users/me/subscriptions', { subscriptions: [RENAMED] }),
      ),
  );

  await step(
    'archived',
    [
      [[q.iagoModern], ['stream update is_archived']],
      [[q.hamlet, q.iago, q.desdemona], ['stream delete']],
    ],
    async () => assertSuccess(t, await api.delete('hamlet', `streams/${ch}`)),
  );

  // Nothing anywhere in an outsider's queue names the channel, and nobody's queue carries the
  // markers the event queues strip.
  for (const queue of outsiders) {
    t.same(q[queue.who as keyof typeof q].got, [], `${queue.label}: nothing at all`);
    t.notOk(
      queue.got.some((e) => mentions(e, ch)),
      `${queue.label}: nothing mentions the channel`,
    );
  }
  for (const queue of Object.values(q)) {
    for (const e of queue.got) {
      t.notOk('for_archiving' in e || 'for_unarchiving' in e, `${queue.label}: no queue marker`);
    }
  }
  // The register snapshot agrees: outsiders do not see the (archived) channel either.
  for (const who of ['othello', 'shiva', 'polonius']) {
    const snap = await register(t, api, who, {
      fetch_event_types: ['stream', 'subscription'],
      client_capabilities: { archived_channels: true },
    });
    t.notOk(mentions(snap.body.streams, ch), `${who}'s streams`);
    t.notOk(mentions(snap.body.never_subscribed, ch), `${who}'s never_subscribed`);
  }
});

t.test('a guest learns of a private channel only by being subscribed', async (t) => {
  const { api, fx } = await startServer(t);
  const id = (who: string) => fx.users[who]!.id;
  const polonius = await open(t, api, 'polonius (guest)', 'polonius');
  const othello = await open(t, api, 'othello (member)', 'othello');
  const ch = await createChannel(api, 'iago', NAME, { invite_only: true });
  t.same(await drain(t, api, polonius), []);
  assertSuccess(
    t,
    await api.post('iago', 'users/me/subscriptions', {
      subscriptions: [{ name: NAME }],
      principals: [id('polonius')],
    }),
  );
  t.same((await drain(t, api, polonius)).map(kind), ['stream create', 'subscription add']);
  assertSuccess(t, await api.patch('iago', `streams/${ch}`, { description: DESCRIPTION }));
  t.same((await drain(t, api, polonius)).map(kind), ['stream update description']);
  assertSuccess(
    t,
    await api.delete('iago', 'users/me/subscriptions', {
      subscriptions: [NAME],
      principals: [id('polonius')],
    }),
  );
  t.same((await drain(t, api, polonius)).map(kind), ['subscription remove', 'stream delete']);
  assertSuccess(t, await api.patch('iago', `streams/${ch}`, { description: 'later' }));
  t.same(await drain(t, api, polonius), [], 'after leaving: nothing');
  t.same(await drain(t, api, othello), [], 'a member never subscribed: nothing throughout');
});

t.test('making a channel private or public changes who hears of it', async (t) => {
  const { api, fx } = await startServer(t);
  const id = (who: string) => fx.users[who]!.id;
  const ch = await createChannel(api, 'iago', NAME, { principals: [id('iago'), id('hamlet')] });
  const othello = await open(t, api, 'othello (member)', 'othello', {
    all_public_streams: true,
  });
  const hamlet = await open(t, api, 'hamlet (subscribed)', 'hamlet');
  assertSuccess(t, await api.patch('iago', `streams/${ch}`, { is_private: true }));
  t.same((await drain(t, api, othello)).map(kind), ['stream delete'], 'loses it');
  // Private channels default to protected history: two properties change.
  t.same((await drain(t, api, hamlet)).map(kind), [
    'stream update invite_only',
    'stream update history_public_to_subscribers',
  ]);
  assertSuccess(t, await api.patch('iago', `streams/${ch}`, { description: DESCRIPTION }));
  t.same(await drain(t, api, othello), [], 'private now: nothing');
  assertSuccess(
    t,
    await api.post('iago', 'typing', { type: 'channel', op: 'start', stream_id: ch, topic: 'x' }),
  );
  t.same(await drain(t, api, othello), []);
  assertSuccess(t, await api.patch('iago', `streams/${ch}`, { is_private: false }));
  t.match(await drain(t, api, othello), [
    { type: 'stream', op: 'create', streams: [{ stream_id: ch, description: DESCRIPTION }] },
    { type: 'subscription', op: 'peer_add', stream_ids: [ch] },
  ]);
});
