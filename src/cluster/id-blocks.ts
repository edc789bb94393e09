/**
 * Ids of new rows in a cluster (docs/cluster.md "Ids"). The id tables (src/storage/ids.ts) are
 * shared by every realm, and each realm's owner writes to its own copy: left to SQLite, two owners
 * would both give their next row the largest id plus one, and each would overwrite the other's
 * row on every node that applies both. So an owner gives every new row an explicit id, from
 * blocks of ids claimed for the realm alone:
 *
 * - The lease bucket holds a counter, `id-blocks`: the lowest id no block holds yet. A claim
 *   advances it by a block's size with a compare-and-set on its revision (the one that loses
 *   reads it again), so each id goes to one claim, and blocks are claimed in increasing order.
 *   The first claim of a cluster creates the counter above every id the claiming node's copy
 *   holds or gave (the first realm got its ids from SQLite, as in a single process); a cluster
 *   seeded from an existing database has it raised above that database's first (seed.ts).
 * - The owner of a realm holds a current block, whose ids it hands out in increasing order (each
 *   table its own cursor in it, so a new cluster's first realm numbers its rows as a single
 *   process would), and a reserve block, claimed in advance: when a table's cursor reaches the
 *   end of the block, the reserve becomes the current block for every table at once and a new
 *   reserve is claimed in the background. A later block has higher ids, so a realm's ids keep increasing, also across an
 *   owner's change (a new owner claims fresh blocks; nobody continues a dead owner's). Should a
 *   burst use up both before the new reserve arrives, the write is refused (503, try again)
 *   rather than given an id outside the realm's blocks.
 * - A guard (TEMP triggers, src/storage/ids.ts `guardIdTables`) refuses any row inserted in an
 *   owner's transaction with an id outside the realm's blocks, so an INSERT that forgot to take
 *   its id fails loudly instead of colliding. Rows applied from the log carry their ids and are
 *   not checked.
 */
import type { KV } from 'nats';
import { JsonableError } from '../lib/errors.js';
import type { DB } from '../storage/db.js';
import { guardIdTables, largestId, type IdSource, type IdTable } from '../storage/ids.js';
import { isWrongLastSequence, NotOwnerError, raiseNumber, sleep } from './jetstream.js';

/** Ids per block: 65,536 (2^53 ids last 2^37 blocks). */
export const ID_BLOCK_SIZE = 2 ** 16;

/** The lease bucket's key holding the lowest id no block holds yet. */
export const ID_BLOCKS_KEY = 'id-blocks';

/**
 * Claims the next `ids` ids (a block, or two: consecutive); resolves with the first. Claims are
 * counted in ids, not blocks, so nodes need not agree on a block size.
 */
export type ClaimIds = (ids: number) => Promise<number>;

/** Both of a realm's blocks used up before the next was claimed: try again in a moment. */
export class IdBlocksExhaustedError extends JsonableError {
  constructor() {
    super('This server is allocating ids for the realm; try again', {
      code: 'BAD_REQUEST',
      status: 503,
      extra: { 'retry-after': 1 },
      headers: { 'Retry-After': '1' },
    });
  }
}

type Block = { start: number; end: number };

/** The blocks of one realm, as its owner holds them (pure: claims go through `claim`). */
export class RealmIdBlocks {
  private current: Block;
  /** Each table's next id in the current block (absent: the block's first). */
  private readonly cursors = new Map<string, number>();
  private reserve: Block | null;
  private claiming: Promise<void> | null = null;
  private closed = false;

  private constructor(
    private readonly claim: ClaimIds,
    readonly size: number,
    first: number,
  ) {
    this.current = { start: first, end: first + size };
    this.reserve = { start: first + size, end: first + 2 * size };
  }

  /** A realm's blocks as its owner starts: a current block and a reserve, in one claim. */
  static async claimFor(claim: ClaimIds, size = ID_BLOCK_SIZE): Promise<RealmIdBlocks> {
    return new RealmIdBlocks(claim, size, await claim(2 * size));
  }

  /**
   * The next id of a table, above every id given to it before; throws IdBlocksExhaustedError
   * when there is none.
   */
  next(table: string): number {
    let id = this.cursors.get(table) ?? this.current.start;
    if (id >= this.current.end) {
      if (this.reserve === null) {
        this.claimReserve();
        throw new IdBlocksExhaustedError();
      }
      // Every table moves on: the reserve is above all of the current block.
      this.current = this.reserve;
      this.reserve = null;
      this.cursors.clear();
      this.claimReserve();
      id = this.current.start;
    }
    this.cursors.set(table, id + 1);
    return id;
  }

  /**
   * The id `next(table)` would give now, without giving it: a realm created on a node reserves
   * its subdomain for its id before its row is written (subdomains.ts).
   */
  peek(table: string): number {
    const id = this.cursors.get(table) ?? this.current.start;
    if (id < this.current.end) return id;
    if (this.reserve === null) throw new IdBlocksExhaustedError();
    return this.reserve.start;
  }

  /** Whether `id` is one of this realm's to give: in the current block or the reserve. */
  holds(id: number): boolean {
    const inside = (b: Block | null) => b !== null && id >= b.start && id < b.end;
    return inside(this.current) || inside(this.reserve);
  }

  /** The current block and the reserve (null while a new one is being claimed). */
  get blocks(): { current: Block; reserve: Block | null } {
    return { current: { ...this.current }, reserve: this.reserve && { ...this.reserve } };
  }

  /** Resolves once no claim is under way (tests). */
  async settled(): Promise<void> {
    while (this.claiming) await this.claiming;
  }

  /** The realm is no longer this node's: claim nothing more for it. */
  close(): void {
    this.closed = true;
  }

  /** Claims a new reserve in the background, unless one is there or on its way. */
  private claimReserve(): void {
    if (this.reserve !== null || this.claiming !== null || this.closed) return;
    this.claiming = this.claim(this.size)
      .then(
        (start) => {
          // Claims come from an increasing counter; a lower block would break the realm's order.
          if (start >= this.current.end && !this.closed)
            this.reserve = { start, end: start + this.size };
        },
        (err: unknown) => console.error(`claiming an id block failed: ${String(err)}`),
      )
      .finally(() => (this.claiming = null));
  }
}

/**
 * Claims the next `count` ids from the bucket's counter with a compare-and-set (again while
 * another node's claim wins); creates the counter at `firstFree()` if it is absent.
 */
export async function claimIds(kv: KV, count: number, firstFree: () => number): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const e = await kv.get(ID_BLOCKS_KEY);
    const held = e !== null && e.operation === 'PUT';
    const first = held ? Number(e.string()) : firstFree();
    if (!Number.isSafeInteger(first + count) || first < 1)
      throw new Error(`${ID_BLOCKS_KEY}: cannot claim ${count} ids from ${first}`);
    try {
      if (held) await kv.update(ID_BLOCKS_KEY, String(first + count), e.revision);
      else await kv.create(ID_BLOCKS_KEY, String(first + count));
      return first;
    } catch (err) {
      if (!isWrongLastSequence(err) || attempt >= 100) throw err;
      await sleep(Math.random() * 5 * Math.min(attempt, 10));
    }
  }
}

/**
 * Raises the counter to at least `atLeast` (creating it there if absent); its value. A cluster
 * seeded from an existing database (seed.ts) gives no id that database holds or gave, even if an
 * earlier cluster left a lower counter in the bucket.
 */
export async function raiseIdCounter(kv: KV, atLeast: number): Promise<number> {
  return (await raiseNumber(kv, ID_BLOCKS_KEY, atLeast)).value;
}

/**
 * A cluster node's id source (installed in its Store) and the guard's judge. What a new row may
 * get depends on what the node is doing:
 * - a realm's write (an owner's actor transaction, or a realm being created here): the next id
 *   of the realm's blocks, and only ids of those blocks pass the guard;
 * - applying the log, or creating the first realm of an empty cluster: SQLite's choice (log
 *   entries carry their ids; the first realm has nothing to collide with), unchecked;
 * - anything else writes no id table: refused.
 */
export class ClusterIds implements IdSource {
  private realm: { blocks: RealmIdBlocks | undefined } | null = null;
  private unchecked = 0;

  constructor(db: DB) {
    guardIdTables(db, (id) => this.allows(id));
  }

  /**
   * Runs `body` (synchronous) as a write of the realm holding `blocks` (undefined: a realm this
   * node does not own, whose rows are refused).
   */
  writing<T>(blocks: RealmIdBlocks | undefined, body: () => T): T {
    const outer = this.realm;
    this.realm = { blocks };
    try {
      return body();
    } finally {
      this.realm = outer;
    }
  }

  /** Runs `body` with ids left to SQLite, unchecked: applying the log, the first realm. */
  async withoutBlocks<T>(body: () => T | Promise<T>): Promise<T> {
    this.unchecked++;
    try {
      return await body();
    } finally {
      this.unchecked--;
    }
  }

  /** The same for a synchronous body. */
  withoutBlocksSync<T>(body: () => T): T {
    this.unchecked++;
    try {
      return body();
    } finally {
      this.unchecked--;
    }
  }

  nextId(table: IdTable): number | null {
    if (this.realm !== null) {
      if (!this.realm.blocks) throw new NotOwnerError();
      return this.realm.blocks.next(table);
    }
    if (this.unchecked > 0) return null;
    throw new Error(`a new ${table} row outside any realm's write (cluster node)`);
  }

  private allows(id: number): boolean {
    if (this.realm !== null) return this.realm.blocks?.holds(id) ?? false;
    return this.unchecked > 0;
  }
}

/**
 * The claims a node makes for its realms: the bucket's counter, started above its own copy; one
 * claim at a time. A NATS cluster older than nats-server 2.9.21 can accept two concurrent
 * compare-and-set updates of one key made with the same revision (nats-server issue 4320: the
 * expected-last-subject-sequence check was not part of the replicated write), and two realms a
 * node took at once (a cluster seeded with several realms, a restart) got the same block.
 * Claims of different nodes can still meet so on such a server; 2.9.21 and later refuse one.
 */
export function idClaimer(kv: KV, db: DB): ClaimIds {
  let last: Promise<unknown> = Promise.resolve();
  return (count) => {
    const claim = last.then(() => claimIds(kv, count, () => largestId(db) + 1));
    last = claim.catch(() => undefined);
    return claim;
  };
}
