/**
 * What a commit wrote: the pages of the last transaction in a database's write-ahead log, each
 * named by the b-tree (table or index) it belongs to, from SQLite's `dbstat` table. The WAL holds
 * one frame (a 24-byte header and a whole page) per page a commit changed; the frames of one
 * commit end at the frame whose header carries the database size (non-zero only on a commit).
 */
import fs from 'node:fs';
import Database from '../../src/storage/sqlite.js';
import type { DB } from '../../src/storage/db.js';

/** The page numbers of the WAL's last commit (valid frames only: those of the current salts). */
export function lastCommitPages(walFile: string): number[] {
  let b: Buffer;
  try {
    b = fs.readFileSync(walFile);
  } catch {
    return [];
  }
  if (b.length < 32) return [];
  const pageSize = b.readUInt32BE(8);
  const salt1 = b.readUInt32BE(16);
  const salt2 = b.readUInt32BE(20);
  let frames: number[] = [];
  let last: number[] = [];
  for (let off = 32; off + 24 + pageSize <= b.length; off += 24 + pageSize) {
    if (b.readUInt32BE(off + 8) !== salt1 || b.readUInt32BE(off + 12) !== salt2) break;
    frames.push(b.readUInt32BE(off));
    if (b.readUInt32BE(off + 4) !== 0) {
      last = frames;
      frames = [];
    }
  }
  return last;
}

/**
 * The commits appended to a WAL since the last `read` (each its page numbers, oldest first): the
 * frames after the last commit seen, or all valid ones once the WAL has started afresh (new
 * salts; commits made before the restart and not yet read are then missed).
 */
export class WalCommits {
  private salts = '';
  private offset = 32;
  constructor(private readonly walFile: string) {}
  read(): number[][] {
    let b: Buffer;
    try {
      b = fs.readFileSync(this.walFile);
    } catch {
      return [];
    }
    if (b.length < 32) return [];
    const pageSize = b.readUInt32BE(8);
    const salt1 = b.readUInt32BE(16);
    const salt2 = b.readUInt32BE(20);
    if (`${salt1}:${salt2}` !== this.salts) {
      this.salts = `${salt1}:${salt2}`;
      this.offset = 32;
    }
    const commits: number[][] = [];
    let frames: number[] = [];
    for (let off = this.offset; off + 24 + pageSize <= b.length; off += 24 + pageSize) {
      if (b.readUInt32BE(off + 8) !== salt1 || b.readUInt32BE(off + 12) !== salt2) break;
      frames.push(b.readUInt32BE(off));
      if (b.readUInt32BE(off + 4) !== 0) {
        commits.push(frames);
        frames = [];
        this.offset = off + 24 + pageSize;
      }
    }
    return commits;
  }
}

/** Names pages by their b-tree, reading the database (and its WAL) on a connection of its own. */
export class PageOwners {
  private readonly db: DB;
  private owners = new Map<number, string>();
  constructor(file: string) {
    this.db = new Database(file, { readonly: true });
    this.refresh();
  }
  /** Reads the page map again (after commits that grew or split b-trees). */
  refresh(): void {
    const rows = this.db.prepare('SELECT name, pageno FROM dbstat').all() as {
      name: string;
      pageno: number;
    }[];
    this.owners = new Map(rows.map((r) => [r.pageno, r.name]));
  }
  /** The b-tree a page belongs to; pages not in one are the header page or free pages. */
  of(page: number): string {
    return this.owners.get(page) ?? (page === 1 ? '(database header)' : '(new or free page)');
  }
  close(): void {
    this.db.close();
  }
}
