/**
 * `npm run bench -- settings`: the settings and administration mutations in a realm of
 * BENCH_USERS users (default 2000) and 100 channels (a third private, 50 subscribers each), in
 * process through the realm actor (no HTTP, no queues registered):
 *
 * 1. a personal setting (`user.settings.update`, one boolean; events to the user only);
 * 2. a name change by an administrator (`user.update`; a realm_user event to everyone);
 * 3. a role change, member ↔ moderator (`user.update`; groups, full members, and the channels
 *    the user may know before and after — the "after" read is a fresh read model of the realm);
 * 4. a realm group setting (`realm.update`; validation, the update_dict event and the deprecated
 *    policy derived from it, to everyone).
 *
 * Each op runs BENCH_OPS times (default 400; role changes a quarter of that); prints ops/s and
 * p50/p99 latency of `ask` (the whole mutation: checks, writes, COMMIT, read-model refresh).
 */
import { Role } from '../src/lib/roles.js';
import { createChannel, principalsOf, serverWithUsers } from './lib/seed.js';
import { fmt, machine, summarize } from './lib/stats.js';

export async function settingsBench(): Promise<void> {
  const nUsers = Number(process.env.BENCH_USERS ?? 2000);
  const nOps = Number(process.env.BENCH_OPS ?? 400);
  const nChannels = 100;
  const bench = await serverWithUsers(nUsers, 'settings', {
    role: (i) => (i % 50 === 0 ? Role.ADMINISTRATOR : Role.MEMBER),
  });
  try {
    const { server } = bench;
    const { realms } = server.context;
    const ids = bench.users.map((u) => u.id);
    const rt = realms.get(bench.realmId)!;
    for (let c = 0; c < nChannels; c++) {
      const creator = ids[(c * 7 + 1) % nUsers]!;
      await createChannel(
        server,
        bench.realmId,
        creator,
        `channel ${c}`,
        principalsOf(ids, c, creator),
        c % 3 === 0,
      );
    }
    const admin = ids[0]!;
    const members = ids.filter((_, i) => i % 50 !== 0);
    const moderators = rt.view.systemGroupId('role:moderators');
    const everyMember = rt.view.systemGroupId('role:members');

    const measure = async (label: string, n: number, op: (i: number) => Promise<unknown>) => {
      const samples: number[] = [];
      const started = performance.now();
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        await op(i);
        samples.push(performance.now() - t0);
      }
      const seconds = (performance.now() - started) / 1000;
      const s = summarize(samples);
      console.log(
        `  ${label.padEnd(34)} ${fmt(n / seconds, 0).padStart(7)} ops/s   p50 ${fmt(s.p50, 3)} ms   p99 ${fmt(s.p99, 3)} ms`,
      );
    };

    console.log(
      `settings: ${nUsers} users, ${nChannels} channels, ${nOps} ops each (${machine()})`,
    );
    await measure('personal setting (enter_sends)', nOps, (i) =>
      rt.ask('user.settings.update', {
        user_id: members[i % members.length]!,
        settings: { enter_sends: i % 2 === 0 },
        fake_email_domain: 'example.com',
      }),
    );
    await measure('name change by an administrator', nOps, (i) =>
      rt.ask('user.update', {
        acting_user_id: admin,
        user_id: members[i % members.length]!,
        full_name: `Renamed ${i}`,
      }),
    );
    const nRoles = Math.max(1, Math.floor(nOps / 4));
    await measure('role change member <-> moderator', nRoles, (i) =>
      rt.ask('user.update', {
        acting_user_id: admin,
        user_id: members[Math.floor(i / 2) % members.length]!,
        role: i % 2 === 0 ? Role.MODERATOR : Role.MEMBER,
      }),
    );
    await measure('realm group setting', nOps, (i) =>
      rt.ask('realm.update', {
        acting_user_id: admin,
        settings: {},
        group_settings: {
          can_create_public_channel_group: { new: i % 2 === 0 ? moderators : everyMember },
        },
      }),
    );
  } finally {
    await bench.close();
  }
}
