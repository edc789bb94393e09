/**
 * Where uploaded files live: DATA_DIR/uploads/<path_id>, the reference's local storage layout
 * (`<realm id>/<xx>/<random>/<sanitized name>`). The database row (attachments) is the index:
 * nothing here is reached with a path a client typed, only with path ids read back from it, and
 * every path is still checked to stay under the uploads directory.
 *
 * One UploadFiles per server (ServerContext.uploads), as one Store: endpoints reach files through
 * it, never through this module. Another backend (object storage) would be another
 * implementation of these methods.
 *
 * Thumbnails of uploaded images (src/media/thumbnailer.ts) live beside them, under
 * DATA_DIR/uploads/thumbnail/<path_id>/<format>, and go when their upload goes.
 *
 * Realm export archives made through the API (src/admin/export-jobs.ts) live under
 * DATA_DIR/exports/<realm id>/<secret>/<file> (the export's path), each in a directory of its own.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { exportDirOf } from '../lib/realm-exports.js';
import { fitStoredName, isWellFormedPathId, sanitizeName } from '../lib/uploads.js';

/** DATA_DIR/uploads. */
export function uploadsRoot(dataDir: string): string {
  return path.resolve(dataDir, 'uploads');
}

/** Where a realm's custom emoji image lies under a data directory: DATA_DIR/emoji/<realm id>/<file>. */
export function emojiFile(dataDir: string, realmId: number, fileName: string): string {
  return path.join(dataDir, 'emoji', String(realmId), path.basename(fileName));
}

/** Where a realm's uploaded icon lies under a data directory: DATA_DIR/realm-icons/<realm id>/<file>. */
export function realmIconFile(dataDir: string, realmId: number, fileName: string): string {
  return path.join(dataDir, 'realm-icons', String(realmId), path.basename(fileName));
}

/** DATA_DIR/exports: realm export archives. */
export function exportsRoot(dataDir: string): string {
  return path.join(dataDir, 'exports');
}

/** The files an export copies into its archive (src/admin/export-worker.ts). */
export type ExportFiles = {
  /** The path ids of the exported uploads. */
  uploads: readonly string[];
  /** The file names of the realm's exported custom emoji images. */
  emoji: readonly string[];
  /** The realm's uploaded icon (its file name), when it has one. */
  realm_icons: readonly string[];
};

/**
 * Where an upload's thumbnails live: DATA_DIR/uploads/thumbnail/<path_id>/<format> (the whole
 * directory when `format` is absent); null when `pathId` or `format` could leave it.
 */
export function thumbnailFilePath(dataDir: string, pathId: string, format?: string): string | null {
  if (!isWellFormedPathId(pathId)) return null;
  if (format !== undefined && !/^[0-9]+x[0-9]+(?:-anim)?\.[a-z]+$/.test(format)) return null;
  const root = path.join(uploadsRoot(dataDir), 'thumbnail');
  const full = path.resolve(root, pathId, format ?? '.');
  return full.startsWith(root + path.sep) ? full : null;
}

/** Whether `full` is a regular file (a symbolic link is not followed). */
async function isRegularFile(full: string): Promise<boolean> {
  try {
    return (await fs.promises.lstat(full)).isFile();
  } catch {
    return false;
  }
}

/** Opens a regular file for reading (not through a symbolic link); null when there is none. */
async function openRegular(full: string): Promise<{ file: FileHandle; size: number } | null> {
  let file: FileHandle;
  try {
    file = await fs.promises.open(full, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const st = await file.stat();
    if (!st.isFile()) {
      await file.close();
      return null;
    }
    return { file, size: st.size };
  } catch {
    await file.close().catch(() => {});
    return null;
  }
}

export class UploadFiles {
  private readonly root: string;

  constructor(private readonly dataDir: string) {
    this.root = uploadsRoot(dataDir);
  }

  /** A fresh path id for a file named `fileName` (as the client named it) in `realmId`. */
  newPathId(realmId: number, fileName: string): string {
    // 256 first-level directories keep any one directory small, as the reference does.
    return [
      String(realmId),
      crypto.randomInt(256).toString(16),
      crypto.randomBytes(18).toString('base64url'),
      fitStoredName(sanitizeName(fileName)),
    ].join('/');
  }

  /** The absolute path of an upload, or null when `pathId` could leave the uploads directory. */
  filePath(pathId: string): string | null {
    if (!isWellFormedPathId(pathId)) return null;
    const full = path.resolve(this.root, pathId);
    return full.startsWith(this.root + path.sep) ? full : null;
  }

  /** Moves a received file (under DATA_DIR/tmp, the same file system) to its place. */
  async place(tmpPath: string, pathId: string): Promise<void> {
    const dest = this.filePath(pathId);
    if (!dest) throw new Error(`refusing to store an upload at ${JSON.stringify(pathId)}`);
    await fs.promises.mkdir(path.dirname(dest), { recursive: true, mode: 0o700 });
    await fs.promises.rename(tmpPath, dest);
  }

  /**
   * The local path of an upload's file, for reading it whole (thumbnailing); null when it is not
   * here (or `pathId` could leave the uploads directory).
   */
  async localFile(pathId: string): Promise<string | null> {
    const full = this.filePath(pathId);
    return full !== null && (await isRegularFile(full)) ? full : null;
  }

  /** Stores one thumbnail of an upload (`format`: its file name, e.g. `840x560.webp`). */
  async placeThumbnail(pathId: string, format: string, data: Buffer): Promise<void> {
    const dest = thumbnailFilePath(this.dataDir, pathId, format);
    if (!dest) throw new Error(`refusing to store a thumbnail at ${JSON.stringify(pathId)}`);
    await fs.promises.mkdir(path.dirname(dest), { recursive: true, mode: 0o700 });
    await fs.promises.writeFile(dest, data, { mode: 0o600 });
  }

  /**
   * Opens an upload (or one of its thumbnails) for reading; null when it is not there (or is not
   * a regular file).
   */
  async open(
    pathId: string,
    thumbnailFormat?: string,
  ): Promise<{ file: FileHandle; size: number } | null> {
    const full =
      thumbnailFormat === undefined
        ? this.filePath(pathId)
        : thumbnailFilePath(this.dataDir, pathId, thumbnailFormat);
    return full ? openRegular(full) : null;
  }

  /** Whether an upload's file is present. */
  async exists(pathId: string): Promise<boolean> {
    const full = this.filePath(pathId);
    return full !== null && isRegularFile(full);
  }

  /**
   * Removes an upload's file, its own directory (the random segment is unique to the file) and its
   * thumbnails. A file already gone is not an error.
   */
  async remove(pathId: string): Promise<void> {
    const full = this.filePath(pathId);
    if (!full) return;
    await fs.promises.rm(full, { force: true });
    await fs.promises.rmdir(path.dirname(full)).catch(() => {}); // not empty or gone: leave it
    const thumbs = thumbnailFilePath(this.dataDir, pathId);
    if (thumbs) await fs.promises.rm(thumbs, { recursive: true, force: true });
  }

  // ---- custom emoji images: DATA_DIR/emoji/<realm id>/<file name> ----------------------------

  /** Where a custom emoji's image lies (`fileName`: one the server made, or checked as such). */
  emojiPath(realmId: number, fileName: string): string {
    return emojiFile(this.dataDir, realmId, fileName);
  }

  /** Moves a received emoji image (under DATA_DIR/tmp, the same file system) to its place. */
  async placeEmoji(tmpPath: string, realmId: number, fileName: string): Promise<void> {
    const dest = this.emojiPath(realmId, fileName);
    await fs.promises.mkdir(path.dirname(dest), { recursive: true, mode: 0o700 });
    await fs.promises.rename(tmpPath, dest);
  }

  /** Stores an emoji image's bytes (written aside, then renamed: a reader never sees half). */
  async writeEmoji(realmId: number, fileName: string, data: Uint8Array): Promise<void> {
    const dest = this.emojiPath(realmId, fileName);
    await fs.promises.mkdir(path.dirname(dest), { recursive: true, mode: 0o700 });
    const tmp = `${dest}.${crypto.randomBytes(6).toString('hex')}.part`;
    await fs.promises.writeFile(tmp, data, { mode: 0o600 });
    await fs.promises.rename(tmp, dest);
  }

  /** A custom emoji's image, or null when it is not here. */
  async readEmoji(realmId: number, fileName: string): Promise<Buffer | null> {
    return fs.promises.readFile(this.emojiPath(realmId, fileName)).catch(() => null);
  }

  /** Removes an emoji image (one whose row the realm refused). */
  async removeEmoji(realmId: number, fileName: string): Promise<void> {
    await fs.promises.rm(this.emojiPath(realmId, fileName), { force: true });
  }

  // ---- realm icons: DATA_DIR/realm-icons/<realm id>/<file name> -------------------------------

  /** Where an uploaded realm icon lies (`fileName`: one the server made, or checked as such). */
  realmIconPath(realmId: number, fileName: string): string {
    return realmIconFile(this.dataDir, realmId, fileName);
  }

  /** Stores a realm icon's bytes (written aside, then renamed: a reader never sees half). */
  async writeRealmIcon(realmId: number, fileName: string, data: Uint8Array): Promise<void> {
    const dest = this.realmIconPath(realmId, fileName);
    await fs.promises.mkdir(path.dirname(dest), { recursive: true, mode: 0o700 });
    const tmp = `${dest}.${crypto.randomBytes(6).toString('hex')}.part`;
    await fs.promises.writeFile(tmp, data, { mode: 0o600 });
    await fs.promises.rename(tmp, dest);
  }

  /** A realm icon, or null when it is not here. */
  async readRealmIcon(realmId: number, fileName: string): Promise<Buffer | null> {
    return fs.promises.readFile(this.realmIconPath(realmId, fileName)).catch(() => null);
  }

  /** Removes a realm icon (one replaced, deleted, or that the realm refused). */
  async removeRealmIcon(realmId: number, fileName: string): Promise<void> {
    await fs.promises.rm(this.realmIconPath(realmId, fileName), { force: true });
  }

  // ---- realm export archives: DATA_DIR/exports/<realm id>/<secret>/<file> --------------------

  /** Where an export's archive lies; null for a path that is not `<realm id>/<secret>/<file>`. */
  exportFilePath(exportPath: string): string | null {
    return exportDirOf(exportPath) === null
      ? null
      : path.join(exportsRoot(this.dataDir), ...exportPath.split('/'));
  }

  /**
   * Makes the files an export copies present here, before its worker copies them. A single
   * process holds every file it has a row of: nothing to do.
   */
  async gatherForExport(_realmId: number, _files: ExportFiles): Promise<void> {}

  /**
   * An export's archive, complete at its place (exportFilePath), is to be kept: here it already
   * is. Done before the export is marked succeeded.
   */
  async placeExport(_exportPath: string): Promise<void> {}

  /** Opens an export's archive for reading; null when it is not here. */
  async openExport(exportPath: string): Promise<{ file: FileHandle; size: number } | null> {
    const full = this.exportFilePath(exportPath);
    return full === null ? null : openRegular(full);
  }

  /** Removes an export's archive with its directory (`<realm id>/<secret>`). */
  async removeExport(exportPath: string): Promise<void> {
    await this.removeLocalExport(exportPath);
  }

  /** Removes this data directory's copy of an export's archive, with its directory. */
  async removeLocalExport(exportPath: string): Promise<void> {
    const dir = exportDirOf(exportPath);
    if (dir !== null) await this.removeExportDir(dir);
  }

  /** The export directories here, as `<realm id>/<secret>`. */
  async exportDirs(): Promise<string[]> {
    const root = exportsRoot(this.dataDir);
    const out: string[] = [];
    for (const realm of await fs.promises.readdir(root).catch(() => [])) {
      if (!/^\d+$/.test(realm)) continue;
      const secrets = await fs.promises.readdir(path.join(root, realm)).catch(() => []);
      for (const secret of secrets) out.push(`${realm}/${secret}`);
    }
    return out;
  }

  /** Removes an export directory (`<realm id>/<secret>`) and what it holds. */
  async removeExportDir(dir: string): Promise<void> {
    const parts = dir.split('/');
    if (parts.length !== 2 || parts.some((p) => p === '' || p === '.' || p === '..')) return;
    await fs.promises.rm(path.join(exportsRoot(this.dataDir), ...parts), {
      recursive: true,
      force: true,
    });
  }
}
