/**
 * How much of the WAL is waiting to be copied, read from the wal-index (the database's -shm file;
 * its format: https://www.sqlite.org/walformat.html, "The WAL-Index Format"). The first 136 bytes
 * hold the header twice (48 bytes each; a writer changes the first copy, then the second, so two
 * equal copies are a consistent read) and then the checkpoint information: `mxFrame`, the last
 * valid frame, is at byte 16 of a header copy and `nBackfill`, the frames already copied, at byte
 * 96, both 32-bit in the machine's byte order. Read with pread: cheap (no lock, no checkpoint).
 */
import fs from 'node:fs';
import os from 'node:os';

const HEADER = 48;

export class WalIndex {
  private fd: number | null = null;
  private readonly buf = Buffer.alloc(2 * HEADER + 4);
  private readonly little = os.endianness() === 'LE';

  constructor(private readonly shmFile: string) {}

  /** Frames in the WAL not yet copied into the database; null when the header is not readable. */
  waiting(): number | null {
    const h = this.read();
    if (h === null) return null;
    // Just after a restart nBackfill may still be the old WAL's until the writer resets it.
    return h.nBackfill <= h.mxFrame ? h.mxFrame - h.nBackfill : h.mxFrame;
  }

  /** The WAL's last valid frame (0: empty, or just started afresh); null when not readable. */
  frames(): number | null {
    return this.read()?.mxFrame ?? null;
  }

  private read(): { mxFrame: number; nBackfill: number } | null {
    try {
      this.fd ??= fs.openSync(this.shmFile, 'r');
      if (fs.readSync(this.fd, this.buf, 0, this.buf.length, 0) < this.buf.length) return null;
    } catch {
      return null;
    }
    if (!this.buf.subarray(0, HEADER).equals(this.buf.subarray(HEADER, 2 * HEADER))) return null;
    return {
      mxFrame: this.little ? this.buf.readUInt32LE(16) : this.buf.readUInt32BE(16),
      nBackfill: this.little ? this.buf.readUInt32LE(96) : this.buf.readUInt32BE(96),
    };
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}
