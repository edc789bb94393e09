/**
 * Queues across a restart: on graceful shutdown every queue (pending events, last acknowledged id,
 * registration) is written with msgpackr to DATA_DIR/event-queues.msgpack; on start it is read back
 * (then moved to `.last`, so a later crash never restores stale queues twice) and every restored
 * queue that wants it gets a `restart` event. Reference: tornado/event_queue.py dump_event_queues,
 * load_event_queues, send_restart_events.
 */
import { log } from '../src/observability/log.js';
import fs from 'node:fs';
import path from 'node:path';
import type { QueueSettings } from '../src/lib/event-filter.js';
import type { WireEvent } from '../src/lib/events.js';
import { SharedEvent } from '../src/lib/event-wire.js';
import { pack, unpack } from '../src/lib/pack.js';
import { EventQueue, type SavedEvents } from './event-queue.js';
import type { EventQueues } from './event-queues.js';

const SAVE_FILE = 'event-queues.msgpack';
const SAVE_VERSION = 1;

type SavedQueue = { id: string; settings: QueueSettings; events: SavedEvents };
type SavedFile = { version: number; savedAt: number; queues: SavedQueue[] };

export type RestartInfo = {
  service_version: string;
  service_merge_base: string;
  service_feature_level: number;
};

/**
 * Writes every queue to DATA_DIR. Nothing to do when the data directory itself is gone (a test's
 * temporary directory).
 */
export function saveQueues(queues: EventQueues, dataDir: string): void {
  if (!fs.existsSync(dataDir)) return;
  const file: SavedFile = {
    version: SAVE_VERSION,
    savedAt: Date.now(),
    queues: queues.list().map((rt) => ({
      id: rt.id,
      settings: rt.settings,
      events: rt.queue.save(),
    })),
  };
  const target = path.join(dataDir, SAVE_FILE);
  const tmp = `${target}.tmp`;
  fs.writeFileSync(tmp, pack(file));
  fs.renameSync(tmp, target);
}

/**
 * Restores the queues a previous process saved, if any, keeping those `keep` accepts (their user
 * can still use them), with a fresh idle lifetime and a `restart` event for each that wants it.
 * Returns how many were restored.
 */
export function restoreQueues(
  queues: EventQueues,
  dataDir: string,
  info: RestartInfo,
  keep: (s: QueueSettings) => boolean,
): number {
  const target = path.join(dataDir, SAVE_FILE);
  let buf: Buffer;
  try {
    buf = fs.readFileSync(target);
  } catch {
    return 0;
  }
  fs.renameSync(target, `${target}.last`);
  let file: SavedFile;
  try {
    file = unpack<SavedFile>(buf);
    if (file.version !== SAVE_VERSION || !Array.isArray(file.queues)) {
      throw new Error(`unknown format version ${String(file.version)}`);
    }
  } catch (err) {
    log.error({ err }, 'could not read the saved event queues; starting without them');
    return 0;
  }
  const restart: WireEvent = {
    type: 'restart',
    service_version: info.service_version,
    service_merge_base: info.service_merge_base,
    service_feature_level: info.service_feature_level,
    server_generation: queues.serverGeneration,
  };
  let n = 0;
  let unreadable = 0;
  for (const saved of file.queues) {
    // One damaged entry costs that queue only (its client registers again), never the start.
    try {
      if (typeof saved.id !== 'string' || queues.has(saved.id) || !keep(saved.settings)) continue;
      const queue = EventQueue.restore(saved.events);
      const rt = queues.adopt(saved.id, saved.settings, queue);
      if (rt.filter.accepts(restart)) rt.queue.push(SharedEvent.of(restart));
      n++;
    } catch {
      unreadable++;
    }
  }
  if (unreadable > 0) {
    log.error({ unreadable }, 'could not read some of the saved event queues; skipped them');
  }
  return n;
}
