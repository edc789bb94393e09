/**
 * Uploaded files in a cluster (docs/cluster.md): each file is kept on the node that received it
 * and in a JetStream object store bucket (replicated like the log); a node asked for a file it does
 * not have fetches it from the bucket once and keeps it. The file is in the bucket before the
 * upload's row is committed, so any node that sees the row can get the file.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ObjectStore } from 'nats';
import { UploadFiles } from '../storage/upload-files.js';

export class ReplicatedUploadFiles extends UploadFiles {
  private readonly tmpDir: string;

  constructor(
    dataDir: string,
    private readonly bucket: ObjectStore,
  ) {
    super(dataDir);
    this.tmpDir = path.resolve(dataDir, 'tmp');
  }

  override async place(tmpPath: string, pathId: string): Promise<void> {
    const body = Readable.toWeb(fs.createReadStream(tmpPath)) as ReadableStream<Uint8Array>;
    await this.bucket.put({ name: pathId }, body);
    await super.place(tmpPath, pathId);
  }

  /** Fetches a file this node does not have from the bucket; false when the bucket lacks it. */
  private async fetchMissing(pathId: string): Promise<boolean> {
    if (await super.exists(pathId)) return true;
    const result = await this.bucket.get(pathId).catch(() => null);
    if (!result) return false;
    await fs.promises.mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    const tmp = path.join(this.tmpDir, crypto.randomBytes(16).toString('hex'));
    try {
      await pipeline(Readable.fromWeb(result.data), fs.createWriteStream(tmp, { mode: 0o600 }));
      if (!(await result.error)) {
        await super.place(tmp, pathId);
        return true;
      }
      return false;
    } finally {
      await fs.promises.rm(tmp, { force: true });
    }
  }

  override async open(pathId: string): ReturnType<UploadFiles['open']> {
    const here = await super.open(pathId);
    if (here) return here;
    return (await this.fetchMissing(pathId).catch(() => false)) ? super.open(pathId) : null;
  }

  override async exists(pathId: string): Promise<boolean> {
    if (await super.exists(pathId)) return true;
    return (await this.bucket.info(pathId).catch(() => null)) !== null;
  }

  override async remove(pathId: string): Promise<void> {
    await this.bucket.delete(pathId).catch(() => undefined);
    await super.remove(pathId);
  }
}
