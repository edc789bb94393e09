/**
 * The image proxy behind `/external_content/<digest>/<hex url>` (the camo scheme): fetches the
 * third-party image once (src/media/safe-fetch.ts), keeps it in a bounded on-disk cache under
 * DATA_DIR/cache/external_content (least recently used entries go first; the cache starts empty
 * at each start), and hands the file to the HTTP layer to stream. Concurrent requests for one URL
 * share one fetch; fetches in flight are bounded, and so is the wait for a slot.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fetchToFile, ProxyFetchError, type Fetched, type FetchLimits } from './safe-fetch.js';

export type ImageProxyOptions = FetchLimits & {
  /** Total bytes the cache keeps, and how many answers (many tiny images cost memory too). */
  cacheBytes: number;
  cacheEntries: number;
  /** How long a cached answer is served before it is fetched again. */
  cacheTtlMs: number;
  /** Fetches in flight at once, and how many may wait for a slot (more: 503). */
  concurrency: number;
  maxWaiting: number;
};

export const DEFAULT_IMAGE_PROXY: Omit<ImageProxyOptions, 'allowPrivate'> = {
  maxBytes: 25 * 1024 * 1024,
  timeoutMs: 10_000,
  maxRedirects: 4,
  cacheBytes: 256 * 1024 * 1024,
  cacheEntries: 20_000,
  cacheTtlMs: 24 * 3600_000,
  concurrency: 8,
  maxWaiting: 64,
};

type Entry = { file: string; meta: Fetched; fetchedAt: number };

export class ImageProxy {
  private readonly dir: string;
  private readonly entries = new Map<string, Entry>(); // in least-recently-used order
  private bytes = 0;
  private readonly inflight = new Map<string, Promise<Entry>>();
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private counter = 0;

  constructor(
    dataDir: string,
    readonly opts: ImageProxyOptions,
  ) {
    this.dir = path.join(dataDir, 'cache', 'external_content');
    fs.rmSync(this.dir, { recursive: true, force: true });
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** The cached answer for `url`, fetching it if needed; throws ProxyFetchError. */
  async get(url: string): Promise<Entry> {
    const key = crypto.createHash('sha256').update(url).digest('hex');
    const hit = this.entries.get(key);
    if (hit && Date.now() - hit.fetchedAt < this.opts.cacheTtlMs && fs.existsSync(hit.file)) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.fetch(key, url).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }

  private async fetch(key: string, url: string): Promise<Entry> {
    await this.slot();
    const file = path.join(this.dir, `${key}.${++this.counter}`);
    try {
      const meta = await fetchToFile(url, file, this.opts);
      const entry: Entry = { file, meta, fetchedAt: Date.now() };
      this.drop(key);
      this.entries.set(key, entry);
      this.bytes += meta.size;
      this.evict();
      return entry;
    } catch (err) {
      fs.rm(file, { force: true }, () => {});
      if (err instanceof ProxyFetchError) throw err;
      throw new ProxyFetchError(`fetch failed: ${(err as Error).message}`, 502);
    } finally {
      this.release();
    }
  }

  private slot(): Promise<void> {
    if (this.running < this.opts.concurrency) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.opts.maxWaiting)
      return Promise.reject(new ProxyFetchError('the image proxy is busy', 503));
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  private drop(key: string): void {
    const old = this.entries.get(key);
    if (!old) return;
    this.entries.delete(key);
    this.bytes -= old.meta.size;
    fs.rm(old.file, { force: true }, () => {});
  }

  private evict(): void {
    for (const key of this.entries.keys()) {
      if (this.bytes <= this.opts.cacheBytes && this.entries.size <= this.opts.cacheEntries) break;
      this.drop(key);
    }
  }

  /** Bytes and entries held (tests, diagnostics). */
  get size(): { bytes: number; entries: number } {
    return { bytes: this.bytes, entries: this.entries.size };
  }
}
