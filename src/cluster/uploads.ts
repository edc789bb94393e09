/**
 * Uploaded files in a cluster (docs/cluster.md): each file is kept on the node that received it
 * and in a JetStream object store bucket (replicated like the log); a node asked for a file it does
 * not have fetches it from the bucket once and keeps it. The file is in the bucket before the
 * upload's row is committed, so any node that sees the row can get the file. Thumbnails likewise:
 * each is in the bucket before the row that lists it is committed. Realm export archives
 * likewise: each is in the bucket before its export is marked succeeded, and a node asked for one
 * it does not have fetches it once.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ObjectInfo, ObjectStore } from 'nats';
import { JsonableError } from '../lib/errors.js';
import {
  formatName,
  THUMBNAIL_OUTPUT_FORMATS,
  TRANSCODED_IMAGE_FORMAT,
} from '../lib/thumbnail-formats.js';
import { REALM_ICON_FILE_NAME, uploadedIconFileIn } from '../lib/realm-icons.js';
import { log } from '../observability/log.js';
import { objectInfo, readBlob, readObject, type NextMessage } from './objects.js';
import type { DB } from '../storage/db.js';
import { thumbnailFilePath, UploadFiles, type ExportFiles } from '../storage/upload-files.js';

/**
 * An upload's object in the bucket: its path id with every character but `/` and URI-unreserved
 * ASCII percent-encoded (as UTF-8). nats.js base64-encodes an object's name with `btoa`, which
 * throws on characters past U+00FF (a Unicode file name such as `日本語.txt`: the upload answered
 * 500). Path ids are sanitized to such characters, so ASCII ones keep their name.
 */
const fileObject = (pathId: string) => encodeURIComponent(pathId).replaceAll('%2F', '/');

/** A thumbnail's object in the bucket. */
const thumbnailObject = (pathId: string, format: string) =>
  `thumbnail/${fileObject(pathId)}/${format}`;

/** A custom emoji image's object in the bucket (upload path ids start with a realm id). */
export const emojiObject = (realmId: number, fileName: string) =>
  `emoji/${realmId}/${path.basename(fileName)}`;

/** An uploaded realm icon's object in the bucket. */
export const realmIconObject = (realmId: number, fileName: string) =>
  `realm_icon/${realmId}/${path.basename(fileName)}`;

/** A realm export archive's object in the bucket (`exportPath`: `<realm id>/<secret>/<file>`). */
export const exportObject = (exportPath: string) => `export/${fileObject(exportPath)}`;

/**
 * Reads `name` whole into the file `tmp` (truncated at each attempt: objects.ts readObject); its
 * description, or null when the bucket does not hold it. Throws when it could not be read.
 */
async function readToFile(
  bucket: ObjectStore,
  next: NextMessage,
  name: string,
  tmp: string,
): Promise<ObjectInfo | null> {
  const got = await readObject(bucket, next, name, (chunks) =>
    pipeline(Readable.from(chunks), fs.createWriteStream(tmp, { mode: 0o600 })),
  );
  return got && got.info;
}

/** An export's archive that the bucket holds but this node could not get now. */
class ExportUnavailableError extends JsonableError {
  constructor() {
    super('The export could not be fetched; try again', {
      code: 'BAD_REQUEST',
      status: 503,
      headers: { 'Retry-After': '1' },
    });
  }
}

/**
 * A file the bucket did not take (NATS did not answer in time: a frozen server, a stream electing
 * its leader): the upload is answered 503, to be sent again, not 500.
 */
class UploadUnavailableError extends JsonableError {
  constructor() {
    super('The file could not be stored; try again', {
      code: 'BAD_REQUEST',
      status: 503,
      headers: { 'Retry-After': '1' },
    });
  }
}

/**
 * A file the bucket holds, or may hold, that this node could not read now (NATS did not answer in
 * time, the bucket stream has no leader yet): 503, to be asked again. A 404 is answered only when
 * the bucket answered that it has no such object (clients take a 404 as final).
 */
class FetchUnavailableError extends JsonableError {
  constructor() {
    super('The file could not be fetched; try again', {
      code: 'BAD_REQUEST',
      status: 503,
      headers: { 'Retry-After': '1' },
    });
  }
}

/** A read from the bucket; a failure logged and thrown as FetchUnavailableError. */
async function readOr503<T>(name: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    log.error({ err, name }, 'reading a file from the uploads bucket failed');
    throw new FetchUnavailableError();
  }
}

/** `put` into the bucket; a failure logged and thrown as UploadUnavailableError. */
async function putOr503(name: string, put: () => Promise<unknown>): Promise<void> {
  try {
    await put();
  } catch (err) {
    log.error({ err, name }, 'putting a file into the uploads bucket failed');
    throw new UploadUnavailableError();
  }
}

export class ReplicatedUploadFiles extends UploadFiles {
  private readonly tmpDir: string;

  /**
   * `next`: the bucket stream's messages through its leader (objects.ts nextThroughLeader), for a
   * read that a consumer on a replica behind the others answered short.
   */
  constructor(
    dataDir: string,
    private readonly bucket: ObjectStore,
    private readonly next: NextMessage,
  ) {
    super(dataDir);
    this.tmpDir = path.resolve(dataDir, 'tmp');
  }

  override async place(tmpPath: string, pathId: string): Promise<void> {
    const name = fileObject(pathId);
    await putOr503(name, () =>
      this.bucket.put(
        { name },
        Readable.toWeb(fs.createReadStream(tmpPath)) as ReadableStream<Uint8Array>,
      ),
    );
    await super.place(tmpPath, pathId);
  }

  /** Thumbnails go to the bucket too, under `thumbnail/<path_id>/<format>`. */
  override async placeThumbnail(pathId: string, format: string, data: Buffer): Promise<void> {
    const name = thumbnailObject(pathId, format);
    await putOr503(name, () => this.bucket.putBlob({ name }, data));
    await super.placeThumbnail(pathId, format, data);
  }

  /**
   * Fetches a file this node does not have from the bucket (an upload streamed through a
   * temporary file, a thumbnail whole); false when the bucket lacks it, FetchUnavailableError
   * (503) when it could not be read.
   */
  private async fetchMissing(pathId: string, thumbnailFormat?: string): Promise<boolean> {
    if (thumbnailFormat !== undefined) {
      const name = thumbnailObject(pathId, thumbnailFormat);
      const blob = await readOr503(name, () => readBlob(this.bucket, this.next, name));
      if (!blob) return false;
      await super.placeThumbnail(pathId, thumbnailFormat, Buffer.from(blob));
      return true;
    }
    await fs.promises.mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    const tmp = path.join(this.tmpDir, crypto.randomBytes(16).toString('hex'));
    try {
      const name = fileObject(pathId);
      if (!(await readOr503(name, () => readToFile(this.bucket, this.next, name, tmp)))) {
        return false;
      }
      await super.place(tmp, pathId);
      return true;
    } finally {
      await fs.promises.rm(tmp, { force: true });
    }
  }

  override async open(pathId: string, thumbnailFormat?: string): ReturnType<UploadFiles['open']> {
    const here = await super.open(pathId, thumbnailFormat);
    if (here) return here;
    const fetched = await this.fetchMissing(pathId, thumbnailFormat);
    return fetched ? super.open(pathId, thumbnailFormat) : null;
  }

  override async localFile(pathId: string): Promise<string | null> {
    const here = await super.localFile(pathId);
    if (here !== null) return here;
    return (await this.fetchMissing(pathId)) ? super.localFile(pathId) : null;
  }

  /**
   * Whether the upload is here or whole in the bucket: an object the bucket marks deleted (its
   * description kept, its data gone) is not there, as `open` finds.
   */
  override async exists(pathId: string): Promise<boolean> {
    if (await super.exists(pathId)) return true;
    const name = fileObject(pathId);
    const info = await readOr503(name, () => objectInfo(this.bucket, name));
    return info !== null && !info.deleted;
  }

  /** Custom emoji images go to the bucket too, before their row is committed. */
  override async placeEmoji(tmpPath: string, realmId: number, fileName: string): Promise<void> {
    const name = emojiObject(realmId, fileName);
    const data = await fs.promises.readFile(tmpPath);
    await putOr503(name, () => this.bucket.putBlob({ name }, data));
    await super.placeEmoji(tmpPath, realmId, fileName);
  }

  /** An emoji image this node lacks is fetched from the bucket once and kept. */
  override async readEmoji(realmId: number, fileName: string): Promise<Buffer | null> {
    const here = await super.readEmoji(realmId, fileName);
    if (here) return here;
    const name = emojiObject(realmId, fileName);
    const blob = await readOr503(name, () => readBlob(this.bucket, this.next, name));
    if (!blob) return null;
    const data = Buffer.from(blob);
    await this.writeEmoji(realmId, fileName, data);
    return data;
  }

  override async removeEmoji(realmId: number, fileName: string): Promise<void> {
    await this.bucket.delete(emojiObject(realmId, fileName)).catch(() => undefined);
    await super.removeEmoji(realmId, fileName);
  }

  /** Realm icons go to the bucket too, before the realm's settings name them. */
  override async writeRealmIcon(
    realmId: number,
    fileName: string,
    data: Uint8Array,
  ): Promise<void> {
    const name = realmIconObject(realmId, fileName);
    await putOr503(name, () => this.bucket.putBlob({ name }, data));
    await super.writeRealmIcon(realmId, fileName, data);
  }

  /** A realm icon this node lacks is fetched from the bucket once and kept. */
  override async readRealmIcon(realmId: number, fileName: string): Promise<Buffer | null> {
    const here = await super.readRealmIcon(realmId, fileName);
    if (here) return here;
    const name = realmIconObject(realmId, fileName);
    const blob = await readOr503(name, () => readBlob(this.bucket, this.next, name));
    if (!blob) return null;
    const data = Buffer.from(blob);
    await super.writeRealmIcon(realmId, fileName, data);
    return data;
  }

  /**
   * Removes this node's copies of the realm's uploaded icons but the one it names now (`named`,
   * read when the directory has been listed; null: the default icon), not the bucket's: every node
   * does so when it applies an entry writing the realm's row (the filesGone hook), as only the
   * node that took the request replacing or deleting an icon removes its object. A file being
   * uploaded through this node that its realm does not name yet may go too: it is in the bucket
   * already, and fetched again once named.
   */
  async removeLocalRealmIconsExcept(realmId: number, named: () => string | null): Promise<void> {
    const dir = path.dirname(this.realmIconPath(realmId, 'x'));
    const here = await fs.promises.readdir(dir).catch(() => [] as string[]);
    const keep = named();
    for (const name of here) {
      if (name !== keep && REALM_ICON_FILE_NAME.test(name))
        await super.removeRealmIcon(realmId, name);
    }
  }

  override async removeRealmIcon(realmId: number, fileName: string): Promise<void> {
    await this.bucket.delete(realmIconObject(realmId, fileName)).catch(() => undefined);
    await super.removeRealmIcon(realmId, fileName);
  }

  /**
   * Fetches the uploads, emoji images and uploaded icon an export copies that this node lacks (an export runs on
   * whichever node took its request): those the bucket lacks too stay missing (the archive lists
   * them in `missing_files`, as a single process does for a file gone from disk); any other
   * failure throws, and the export fails rather than leave files out.
   */
  override async gatherForExport(realmId: number, files: ExportFiles): Promise<void> {
    for (const pathId of files.uploads) {
      if (this.filePath(pathId) === null || (await super.exists(pathId))) continue;
      if (!(await inBucket(this.bucket, fileObject(pathId)))) continue;
      if (await this.fetchMissing(pathId)) continue;
      // Deleted meanwhile: as if it had never been there.
      if (await inBucket(this.bucket, fileObject(pathId)))
        throw new Error(`${pathId}: could not be fetched from the bucket`);
    }
    for (const name of files.emoji) {
      if (await hasFile(this.emojiPath(realmId, name), null)) continue;
      const blob = await readBlob(this.bucket, this.next, emojiObject(realmId, name));
      if (blob !== null) await this.writeEmoji(realmId, name, blob);
    }
    for (const name of files.realm_icons) {
      if (await hasFile(this.realmIconPath(realmId, name), null)) continue;
      const blob = await readBlob(this.bucket, this.next, realmIconObject(realmId, name));
      if (blob !== null) await super.writeRealmIcon(realmId, name, blob);
    }
  }

  /** An export's archive goes to the bucket, under `export/<realm id>/<secret>/<file>`. */
  override async placeExport(exportPath: string): Promise<void> {
    const full = this.exportFilePath(exportPath);
    if (full === null) throw new Error(`refusing to store an export at ${exportPath}`);
    const body = Readable.toWeb(fs.createReadStream(full)) as ReadableStream<Uint8Array>;
    await this.bucket.put({ name: exportObject(exportPath) }, body);
  }

  /**
   * An export's archive this node lacks is fetched from the bucket once (through a temporary
   * file, renamed into place) and kept; null when the bucket lacks it too. Any other failure to
   * get it answers 503.
   */
  override async openExport(exportPath: string): ReturnType<UploadFiles['openExport']> {
    const here = await super.openExport(exportPath);
    if (here) return here;
    const full = this.exportFilePath(exportPath);
    if (full === null) return null;
    await fs.promises.mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    const tmp = path.join(this.tmpDir, crypto.randomBytes(16).toString('hex'));
    try {
      if (!(await readToFile(this.bucket, this.next, exportObject(exportPath), tmp))) return null;
      await fs.promises.mkdir(path.dirname(full), { recursive: true, mode: 0o700 });
      await fs.promises.rename(tmp, full);
    } catch (err) {
      log.error({ err, exportPath }, 'fetching an export archive from the bucket failed');
      throw new ExportUnavailableError();
    } finally {
      await fs.promises.rm(tmp, { force: true });
    }
    return super.openExport(exportPath);
  }

  /** Removes an export's archive from the bucket, then this node's copy. */
  override async removeExport(exportPath: string): Promise<void> {
    await this.bucket.delete(exportObject(exportPath)).catch((err: unknown) => {
      log.error({ err, exportPath }, 'removing an export archive from the bucket failed');
    });
    await super.removeExport(exportPath);
  }

  /**
   * Removes this node's copy of an upload (file and thumbnails), not the bucket's: every node does
   * so when it applies the entry deleting the upload's row (the filesGone hook), as only
   * the node that took the request removes the objects.
   */
  async removeLocal(pathId: string): Promise<void> {
    await super.remove(pathId);
  }

  override async remove(pathId: string): Promise<void> {
    await this.bucket.delete(fileObject(pathId)).catch(() => undefined);
    await Promise.all(
      [...THUMBNAIL_OUTPUT_FORMATS, TRANSCODED_IMAGE_FORMAT].map((f) =>
        this.bucket.delete(thumbnailObject(pathId, formatName(f))).catch(() => undefined),
      ),
    );
    await super.remove(pathId);
  }
}

/** Whether the bucket holds a whole object of this name. */
async function inBucket(bucket: ObjectStore, name: string): Promise<boolean> {
  const info = await objectInfo(bucket, name);
  return info !== null && !info.deleted;
}

/**
 * Puts the uploads of a data directory (`pathIds`, from its attachments) and their thumbnails into
 * the bucket, each unless it is there already: the files of the database a cluster is seeded from
 * (src/cluster/seed.ts), which other nodes then fetch as they would a file uploaded through
 * another node. A file missing from the directory is skipped. Returns how many it put.
 */
export async function putExistingUploads(
  dataDir: string,
  bucket: ObjectStore,
  pathIds: readonly string[],
): Promise<number> {
  const files = new UploadFiles(dataDir);
  let put = 0;
  for (const pathId of pathIds) {
    const full = await files.localFile(pathId);
    if (full !== null && !(await inBucket(bucket, fileObject(pathId)))) {
      const body = Readable.toWeb(fs.createReadStream(full)) as ReadableStream<Uint8Array>;
      await bucket.put({ name: fileObject(pathId) }, body);
      put++;
    }
    const dir = thumbnailFilePath(dataDir, pathId);
    const formats = dir === null ? [] : await fs.promises.readdir(dir).catch(() => []);
    for (const format of formats) {
      const thumb = thumbnailFilePath(dataDir, pathId, format);
      if (thumb === null || (await inBucket(bucket, thumbnailObject(pathId, format)))) continue;
      await bucket.putBlob(
        { name: thumbnailObject(pathId, format) },
        await fs.promises.readFile(thumb),
      );
      put++;
    }
  }
  return put;
}

/** A custom emoji image as its row names it. */
export type NamedEmoji = { realmId: number; fileName: string };

/** Every custom emoji image a database's realm_emoji rows name. */
export function emojiNamedIn(db: DB): NamedEmoji[] {
  return db
    .prepare<[], NamedEmoji>('SELECT realm_id AS realmId, file_name AS fileName FROM realm_emoji')
    .all();
}

/**
 * Puts a data directory's custom emoji images (`emoji`, from its realm_emoji rows) into the
 * bucket, each unless it is there already or missing from the directory: a seed's
 * (src/cluster/seed.ts). Returns how many it put.
 */
export async function putExistingEmoji(
  dataDir: string,
  bucket: ObjectStore,
  emoji: readonly NamedEmoji[],
): Promise<number> {
  return putExistingNamed(dataDir, bucket, emoji, EMOJI_FILES);
}

/**
 * Gets from the bucket every custom emoji image of `emoji` that the data directory lacks (a
 * detach's: src/cluster/detach.ts); those the bucket lacks too are listed in `problems`. Returns
 * how many files and bytes it got.
 */
export async function fetchMissingEmoji(
  dataDir: string,
  bucket: ObjectStore,
  next: NextMessage,
  emoji: readonly NamedEmoji[],
  problems: string[],
): Promise<{ files: number; bytes: number }> {
  return fetchMissingNamed(dataDir, bucket, next, emoji, problems, EMOJI_FILES);
}

/** An uploaded realm icon as its realm's settings name it (icon_file, while icon_source is 'U'). */
export type NamedRealmIcon = { realmId: number; fileName: string };

/** Every uploaded realm icon a database's realms use. */
export function realmIconsNamedIn(db: DB): NamedRealmIcon[] {
  const rows = db
    .prepare<[], { id: number; settings: string }>('SELECT id, settings FROM realms')
    .all();
  return rows.flatMap((r) => {
    const fileName = uploadedIconFileIn(r.settings);
    return fileName === null ? [] : [{ realmId: r.id, fileName }];
  });
}

/**
 * Puts a data directory's uploaded realm icons into the bucket, each unless it is there already or
 * missing from the directory: a seed's (src/cluster/seed.ts). Returns how many it put.
 */
export async function putExistingRealmIcons(
  dataDir: string,
  bucket: ObjectStore,
  icons: readonly NamedRealmIcon[],
): Promise<number> {
  return putExistingNamed(dataDir, bucket, icons, REALM_ICON_FILES);
}

/**
 * Gets from the bucket every realm icon of `icons` the data directory lacks (a detach's); those
 * the bucket lacks too are listed in `problems`. Returns how many files and bytes it got.
 */
export async function fetchMissingRealmIcons(
  dataDir: string,
  bucket: ObjectStore,
  next: NextMessage,
  icons: readonly NamedRealmIcon[],
  problems: string[],
): Promise<{ files: number; bytes: number }> {
  return fetchMissingNamed(dataDir, bucket, next, icons, problems, REALM_ICON_FILES);
}

/** A realm's file named by a row (a custom emoji image, an uploaded icon). */
type NamedFile = { realmId: number; fileName: string };

/** Where one kind of named file lives: its object in the bucket, and in a data directory. */
type NamedFileKind = {
  object: (f: NamedFile) => string;
  path: (files: UploadFiles, f: NamedFile) => string;
  read: (files: UploadFiles, f: NamedFile) => Promise<Buffer | null>;
  write: (files: UploadFiles, f: NamedFile, data: Uint8Array) => Promise<void>;
};

const EMOJI_FILES: NamedFileKind = {
  object: (f) => emojiObject(f.realmId, f.fileName),
  path: (files, f) => files.emojiPath(f.realmId, f.fileName),
  read: (files, f) => files.readEmoji(f.realmId, f.fileName),
  write: (files, f, data) => files.writeEmoji(f.realmId, f.fileName, data),
};

const REALM_ICON_FILES: NamedFileKind = {
  object: (f) => realmIconObject(f.realmId, f.fileName),
  path: (files, f) => files.realmIconPath(f.realmId, f.fileName),
  read: (files, f) => files.readRealmIcon(f.realmId, f.fileName),
  write: (files, f, data) => files.writeRealmIcon(f.realmId, f.fileName, data),
};

/** Puts each named file the directory has and the bucket lacks; returns how many it put. */
async function putExistingNamed(
  dataDir: string,
  bucket: ObjectStore,
  named: readonly NamedFile[],
  kind: NamedFileKind,
): Promise<number> {
  const files = new UploadFiles(dataDir);
  let put = 0;
  for (const f of named) {
    const name = kind.object(f);
    const data = await kind.read(files, f);
    if (data === null || (await inBucket(bucket, name))) continue;
    await bucket.putBlob({ name }, data);
    put++;
  }
  return put;
}

/** Gets each named file the directory lacks from the bucket; those it lacks too go to `problems`. */
async function fetchMissingNamed(
  dataDir: string,
  bucket: ObjectStore,
  next: NextMessage,
  named: readonly NamedFile[],
  problems: string[],
  kind: NamedFileKind,
): Promise<{ files: number; bytes: number }> {
  const files = new UploadFiles(dataDir);
  const out = { files: 0, bytes: 0 };
  for (const f of named) {
    if (await hasFile(kind.path(files, f), null)) continue;
    const name = kind.object(f);
    const blob = await readBlob(bucket, next, name);
    if (blob === null) {
      problems.push(`${name}: not in the bucket`);
      continue;
    }
    await kind.write(files, f, blob);
    out.files++;
    out.bytes += blob.length;
  }
  return out;
}

/** An upload as a data directory's rows name it: its file's size and its thumbnails' (by format). */
export type NamedUpload = {
  pathId: string;
  /** attachments.size; null when only image_attachments names it. */
  size: number | null;
  thumbnails: { format: string; size: number }[];
};

/** What fetchMissingUploads did, and what it could not do. */
export type FetchedUploads = {
  files: number;
  thumbnails: number;
  bytes: number;
  /** One line per file the bucket lacks or holds at another size than its row says. */
  problems: string[];
};

/** Whether `full` is a regular file of `size` bytes. */
async function hasFile(full: string | null, size: number | null): Promise<boolean> {
  if (full === null) return false;
  const st = await fs.promises.lstat(full).catch(() => null);
  return st !== null && st.isFile() && (size === null || st.size === size);
}

/**
 * The other way: gets from the bucket every upload and thumbnail of `uploads` that the data
 * directory lacks (or holds at another size than its row says), each checked against that size
 * before it is put in place — what a single process on the directory will need, the bucket
 * gone (src/cluster/detach.ts). Files it could not get are listed, not thrown at once, so one
 * run names them all.
 */
export async function fetchMissingUploads(
  dataDir: string,
  bucket: ObjectStore,
  next: NextMessage,
  uploads: readonly NamedUpload[],
): Promise<FetchedUploads> {
  const files = new UploadFiles(dataDir);
  const tmpDir = path.resolve(dataDir, 'tmp');
  const out: FetchedUploads = { files: 0, thumbnails: 0, bytes: 0, problems: [] };
  for (const u of uploads) {
    const full = files.filePath(u.pathId);
    if (full === null) {
      out.problems.push(`${u.pathId}: not a path id`);
      continue;
    }
    if (u.size !== null && !(await hasFile(full, u.size))) {
      const info = await objectInfo(bucket, fileObject(u.pathId));
      if (info === null || info.deleted) out.problems.push(`${u.pathId}: not in the bucket`);
      else if (info.size !== u.size)
        out.problems.push(`${u.pathId}: ${info.size} bytes in the bucket, ${u.size} in its row`);
      else {
        await fs.promises.mkdir(tmpDir, { recursive: true, mode: 0o700 });
        const tmp = path.join(tmpDir, crypto.randomBytes(16).toString('hex'));
        try {
          if (!(await readToFile(bucket, next, fileObject(u.pathId), tmp)))
            throw new Error(`${u.pathId}: gone from the bucket`);
          const written = (await fs.promises.stat(tmp)).size;
          if (written !== u.size)
            throw new Error(
              `${u.pathId}: ${written} bytes read from the bucket, ${u.size} expected`,
            );
          await files.place(tmp, u.pathId);
          out.files++;
          out.bytes += written;
        } finally {
          await fs.promises.rm(tmp, { force: true });
        }
      }
    }
    for (const t of u.thumbnails) {
      if (await hasFile(thumbnailFilePath(dataDir, u.pathId, t.format), t.size)) continue;
      const name = thumbnailObject(u.pathId, t.format);
      const blob = await readBlob(bucket, next, name);
      if (blob === null) out.problems.push(`${name}: not in the bucket`);
      else if (blob.length !== t.size)
        out.problems.push(`${name}: ${blob.length} bytes in the bucket, ${t.size} in its row`);
      else {
        await files.placeThumbnail(u.pathId, t.format, Buffer.from(blob));
        out.thumbnails++;
        out.bytes += blob.length;
      }
    }
  }
  return out;
}
