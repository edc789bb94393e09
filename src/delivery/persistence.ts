/**
 * Queues across a restart: on graceful shutdown every queue (pending events, last acknowledged id,
 * registration) is written to DATA_DIR/event-queues.msgpack; on start it is read back (then moved
 * to `.last`, so a later crash never restores stale queues twice) and every restored queue that
 * wants it gets a `restart` event. Reference: tornado/event_queue.py dump_event_queues,
 * load_event_queues, send_restart_events.
 *
 * The file is a stream of records, written and read a record at a time, so its size is bounded by
 * the disk, not by what one buffer or one string can hold, and memory stays bounded on both ends:
 *
 *   "CFQ2"                                  magic (format version 2)
 *   [u32 length][msgpack record] ...        records, in this order of dependency:
 *     {h: {savedAt}}                         header
 *     {e: i, type, open, m}                  an event's shared serialization, written once, before
 *                                            the first queue holding it
 *     {t: i, json, extra}                    a per-queue tail (flags, recipient_id), likewise
 *     {q: id, reg, next, pruned, ev, tl}     a queue: its registration as it is (so fields added to
 *                                            QueueSettings round-trip without a format change), its
 *                                            ids, and its entries as event/tail indexes (-1: none)
 *     {end: queues}                          the end; without it the file was cut short
 *
 * An event shared by many queues is written once and, read back, held once again. Version 1 files
 * (one msgpack map, each queue's events as whole JSON strings) are still read.
 */
import { log } from '../observability/log.js';
import fs from 'node:fs';
import path from 'node:path';
import type { QueueSettings } from './filter.js';
import type { WireEvent } from '../lib/events.js';
import { SharedEvent, Tail, type QueueExtra } from './wire.js';
import { pack, unpack } from '../lib/pack.js';
import type { EventBuffer } from './buffer.js';
import type { EventQueues } from './publisher.js';

const SAVE_FILE = 'event-queues.msgpack';
const MAGIC = Buffer.from('CFQ2');
/** Bytes gathered before each write. */
const WRITE_CHUNK = 4 * 1024 * 1024;
/** The largest record a reader accepts (a queue's index arrays, one large event). */
const MAX_RECORD = 256 * 1024 * 1024;

/** The version fields a `restart` event carries (both spellings: src/version.ts VERSION_FIELDS). */
export type RestartInfo = Readonly<Record<string, string | number>>;

/** Appends length-prefixed records to a file through a bounded buffer. */
class RecordWriter {
  private chunks: Buffer[] = [];
  private pending = 0;
  written = 0;

  constructor(private readonly fd: number) {}

  raw(buf: Buffer): void {
    this.chunks.push(buf);
    this.pending += buf.length;
    if (this.pending >= WRITE_CHUNK) this.flush();
  }

  record(value: unknown): void {
    const body = pack(value);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(body.length);
    this.raw(len);
    this.raw(body);
  }

  flush(): void {
    if (this.pending === 0) return;
    const buf = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    let off = 0;
    while (off < buf.length) off += fs.writeSync(this.fd, buf, off, buf.length - off);
    this.written += buf.length;
    this.chunks = [];
    this.pending = 0;
  }
}

/**
 * Writes every queue to DATA_DIR (through a temporary file, renamed when complete). Throws when
 * it cannot (the caller logs it and exits non-zero); the previous file, if any, is left alone.
 * Nothing to do when the data directory itself is gone (a test's temporary directory).
 */
export function saveQueues(
  queues: EventQueues,
  dataDir: string,
): { queues: number; bytes: number } {
  if (!fs.existsSync(dataDir)) return { queues: 0, bytes: 0 };
  const target = path.join(dataDir, SAVE_FILE);
  const tmp = `${target}.tmp`;
  const fd = fs.openSync(tmp, 'w', 0o600);
  let n = 0;
  let bytes: number;
  try {
    const out = new RecordWriter(fd);
    out.raw(MAGIC);
    out.record({ h: { savedAt: queues.now() } });
    const eventIndex = new Map<SharedEvent, number>();
    const tailIndex = new Map<Tail, number>();
    for (const rt of queues.list()) {
      const ev: number[] = [];
      const tl: number[] = [];
      rt.queue.forEachPending((shared, tail) => {
        let e = eventIndex.get(shared);
        if (e === undefined) {
          eventIndex.set(shared, (e = eventIndex.size));
          out.record({ e, type: shared.type, open: shared.open, m: shared.insideMessage });
        }
        ev.push(e);
        if (tail === null) {
          tl.push(-1);
          return;
        }
        let i = tailIndex.get(tail);
        if (i === undefined) {
          tailIndex.set(tail, (i = tailIndex.size));
          out.record({ t: i, json: tail.json, extra: tail.extra });
        }
        tl.push(i);
      });
      out.record({
        q: rt.id,
        reg: rt.settings,
        next: rt.queue.nextEventId,
        pruned: rt.queue.newestPrunedId,
        ev,
        tl,
      });
      n++;
    }
    out.record({ end: n });
    out.flush();
    fs.fsyncSync(fd);
    bytes = out.written;
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  fs.renameSync(tmp, target);
  return { queues: n, bytes };
}

/** Reads length-prefixed records from a file a chunk at a time. */
class RecordReader {
  private buf = Buffer.alloc(0);
  private off = 0;
  private eof = false;

  constructor(
    private readonly fd: number,
    start: number,
  ) {
    this.pos = start;
  }

  private pos: number;

  private fill(need: number): boolean {
    while (this.buf.length - this.off < need && !this.eof) {
      const chunk = Buffer.allocUnsafe(Math.max(WRITE_CHUNK, need));
      const got = fs.readSync(this.fd, chunk, 0, chunk.length, this.pos);
      if (got === 0) {
        this.eof = true;
        break;
      }
      this.pos += got;
      this.buf = Buffer.concat([this.buf.subarray(this.off), chunk.subarray(0, got)]);
      this.off = 0;
    }
    return this.buf.length - this.off >= need;
  }

  /** The next record; null at the end of the file; throws on a damaged or cut record. */
  next(): Record<string, unknown> | null {
    if (!this.fill(4)) {
      if (this.buf.length - this.off === 0) return null;
      throw new Error('the file ends inside a record');
    }
    const len = this.buf.readUInt32BE(this.off);
    if (len > MAX_RECORD) throw new Error(`a record of ${len} bytes`);
    if (!this.fill(4 + len)) throw new Error('the file ends inside a record');
    const body = this.buf.subarray(this.off + 4, this.off + 4 + len);
    this.off += 4 + len;
    const value = unpack<unknown>(body);
    if (typeof value !== 'object' || value === null) throw new Error('a record is not a map');
    return value as Record<string, unknown>;
  }
}

type Restorer = {
  queues: EventQueues;
  keep: (s: QueueSettings) => boolean;
  restart: WireEvent;
  /** The restart event as queued: one serialization for every restored queue. */
  restartShared: SharedEvent;
  restored: number;
  unreadable: number;
};

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
  let fd: number;
  try {
    fd = fs.openSync(target, 'r');
  } catch {
    return 0;
  }
  const restart: WireEvent = {
    type: 'restart',
    ...info,
    server_generation: queues.serverGeneration,
  };
  const r: Restorer = {
    queues,
    keep,
    restart,
    restartShared: SharedEvent.of(restart),
    restored: 0,
    unreadable: 0,
  };
  try {
    const magic = Buffer.alloc(MAGIC.length);
    const got = fs.readSync(fd, magic, 0, magic.length, 0);
    if (got === MAGIC.length && magic.equals(MAGIC)) readStream(r, new RecordReader(fd, got));
    else readVersion1(r, fs.readFileSync(target));
  } catch (err) {
    log.error(
      { err, restored: r.restored },
      'could not read the rest of the saved event queues (damaged file)',
    );
  } finally {
    fs.closeSync(fd);
    fs.renameSync(target, `${target}.last`);
  }
  if (r.unreadable > 0) {
    log.error(
      { unreadable: r.unreadable },
      'could not read some of the saved event queues; skipped them',
    );
  }
  return r.restored;
}

function readStream(r: Restorer, reader: RecordReader): void {
  const events: SharedEvent[] = [];
  const tails: Tail[] = [];
  const header = reader.next();
  if (!header || typeof header.h !== 'object') throw new Error('no header');
  for (let rec = reader.next(); rec !== null; rec = reader.next()) {
    if (typeof rec.e === 'number') {
      events[rec.e] = SharedEvent.restore(rec.type, rec.open, rec.m);
    } else if (typeof rec.t === 'number') {
      if (typeof rec.json !== 'string' || typeof rec.extra !== 'object' || rec.extra === null) {
        throw new Error('a damaged tail');
      }
      tails[rec.t] = new Tail(rec.json, rec.extra as QueueExtra);
    } else if ('q' in rec) {
      // One damaged entry costs that queue only (its client registers again), never the start.
      adoptSaved(r, rec.q, rec.reg, (queue) => fillStream(queue, rec, events, tails));
    } else if ('end' in rec) {
      return;
    } else {
      throw new Error('an unknown record');
    }
  }
  throw new Error('the file was cut short (no end record)');
}

function fillStream(
  queue: EventBuffer,
  rec: Record<string, unknown>,
  events: readonly SharedEvent[],
  tails: readonly Tail[],
): void {
  const { next, pruned, ev, tl } = rec;
  if (!Array.isArray(ev) || !Array.isArray(tl) || ev.length !== tl.length) {
    throw new Error('damaged entries');
  }
  startIds(queue, next, pruned, ev.length);
  for (let i = 0; i < ev.length; i++) {
    const shared = events[ev[i] as number];
    const t = tl[i] as number;
    const tail = t === -1 ? null : tails[t];
    if (!shared || tail === undefined) throw new Error('an entry names a missing event');
    queue.push(shared, tail);
  }
}

/** Sets a restored queue's ids so that pushing `count` entries ends at `next`. */
function startIds(queue: EventBuffer, next: unknown, pruned: unknown, count: number): void {
  if (
    !Number.isSafeInteger(next) ||
    !Number.isSafeInteger(pruned) ||
    (next as number) - count < (pruned as number) + 1
  ) {
    throw new Error('damaged ids');
  }
  queue.nextEventId = (next as number) - count;
  queue.newestPrunedId = pruned as number;
}

/** Adopts one saved queue if its registration is usable; counts it as unreadable otherwise. */
function adoptSaved(r: Restorer, id: unknown, reg: unknown, fill: (q: EventBuffer) => void): void {
  try {
    if (typeof id !== 'string' || typeof reg !== 'object' || reg === null) throw new Error();
    const settings = reg as QueueSettings;
    if (r.queues.has(id) || !r.keep(settings)) return;
    const queue = r.queues.newBuffer();
    try {
      fill(queue);
    } catch (err) {
      queue.clear();
      throw err;
    }
    const rt = r.queues.adopt(id, settings, queue);
    if (rt.filter.accepts(r.restart)) queue.push(r.restartShared);
    r.restored++;
  } catch {
    r.unreadable++;
  }
}

/** Version 1: one msgpack map `{version: 1, queues: [{id, settings, events: {...}}]}`. */
function readVersion1(r: Restorer, buf: Buffer): void {
  const file = unpack<{ version?: unknown; queues?: unknown }>(buf);
  if (file?.version !== 1 || !Array.isArray(file.queues)) {
    throw new Error(`unknown format version ${String(file?.version)}`);
  }
  // Events are whole JSON strings per queue: equal ones are held once (by their text).
  const seen = new Map<string, SharedEvent>();
  for (const saved of file.queues as { id?: unknown; settings?: unknown; events?: unknown }[]) {
    adoptSaved(r, saved?.id, saved?.settings, (queue) => {
      const e = saved.events as { nextEventId: unknown; newestPrunedId: unknown; events: unknown };
      if (!Array.isArray(e.events)) throw new Error('damaged entries');
      startIds(queue, e.nextEventId, e.newestPrunedId, e.events.length);
      for (const [, json] of e.events as [number, string][]) {
        let shared = seen.get(json);
        if (!shared) seen.set(json, (shared = SharedEvent.fromJson(json)));
        queue.push(shared);
      }
    });
  }
}
