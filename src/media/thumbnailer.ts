/**
 * Makes the thumbnails of uploaded images (the reference's thumbnail worker): one queue for the
 * server, one image at a time, with sharp (libvips, loaded at the first image: ./sharp.ts), whose
 * work runs on libuv's thread pool: the event loop and the realm actors never wait on it; the
 * realm actor only records the result (thumbnail.done). Bounded: images over the
 * decompression-bomb limits are never decoded, an animation is read only up to its share of
 * pixels, the queue holds at most MAX_QUEUED images (more are made on first request), and each
 * image's work is bounded in time by libvips' own limits on input pixels.
 *
 *   probe(file, contentType)  size and frames of a fresh upload (null: not an image we read)
 *   enqueue(imageId)          make its thumbnails in the background
 *   ensure(imageId)           make them now (a request for one not made yet waits for it)
 */
import type { RealmRegistry } from '../../actors/registry.js';
import {
  imageFacts,
  storedThumbnails,
  IMAGE_BOMB_TOTAL_PIXELS,
  IMAGE_MAX_ANIMATED_PIXELS,
  missingFormats,
  THUMBNAIL_ACCEPT_IMAGE_TYPES,
  formatName,
  type StoredThumbnail,
  type ThumbnailFormat,
} from '../lib/thumbnail-formats.js';
import { JsonableError } from '../lib/errors.js';
import type { Store } from '../storage/store.js';
import type { UploadFiles } from '../storage/upload-files.js';
import { loadSharp } from './sharp.js';

const MAX_QUEUED = 1000;

export type ImageProbe = { width: number; height: number; frames: number };

/** Size (as shown: EXIF orientation applied) and frames of an image file, or null. */
export async function probeImage(file: string, contentType: string): Promise<ImageProbe | null> {
  if (!THUMBNAIL_ACCEPT_IMAGE_TYPES.has(contentType)) return null;
  try {
    // (sharp failing to load: logged by loadSharp; the upload is kept as a file that is no image)
    const sharp = await loadSharp();
    const meta = await sharp(file, { limitInputPixels: false, pages: -1 }).metadata();
    const width = meta.width;
    const pageHeight = meta.pageHeight ?? meta.height;
    const frames = meta.pages ?? 1;
    if (!width || !pageHeight) return null;
    if (
      frames === 1
        ? width * pageHeight > IMAGE_BOMB_TOTAL_PIXELS
        : width * pageHeight * Math.min(3, frames) > IMAGE_MAX_ANIMATED_PIXELS
    )
      return null;
    const rotated =
      meta.orientation !== undefined && meta.orientation >= 5 && meta.orientation <= 8;
    return rotated
      ? { width: pageHeight, height: width, frames }
      : { width, height: pageHeight, frames };
  } catch {
    return null;
  }
}

/** One thumbnail of `file` in `format`. */
export async function makeThumbnail(
  file: string,
  facts: { original_width_px: number; original_height_px: number; frames: number },
  format: ThumbnailFormat,
): Promise<{ data: Buffer; width: number; height: number }> {
  let pages = 1;
  if (facts.frames > 1 && format.animated) {
    const perFrame = facts.original_width_px * facts.original_height_px;
    pages =
      perFrame * facts.frames < IMAGE_MAX_ANIMATED_PIXELS
        ? -1
        : Math.max(1, Math.floor(IMAGE_MAX_ANIMATED_PIXELS / perFrame));
  }
  const sharp = await loadSharp();
  const { data, info } = await sharp(file, {
    pages,
    animated: pages !== 1,
    limitInputPixels: IMAGE_BOMB_TOTAL_PIXELS,
  })
    .rotate()
    .resize({
      width: format.max_width,
      height: format.max_height,
      fit: 'inside',
      withoutEnlargement: true,
    })
    .webp()
    .toBuffer({ resolveWithObject: true });
  const height = pages !== 1 ? (info.pageHeight ?? info.height) : info.height;
  return { data, width: info.width, height };
}

export class Thumbnailer {
  private readonly queue: number[] = [];
  private readonly queued = new Set<number>();
  private readonly running = new Map<number, Promise<void>>();
  /**
   * The last run's failure for want of the cluster's bucket (a 503 with Retry-After: the original
   * or a thumbnail could not be read or stored now), thrown by ensure() so the read that waited is
   * answered 503, not 404; the next ensure() makes them again.
   */
  private readonly unavailable = new Map<number, JsonableError>();
  private active: Promise<void> | null = null;
  private closed = false;
  private paused = false;

  constructor(
    private readonly store: Store,
    private readonly realms: RealmRegistry,
    private readonly uploads: UploadFiles,
  ) {
    // Images whose thumbnails a previous run did not finish.
    for (const id of store.imageAttachments.pending(MAX_QUEUED)) this.enqueue(id);
  }

  enqueue(imageId: number): void {
    if (this.closed || this.queued.has(imageId) || this.running.has(imageId)) return;
    if (this.queue.length >= MAX_QUEUED) return; // made when first asked for
    this.queue.push(imageId);
    this.queued.add(imageId);
    this.pump();
  }

  /** Makes the missing thumbnails of `imageId` now (or waits for the run in progress). */
  async ensure(imageId: number): Promise<void> {
    const inFlight = this.running.get(imageId);
    if (inFlight) {
      await inFlight;
    } else {
      this.queued.delete(imageId);
      const i = this.queue.indexOf(imageId);
      if (i >= 0) this.queue.splice(i, 1);
      await this.run(imageId);
    }
    const err = this.unavailable.get(imageId);
    if (err) throw err;
  }

  /** Holds background work (queued images wait) until resume(); ensure() still works. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.pump();
  }

  private pump(): void {
    if (this.active || this.closed || this.paused) return;
    const next = this.queue.shift();
    if (next === undefined) return;
    this.queued.delete(next);
    this.active = this.run(next).finally(() => {
      this.active = null;
      setImmediate(() => this.pump());
    });
  }

  private run(imageId: number): Promise<void> {
    this.unavailable.delete(imageId);
    const p = this.make(imageId)
      .catch((err: unknown) => {
        if (err instanceof JsonableError && err.httpStatus === 503) {
          this.unavailable.set(imageId, err);
        }
        console.error(`thumbnails of image ${imageId} failed:`, err);
      })
      .finally(() => this.running.delete(imageId));
    this.running.set(imageId, p);
    return p;
  }

  private async make(imageId: number): Promise<void> {
    const row = this.store.imageAttachments.byId(imageId);
    if (!row) return;
    const realm = this.realms.get(row.realm_id);
    if (!realm) return;
    const facts = imageFacts(row);
    const needed = missingFormats(facts);
    if (needed.length === 0) return;
    // In a cluster the original may be on another node: fetched here first (null: nowhere).
    const source = await this.uploads.localFile(row.path_id);
    if (source === null) return;
    const made: StoredThumbnail[] = [...storedThumbnails(row)];
    for (const format of needed) {
      let out;
      try {
        out = await makeThumbnail(source, facts, format);
      } catch (err) {
        if (made.length === 0) {
          // Not an image after all (or a damaged one): no preview, as the reference.
          console.error(`upload ${row.path_id} could not be thumbnailed:`, (err as Error).message);
          await realm.ask('thumbnail.failed', { image_id: row.id });
          return;
        }
        break;
      }
      await this.uploads.placeThumbnail(row.path_id, formatName(format), out.data);
      made.push({
        ...format,
        content_type: 'image/webp',
        width: out.width,
        height: out.height,
        byte_size: out.data.length,
      });
    }
    await realm.ask('thumbnail.done', { image_id: row.id, thumbnails: made });
  }

  /** Resolves once no image is queued or in progress (tests wait for quiet). */
  async idle(): Promise<void> {
    while (this.running.size > 0 || (this.queue.length > 0 && !this.paused && !this.closed)) {
      await Promise.allSettled([...this.running.values(), this.active]);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** Stops taking work and waits for the image in progress. */
  async close(): Promise<void> {
    this.closed = true;
    this.queue.length = 0;
    this.queued.clear();
    await Promise.allSettled([...this.running.values()]);
  }
}
