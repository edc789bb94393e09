/**
 * The in-memory presence's change log (src/queries/presence.ts): `changedSince` answers exactly
 * the records a full scan would (each user once, at its latest change), also after the log is
 * compacted; the modern answer assembled from cached JSON equals the object answer's JSON; and in
 * a large realm the answer shared from a snapshot carries every shown presence, each once.
 */
import type http from 'node:http';
import zlib from 'node:zlib';
import t from 'tap';
import { rng } from '../../bench/lib/open-loop.js';
import {
  PRESENCE_SNAPSHOT_MAX_AGE,
  PRESENCE_SNAPSHOT_MIN,
  presenceSnapshotFor,
  presencesFor,
  presencesJsonFor,
  realmPresence,
  RealmPresence,
} from '../../src/queries/presence.js';
import { compressedSize } from '../../src/http/gzip.js';
import { assertSuccess, gzipPost } from '../helpers/api.js';
import { insertMembers } from '../helpers/fixtures.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';

t.test('changedSince equals a scan, through compactions', (t) => {
  const p = new RealmPresence(1, [
    { user_id: 7, realm_id: 1, last_active_time: 10, last_connected_time: 10, last_update_id: 3 },
    { user_id: 5, realm_id: 1, last_active_time: 10, last_connected_time: 10, last_update_id: 1 },
  ]);
  const random = rng(5);
  const scan = (fetched: number) =>
    [...p.entries()]
      .filter(([, r]) => r.last_update_id > fetched)
      .sort((a, b) => a[1].last_update_id - b[1].last_update_id);
  for (let i = 0; i < 3000; i++) {
    const user = 1 + Math.floor(random() * 40);
    p.put(user, { last_active_time: i, last_connected_time: i, last_update_id: 0 });
    if (i % 97 === 0) {
      for (const fetched of [-1, 0, 1, p.lastUpdateId - 30, p.lastUpdateId - 1, p.lastUpdateId]) {
        const got = [...p.changedSince(fetched)];
        t.same(got, scan(fetched), `after ${i} puts, since ${fetched}`);
      }
    }
  }
  t.equal(p.get(5)?.last_update_id !== undefined, true);
  t.end();
});

t.test('modern answer from cached JSON equals the object answer', async (t) => {
  const ts = await startServer(t);
  const { server, fx } = ts;
  const rt = server.context.realms.get(fx.realmId)!;
  const presence = realmPresence(server.context.store, rt.view);
  const now = Math.floor(Date.now() / 1000);
  const ids = Object.values(fx.users).map((u) => u.id);
  ids.forEach((id, i) =>
    presence.put(id, {
      last_active_time: i % 3 === 0 ? null : now - i,
      last_connected_time: now - i,
      last_update_id: 0,
    }),
  );
  for (const lastUpdateId of [null, -1, 0, 2, presence.lastUpdateId - 1, presence.lastUpdateId]) {
    const q = { lastUpdateId, historyLimitDays: null, now };
    const obj = presencesFor(rt.view, presence, { ...q, slim: true });
    for (let k = 0; k < 2; k++) {
      const json = presencesJsonFor(rt.view, presence, q); // the second time from the cache
      t.same(JSON.parse(json.presences), obj.presences, `since ${lastUpdateId}`);
      t.equal(json.presence_last_update_id, obj.presence_last_update_id);
    }
  }
});

t.test(
  'large realms: pings answered from a shared snapshot carry every shown presence',
  async (t) => {
    const ts = await startServer(t);
    const { server, fx, api } = ts;
    const store = server.store;
    const rt = server.context.realms.get(fx.realmId)!;
    const now = Math.floor(Date.now() / 1000);
    // Enough members for the snapshot (PRESENCE_SNAPSHOT_MIN), written as user creation writes them.
    const made = insertMembers(server, fx.realmId, PRESENCE_SNAPSHOT_MIN + 40);
    const presence = realmPresence(store, rt.view);
    const ids = [...Object.values(fx.users).map((u) => u.id), ...made];
    // Every user pinged in the last minute (one of them 20 days ago: not shown).
    ids.forEach((id, i) =>
      presence.put(id, {
        last_active_time: i % 5 === 0 ? null : now - (i % 60),
        last_connected_time: id === made[7] ? now - 20 * 86400 : now - (i % 60),
        last_update_id: 0,
      }),
    );
    const q = (lastUpdateId: number | null) => ({ lastUpdateId, historyLimitDays: null, now });
    const full = () => presencesFor(rt.view, presence, { ...q(null), slim: true });
    /** The snapshot's answer as text and parsed, checked for repeated users. */
    const shared = (lastUpdateId: number | null) => {
      const s = presenceSnapshotFor(rt.view, presence, q(lastUpdateId));
      if (!s) return null;
      const text = s.presences.toString();
      const parsed = JSON.parse(text) as Record<string, unknown>;
      t.equal(text.match(/"\d+":\{/g)?.length, Object.keys(parsed).length, 'each user once');
      return { presences: parsed, id: s.presence_last_update_id };
    };

    const early = presence.lastUpdateId - ids.length + 3; // nearly everyone changed since
    const first = shared(early)!;
    t.ok(first, 'used when most presences changed since the last fetch');
    t.same(first.presences, full().presences, 'every shown presence');
    t.notOk(String(made[7]) in first.presences, 'not one past the history limit');
    t.equal(first.id, presence.lastUpdateId, 'as of the snapshot: every change up to now');
    t.equal(shared(null)?.presences && Object.keys(shared(null)!.presences).length, ids.length - 1);
    t.equal(shared(presence.lastUpdateId - 5), null, 'not when few changed: those alone');
    t.equal(shared(presence.lastUpdateId), null);
    t.equal(
      presenceSnapshotFor(rt.view, presence, { lastUpdateId: null, historyLimitDays: 3, now }),
      null,
      'not for a first fetch with its own history limit',
    );

    // A few users change after the snapshot: answers stay the shared snapshot (as of its
    // position) until it is stale; a client then asking from that position gets those changes.
    const before = full().presences;
    const changedUsers = [made[0]!, made[100]!, ids[0]!];
    for (const id of changedUsers) {
      presence.put(id, {
        last_active_time: now + 5,
        last_connected_time: now + 5,
        last_update_id: 0,
      });
    }
    const after = shared(early)!;
    t.same(after.presences, before, 'the same snapshot, as of its position');
    t.equal(after.id, first.id);
    const next = presencesFor(rt.view, presence, { ...q(after.id), slim: true });
    t.same(
      Object.keys(next.presences).map(Number).sort(),
      [...changedUsers].sort(),
      'then the rest',
    );
    t.same({ ...after.presences, ...next.presences }, full().presences, 'together: everything now');
    t.equal(next.presence_last_update_id, presence.lastUpdateId);
    // Past its age limit (or past an eighth of it changed), a new snapshot shows the changes.
    const later = presenceSnapshotFor(rt.view, presence, {
      ...q(early),
      now: now + PRESENCE_SNAPSHOT_MAX_AGE,
    })!;
    t.equal(later.presence_last_update_id, presence.lastUpdateId, 'rebuilt once old enough');
    t.same((JSON.parse(later.presences.toString()) as Record<string, unknown>)[String(made[100])], {
      active_timestamp: now + 5,
      idle_timestamp: now + 5,
    });

    // Through the API: a deactivated user drops out at once; the answer matches the schema.
    assertSuccess(t, await api.delete('iago', `users/${made[3]}`));
    const res = await api.post('hamlet', 'users/me/presence', {
      status: 'active',
      slim_presence: true,
      last_update_id: early,
    });
    const body = assertSuccess(t, res) as { presences: Record<string, unknown> };
    assertMatchesOpenApi(t, '/users/me/presence', 'post', res.body);
    t.notOk(String(made[3]) in body.presences, 'deactivated: not shown');

    // A client that takes gzip (every HTTP library sends Accept-Encoding: gzip) gets the same
    // answer gzipped, once the shared snapshot's compression is done (until then, as it is).
    const hamlet = fx.users.hamlet!;
    let raw: { headers: http.IncomingHttpHeaders; body: Buffer } | null = null;
    // (Bounded by time, not tries: on a loaded machine zlib's threads wait for a core.)
    for (const start = Date.now(); Date.now() - start < 60_000;) {
      raw = await gzipPost(ts.url, hamlet, 'users/me/presence', {
        status: 'active',
        slim_presence: 'true',
        last_update_id: String(early),
      });
      if (raw.headers['content-encoding'] === 'gzip') break;
      await new Promise((r) => setTimeout(r, 10));
    }
    t.equal(raw!.headers['content-encoding'], 'gzip', 'gzipped');
    t.equal(raw!.headers.vary, 'Accept-Encoding');
    const unzipped = JSON.parse(zlib.gunzipSync(raw!.body).toString()) as Record<string, unknown>;
    assertMatchesOpenApi(t, '/users/me/presence', 'post', unzipped);
    t.same(unzipped.presences, body.presences, 'the same presences');
    t.ok(raw!.body.length * 3 < Buffer.byteLength(JSON.stringify(unzipped)), 'a third or less');
    t.same(
      body.presences,
      presencesFor(rt.view, presence, {
        ...q(null),
        now: Math.floor(Date.now() / 1000),
        slim: true,
      }).presences,
    );

    // A quarter changed since the client's fetch (fewer than half): a client that takes no gzip
    // gets exactly those; one that takes gzip gets the compressed snapshot, smaller on the wire
    // than those changes assembled for it; a handful changed, still those alone.
    const behind = (n: number) => ({
      lastUpdateId: presence.lastUpdateId - n,
      historyLimitDays: null,
      now: Math.floor(Date.now() / 1000),
    });
    const quarter = Math.floor(ids.length / 4);
    t.equal(presenceSnapshotFor(rt.view, presence, behind(quarter)), null, 'no gzip: the changes');
    let zipped: ReturnType<typeof presenceSnapshotFor> = null;
    for (const start = Date.now(); Date.now() - start < 60_000 && !zipped;) {
      zipped = presenceSnapshotFor(rt.view, presence, behind(quarter), compressedSize);
      if (!zipped) await new Promise((r) => setTimeout(r, 10));
    }
    t.ok(zipped, 'gzip: the snapshot');
    const changes = presencesJsonFor(rt.view, presence, behind(quarter)).presences;
    t.ok(compressedSize(zipped!.presences)! < Buffer.byteLength(changes), 'smaller than those');
    t.same(
      { ...(JSON.parse(zipped!.presences.toString()) as object) },
      full().presences,
      'every shown presence',
    );
    t.equal(
      presenceSnapshotFor(rt.view, presence, behind(3), compressedSize),
      null,
      'gzip, three changed: those alone',
    );
    t.equal(
      presenceSnapshotFor(rt.view, presence, behind(quarter), () => 10 ** 9),
      null,
    );
    // Through the API: the same client, a quarter behind, gets a gzipped answer (an answer of the
    // changes alone is never compressed).
    const quarterRaw = await gzipPost(ts.url, hamlet, 'users/me/presence', {
      status: 'active',
      slim_presence: 'true',
      last_update_id: String(behind(quarter).lastUpdateId),
    });
    t.equal(quarterRaw.headers['content-encoding'], 'gzip', 'a quarter behind: gzipped');
    const quarterBody = JSON.parse(zlib.gunzipSync(quarterRaw.body).toString()) as {
      presences: object;
    };
    assertMatchesOpenApi(t, '/users/me/presence', 'post', quarterBody);
    t.equal(Object.keys(quarterBody.presences).length, Object.keys(full().presences).length);
  },
);
