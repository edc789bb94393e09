/**
 * The in-memory presence's change log (src/queries/presence.ts): `changedSince` answers exactly
 * the records a full scan would (each user once, at its latest change), also after the log is
 * compacted, and the modern answer assembled from cached JSON equals the object answer's JSON.
 */
import t from 'tap';
import { rng } from '../../bench/lib/open-loop.js';
import {
  presencesFor,
  presencesJsonFor,
  realmPresence,
  RealmPresence,
} from '../../src/queries/presence.js';
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
