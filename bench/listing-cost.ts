/**
 * `node dist/bench/listing-cost.js <dataDir> [seed|run] [rounds]`: the store's listing of 100
 * channel messages in process (no server, no HTTP), CPU per listing: rows never listed before
 * (a channel's history scrolled back 100 at a time from its newest, the rows kept forgotten
 * before each pass) and rows kept (the newest 100, over and over). For same-run comparisons of
 * src/storage/message-search.ts' two ways of listing (docs/benchmarks.md "Listed messages'
 * columns kept"): `seed` writes BENCH_LISTING_MESSAGES (100,000) messages over 10 channels once;
 * `run` prints one JSON line of figures, run it alternately from two builds on the same copy.
 */
import { Store } from '../src/storage/store.js';
import type { MessageQuery } from '../src/storage/message-search.js';

const [dataDir, mode = 'run', roundsArg = '3'] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: listing-cost.js <dataDir> [seed|run] [rounds]');
const CHANNELS = 10;
const store = Store.open(dataDir, { backgroundCheckpoint: false });

if (mode === 'seed') {
  const total = Number(process.env.BENCH_LISTING_MESSAGES ?? 100_000);
  const db = store.db;
  db.prepare(`INSERT INTO realms (string_id, name, date_created) VALUES ('', 'r', 0)`).run();
  const ins = db.prepare(
    `INSERT INTO users (realm_id, email, delivery_email, full_name, api_key, date_joined)
     VALUES (1, ?, ?, 'u', ?, 0)`,
  );
  for (let i = 0; i < 2; i++) ins.run(`u${i}@r`, `u${i}@r`, `key${i}`);
  store.transaction(() => {
    for (let i = 0; i < total; i++) {
      const content = `message number ${i} about topic ${i % 50}`;
      const id = store.messages.insert({
        realm_id: 1,
        sender_id: 2,
        stream_id: 1 + (i % CHANNELS),
        dm_group_id: null,
        topic: `topic ${i % 50}`,
        content,
        rendered_content: `<p>${content}</p>`,
        date_sent: 0,
        has_attachment: 0,
        has_image: 0,
        has_link: 0,
        sending_client: 'seed',
      });
      store.messages.insertUserMessage(1, id, 1);
    }
  });
  store.close();
  process.exit(0);
}

const search = store.messageSearch;
const channel = (id: number): MessageQuery => ({
  userId: 1,
  realmId: 1,
  includeHistory: true,
  conditions: [{ kind: 'channel', id, negated: false }],
});
/** Forgets every kept row (and, where the build has them, the narrows' spans). */
const forgetAll = () => {
  search.listedRows.clear();
  (search as { listedSpans?: { clear(): void } }).listedSpans?.clear();
};
const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/**
 * Each channel scrolled back 100 at a time from its newest: nothing kept at the start of each
 * channel (fewer rows listed than ListedRows keeps), or (`pastBound`) at the start only, so that
 * the kept rows go past their bound (100,000 listed, 20,000 kept) and the oldest are given up.
 */
function cold(pastBound = false): { listings: number; cpuUs: number; wallUs: number } {
  forgetAll();
  let listings = 0;
  const c0 = cpu();
  const t0 = performance.now();
  for (let ch = 1; ch <= CHANNELS; ch++) {
    if (!pastBound) forgetAll();
    let anchor = Number.MAX_SAFE_INTEGER;
    for (;;) {
      const rows = search.messages(channel(ch), { dir: 'before', anchor, limit: 100 });
      listings++;
      if (rows.length < 100) break;
      anchor = rows[rows.length - 1]!.id - 1;
    }
  }
  return {
    listings,
    cpuUs: (cpu() - c0) / listings,
    wallUs: ((performance.now() - t0) * 1000) / listings,
  };
}

/** The newest 100 of one channel, 3,000 times, kept after the first. */
function warm(): { listings: number; cpuUs: number; wallUs: number } {
  const q = channel(4);
  const range = { dir: 'before' as const, anchor: Number.MAX_SAFE_INTEGER, limit: 100 };
  search.messages(q, range);
  const n = 3000;
  const c0 = cpu();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) search.messages(q, range);
  return { listings: n, cpuUs: (cpu() - c0) / n, wallUs: ((performance.now() - t0) * 1000) / n };
}

cold(); // warm-up: statements prepared, code optimized, pages cached
warm();
/** CPU µs per listing of each kind, one figure per round (wall µs beside: a busy machine). */
const out = {
  cold: [] as number[],
  pastBound: [] as number[],
  warm: [] as number[],
  coldWall: [] as number[],
  pastBoundWall: [] as number[],
  warmWall: [] as number[],
};
for (let r = 0; r < Number(roundsArg); r++) {
  const c = cold();
  const p = cold(true);
  const w = warm();
  out.cold.push(Math.round(c.cpuUs));
  out.coldWall.push(Math.round(c.wallUs));
  out.pastBound.push(Math.round(p.cpuUs));
  out.pastBoundWall.push(Math.round(p.wallUs));
  out.warm.push(Math.round(w.cpuUs));
  out.warmWall.push(Math.round(w.wallUs));
}
console.log(JSON.stringify(out));
store.close();
