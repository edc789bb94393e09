/**
 * `npm run bench -- channels`: the channel area under a realm of BENCH_USERS users (default 2000)
 * and BENCH_CHANNELS channels (default 100, a third of them private), each channel with 50
 * subscribers.
 *
 * 1. Writes, in-process through the realm actor (no HTTP): subscribe + unsubscribe one user to a
 *    public and to a private channel, back to back — each pair is two mutations, each computing
 *    the event audiences (who may know the channel) over every user of the realm.
 * 2. Reads over HTTP from a separate load-generator process: GET /api/v1/streams and
 *    GET /api/v1/users/me/subscriptions for a member subscribed to 20 channels.
 *
 * Options (env): BENCH_SECONDS (default 5), BENCH_CONNECTIONS (default 16).
 */
import os from 'node:os';
import { Role } from '../src/lib/roles.js';
import { runChild } from './lib/child.js';
import { createChannel, principalsOf, serverWithUsers } from './lib/seed.js';
import { fmt, machine, summarize } from './lib/stats.js';

type LoadResult = {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  errors: number;
};

export async function channelsBench(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
  const nUsers = Number(process.env.BENCH_USERS ?? 2000);
  const nChannels = Number(process.env.BENCH_CHANNELS ?? 100);
  const bench = await serverWithUsers(nUsers, 'channels', {
    role: (i) => (i % 50 === 0 ? Role.ADMINISTRATOR : Role.MEMBER),
  });
  const { server } = bench;
  const ids = bench.users.map((u) => u.id);
  const keys = new Map(bench.users.map((u) => [u.id, u.api_key]));
  const rt = server.context.realms.get(bench.realmId)!;

  // Channels, each created by a member with 50 subscribers.
  const setupStart = performance.now();
  for (let c = 0; c < nChannels; c++) {
    const creator = ids[(c * 7) % nUsers]!;
    await createChannel(
      server,
      bench.realmId,
      creator,
      `channel ${c}`,
      principalsOf(ids, c, creator),
      c % 3 === 0,
    );
  }
  const setupMs = performance.now() - setupStart;

  // A reader subscribed to 20 channels.
  const reader = ids[1]!;
  const reads = [...rt.view.channels.all()].filter((ch) => !ch.invite_only).slice(0, 20);
  await rt.ask('channel.subscribe', {
    acting_user_id: reader,
    subscriptions: reads.map((ch) => ({
      name: ch.name,
      description: null,
      rendered_description: null,
      color: null,
    })),
    principals: null,
    authorization_errors_fatal: true,
    invite_only: false,
    is_web_public: false,
    is_default_stream: false,
    history_public_to_subscribers: null,
    message_retention_days: null,
    retention_given: false,
    topics_policy: null,
    folder_id: null,
    settings: {},
  });

  // 1. Subscribe + unsubscribe pairs, in process.
  const pairs = async (channelName: string, actor: number, target: number) => {
    const lat: number[] = [];
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until) {
      const t0 = performance.now();
      await rt.ask('channel.subscribe', {
        acting_user_id: actor,
        subscriptions: [
          { name: channelName, description: null, rendered_description: null, color: null },
        ],
        principals: [target],
        authorization_errors_fatal: true,
        invite_only: false,
        is_web_public: false,
        is_default_stream: false,
        history_public_to_subscribers: null,
        message_retention_days: null,
        retention_given: false,
        topics_policy: null,
        folder_id: null,
        settings: {},
      });
      await rt.ask('channel.unsubscribe', {
        acting_user_id: actor,
        subscriptions: [channelName],
        principals: [target],
      });
      lat.push(performance.now() - t0);
    }
    return { ...summarize(lat), rps: lat.length / seconds };
  };
  const target = ids[nUsers - 1]!;
  const publicCh = [...rt.view.channels.all()].find((ch) => !ch.invite_only)!;
  const privateCh = [...rt.view.channels.all()].find((ch) => ch.invite_only)!;
  const admin = ids[0]!; // role administrator (i % 50 === 0)
  // The administrator must have content access to add to the private channel: subscribe them.
  await rt.ask('channel.subscribe', {
    acting_user_id: privateCh.creator_id!,
    subscriptions: [
      { name: privateCh.name, description: null, rendered_description: null, color: null },
    ],
    principals: [admin],
    authorization_errors_fatal: true,
    invite_only: false,
    is_web_public: false,
    is_default_stream: false,
    history_public_to_subscribers: null,
    message_retention_days: null,
    retention_given: false,
    topics_policy: null,
    folder_id: null,
    settings: {},
  });
  const pub = await pairs(publicCh.name, admin, target);
  const priv = await pairs(privateCh.name, admin, target);

  // 2. Reads over HTTP.
  const auth = {
    Authorization:
      'Basic ' + Buffer.from(`user1@bench.example:${keys.get(reader)!}`).toString('base64'),
  };
  const load = (p: string) =>
    runChild<LoadResult>(
      'loadgen.js',
      {
        port: server.port,
        path: p,
        headers: auth,
        connections,
        durationMs: seconds * 1000,
        warmupMs: 1000,
      },
      (seconds + 30) * 1000,
    );
  const streams = await load('/api/v1/streams');
  const subs = await load('/api/v1/users/me/subscriptions');
  await bench.close();

  console.log(
    `channels bench: ${nUsers} users, ${nChannels} channels (50 subscribers each), ${seconds} s per figure, ${machine()}, ${os.cpus().length} cores`,
  );
  console.log(
    `setup: ${nChannels} channel creations with 50 subscribers each in ${fmt(setupMs, 0)} ms`,
  );
  const pairRow = (name: string, s: ReturnType<typeof summarize> & { rps: number }) =>
    `${name.padEnd(40)} ${fmt(s.rps, 0).padStart(7)} pairs/s   p50 ${fmt(s.p50, 2)} ms   p99 ${fmt(s.p99, 2)} ms`;
  console.log(pairRow('subscribe+unsubscribe, public channel', pub));
  console.log(pairRow('subscribe+unsubscribe, private channel', priv));
  const readRow = (name: string, r: LoadResult) =>
    `${name.padEnd(40)} ${fmt(r.rps, 0).padStart(7)} req/s     p50 ${fmt(r.p50, 2)} ms   p99 ${fmt(r.p99, 2)} ms   errors ${r.errors}`;
  console.log(readRow('GET /streams (member)', streams));
  console.log(readRow('GET /users/me/subscriptions (20 subs)', subs));
  console.log(
    JSON.stringify({
      bench: 'channels',
      date: new Date().toISOString(),
      users: nUsers,
      channels: nChannels,
      subscribePairsPublic: pub,
      subscribePairsPrivate: priv,
      getStreams: streams,
      getSubscriptions: subs,
    }),
  );
}
