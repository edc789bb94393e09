/**
 * Catch-up of a node with no database (new, or discarded after diverging): it starts from the
 * newest snapshot in the `confab_snapshots` bucket, written by a node that owns no realm every so
 * many log entries, and then applies the log from the snapshot's position on (docs/cluster.md
 * "Catch-up"). Without a snapshot it replays the whole log.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { connect } from 'nats';
import { SNAPSHOTS, SNAPSHOT_NAME } from './node.js';

/** Restores the newest snapshot into an empty data directory; its log position, or null. */
export async function restoreSnapshot(servers: string[], dataDir: string): Promise<number | null> {
  const file = path.join(dataDir, 'confab.sqlite3');
  if (fs.existsSync(file)) return null;
  const nc = await connect({ servers, name: 'confab-restore' });
  try {
    const jsm = await nc.jetstreamManager();
    const exists = await jsm.streams.info(`OBJ_${SNAPSHOTS}`).then(
      () => true,
      () => false,
    );
    if (!exists) return null;
    const bucket = await nc.jetstream().views.os(SNAPSHOTS);
    const result = await bucket.get(SNAPSHOT_NAME);
    if (!result) return null;
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.restoring`;
    await pipeline(Readable.fromWeb(result.data), fs.createWriteStream(tmp, { mode: 0o600 }));
    if (await result.error) {
      fs.rmSync(tmp, { force: true });
      return null;
    }
    fs.renameSync(tmp, file);
    return Number(result.info.description);
  } finally {
    await nc.close();
  }
}
