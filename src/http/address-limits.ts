/**
 * Per-address fairness (docs/robustness.md "Per-address limits"): what one client address may
 * hold of the server at once, so that one address cannot fill it for everyone else.
 *
 *  - connections held: requests in flight (a held long-poll is one) and open event WebSockets,
 *    at most `maxConnections` per address (MAX_CONNECTIONS_PER_ADDRESS);
 *  - requests without credentials (no Authorization header, no session cookie) in flight, at most
 *    `maxUnauthenticated` per address (MAX_UNAUTHENTICATED_PER_ADDRESS): slow anonymous requests
 *    (a body sent a byte at a time) cannot take what authenticated users need.
 *
 * A request or upgrade beyond is answered 429 RATE_LIMIT_HIT with `Retry-After` (the API's
 * clients back off on it) and its connection closed. The address is the client's: the peer, or
 * behind a proxy in TRUSTED_PROXIES the X-Forwarded-For entry it added (src/http/client-address.ts);
 * IPv6 clients count by /64. Addresses in `exempt` (ADDRESS_LIMITS_EXEMPT, by default 127.0.0.1 and
 * ::1: this machine, e.g. a local proxy not declared trusted, through which every client would share
 * one address) are not counted. Connections that hold nothing (between requests, or a head not
 * complete yet) are not counted: uWS closes them after its 10 s idle timeout (nginx, in the
 * production recipe, holds the client connections itself and counts the same way, by requests).
 *
 * Reading a request's address costs a system call and an ArrayBuffer in uWS (~1 µs, a tenth of a
 * held long-poll's whole cost on the main thread), and a limit can only be reached by an address
 * once the server holds that many connections in all. So while the server holds fewer than
 * `maxConnections` connections, and fewer than UNREAD_MAX, a request with credentials that is
 * still held when its handler returns (`take`) is counted without its address; before one more
 * would make either many, the addresses of all those are read (they are all still live: a
 * request leaves the count as it is answered) and counted as before, before anything else is
 * counted. Every decision (`admit`, `mayRefuse`) is the same as if every address had been read at
 * once: with some left unread, no address can be at the connection limit, and requests without
 * credentials are always counted by address. A server holding more reads each address as before
 * (UNREAD_MAX bounds the reads made at once: ~0.3 ms of the main thread).
 */
import type { ServerConfig } from '../config.js';
import { JsonableError } from '../lib/errors.js';
import { addressKey, clientAddress, normalizeAddress, ProxyTrust } from './client-address.js';
import type { RequestContext } from './request.js';

/** Addresses whose counting key is remembered; past it the memo starts afresh. */
const MEMO_LIMIT = 50_000;
/** How long a refused client is told to wait (seconds). */
const RETRY_AFTER_S = 5;

/** What `admit` took for one request or socket: give it back once. */
export type Release = () => void;

/** At most this many requests are counted without their address (see the module comment). */
const UNREAD_MAX = 256;

/**
 * A request `take` counted without reading its address; `release`, once it has been read; `at`,
 * its slot in the UnreadList (-1: none).
 */
type Unread = { readonly ctx: RequestContext; release: Release | null; at: number };

/**
 * The requests counted without their address, in an array whose slots are reused (a request
 * leaving takes the last one's place): adding and removing allocate nothing. A Set did this
 * before, and a Set whose entries come and go keeps making its hash table anew; once the Set is
 * in V8's old generation each new table is made there too, and each table it replaces still
 * points at the requests it held, so that every request held at that moment (its context, its
 * handler's promise, a send's whole payload) outlived the young generation: with 50 long-polls
 * cycling per send, ~20 KB per send ended in the old generation (docs/benchmarks.md "What a send
 * leaves in the old generation"). The array keeps the length of the most held at once.
 */
class UnreadList {
  private readonly slots: (Unread | null)[] = [];
  size = 0;

  add(u: Unread): void {
    u.at = this.size;
    this.slots[this.size++] = u;
  }

  remove(u: Unread): void {
    const i = u.at;
    if (i < 0 || this.slots[i] !== u) return;
    const last = this.slots[--this.size]!;
    this.slots[this.size] = null;
    if (last !== u) {
      this.slots[i] = last;
      last.at = i;
    }
    u.at = -1;
  }

  /** Calls `fn` for each, oldest slot first, then empties the list. */
  drain(fn: (u: Unread) => void): void {
    for (let i = 0; i < this.size; i++) fn(this.slots[i]!);
    for (let i = 0; i < this.size; i++) {
      this.slots[i]!.at = -1;
      this.slots[i] = null;
    }
    this.size = 0;
  }
}

export class AddressLimits {
  /** Address key → connections held (requests in flight, WebSockets). */
  private readonly held = new Map<string, number>();
  /** Address key → requests without credentials in flight. */
  private readonly unauthenticated = new Map<string, number>();
  private readonly trust: ProxyTrust | null;
  private readonly exempt: ProxyTrust;
  /** Peer text (and X-Forwarded-For) → counting key (null: not counted); see `keyOf`. */
  private readonly keys = new Map<string, string | null>();
  /** Requests and upgrades refused so far (tests, logs). */
  refused = 0;
  /** Addresses holding `maxConnections` connections now (none: no request can be refused). */
  private atConnectionLimit = 0;
  /** Addresses holding `maxUnauthenticated` requests without credentials now. */
  private atUnauthenticatedLimit = 0;
  /** Connections held whose address was read: counted under it, or exempt. */
  private read = 0;
  /** Requests counted without their address read yet (`take`; see the module comment). */
  private readonly unread = new UnreadList();

  constructor(
    readonly maxConnections: number,
    readonly maxUnauthenticated: number,
    exempt: readonly string[],
    trustedProxies: readonly string[],
  ) {
    this.trust = trustedProxies.length > 0 ? new ProxyTrust(trustedProxies) : null;
    this.exempt = new ProxyTrust(exempt);
  }

  /** The limits `config` asks for, or null when both are off (0). */
  static fromConfig(config: ServerConfig): AddressLimits | null {
    if (config.maxConnectionsPerAddress === 0 && config.maxUnauthenticatedPerAddress === 0)
      return null;
    return new AddressLimits(
      config.maxConnectionsPerAddress,
      config.maxUnauthenticatedPerAddress,
      config.addressLimitsExempt,
      config.trustedProxies,
    );
  }

  /**
   * Takes one connection (and, `unauthenticated`, one anonymous request) for the request's
   * address; throws the 429 when its address is at a limit. The returned function gives them
   * back (idempotent).
   */
  admit(ctx: RequestContext, unauthenticated: boolean): Release {
    return this.countByAddress(ctx, unauthenticated, true);
  }

  /** Counts the request under its address (read now); `refuse`: throws the 429 at a limit. */
  private countByAddress(ctx: RequestContext, unauthenticated: boolean, refuse: boolean): Release {
    this.readIfFull();
    const key = this.keyOf(ctx.peerAddress(), ctx.forwardedFor);
    if (key === null) return this.exempt1();
    const held = this.held.get(key) ?? 0;
    const anonymous = unauthenticated ? (this.unauthenticated.get(key) ?? 0) : 0;
    if (
      refuse &&
      ((this.maxConnections > 0 && held >= this.maxConnections) ||
        (unauthenticated && this.maxUnauthenticated > 0 && anonymous >= this.maxUnauthenticated))
    ) {
      this.refused++;
      throw new JsonableError('Too many requests at once from this address', {
        code: 'RATE_LIMIT_HIT',
        status: 429,
        extra: { 'retry-after': RETRY_AFTER_S },
        headers: { 'Retry-After': String(RETRY_AFTER_S) },
      });
    }
    return this.count(key, held, anonymous, unauthenticated);
  }

  /**
   * Whether some address is at a limit a request (with credentials or, `unauthenticated`, without)
   * could be refused by. When none is, `admit` cannot refuse: the router counts a request only
   * if it is still held when its handler returns (`take`), and leaves the address of a request
   * answered at once unread (uWS makes it anew on each call). Counting is unchanged for everyone
   * else: no other request runs between the check and the count.
   */
  mayRefuse(unauthenticated: boolean): boolean {
    return this.atConnectionLimit > 0 || (unauthenticated && this.atUnauthenticatedLimit > 0);
  }

  /** `admit` for a request `mayRefuse` said could not be refused: takes its share, never throws. */
  take(ctx: RequestContext, unauthenticated: boolean): Release {
    if (!unauthenticated && this.roomUnread()) {
      const u: Unread = { ctx, release: null, at: -1 };
      this.unread.add(u);
      return () => {
        if (u.release !== null) u.release();
        else this.unread.remove(u);
      };
    }
    return this.countByAddress(ctx, unauthenticated, false);
  }

  /**
   * Whether one more connection can be counted without its address: even if every connection
   * held came from one address, it would stay under `maxConnections` (none: nothing to reach),
   * and under UNREAD_MAX.
   */
  private roomUnread(): boolean {
    return (
      this.maxConnections === 0 ||
      this.read + this.unread.size + 1 < Math.min(this.maxConnections, UNREAD_MAX)
    );
  }

  /** Before counting by address: reads and counts the unread ones if the server is near a limit. */
  private readIfFull(): void {
    if (this.unread.size > 0 && !this.roomUnread()) this.readUnread();
  }

  /** Counts every request counted so far without its address under its address. */
  private readUnread(): void {
    this.unread.drain((u) => {
      const key = this.keyOf(u.ctx.peerAddress(), u.ctx.forwardedFor);
      u.release =
        key === null ? this.exempt1() : this.count(key, this.held.get(key) ?? 0, 0, false);
    });
  }

  /** A connection from an address not counted (exempt, or none): only in the total read. */
  private exempt1(): Release {
    this.read++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.read--;
    };
  }

  private count(key: string, held: number, anonymous: number, unauthenticated: boolean): Release {
    this.held.set(key, held + 1);
    this.read++;
    if (held + 1 === this.maxConnections) this.atConnectionLimit++;
    if (unauthenticated) {
      this.unauthenticated.set(key, anonymous + 1);
      if (anonymous + 1 === this.maxUnauthenticated) this.atUnauthenticatedLimit++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.read--;
      if (decrement(this.held, key) === this.maxConnections - 1) this.atConnectionLimit--;
      if (unauthenticated && decrement(this.unauthenticated, key) === this.maxUnauthenticated - 1)
        this.atUnauthenticatedLimit--;
    };
  }

  /**
   * The counting key of a request from `peer` with `forwardedFor`, or null when it is not counted
   * (exempt, or no address): memoized, since canonical forms and range checks cost microseconds
   * and a server sees the same few thousand addresses over and over.
   */
  private keyOf(peer: string, forwardedFor: string): string | null {
    const memo = forwardedFor === '' ? peer : `${peer}\n${forwardedFor}`;
    const known = this.keys.get(memo);
    if (known !== undefined) return known;
    let key: string | null = null;
    const address = normalizeAddress(peer);
    if (address !== '' && !(this.exempt.trusts(address) && forwardedFor === '')) {
      const client = clientAddress(address, forwardedFor, this.trust);
      if (!this.exempt.trusts(client)) key = addressKey(client);
    }
    if (this.keys.size >= MEMO_LIMIT) this.keys.clear();
    this.keys.set(memo, key);
    return key;
  }

  /** Connections held by the address of `text` (tests; reads the unread ones first). */
  heldBy(text: string): number {
    this.readUnread();
    return this.held.get(addressKey(normalizeAddress(text))) ?? 0;
  }

  /** Addresses holding anything (tests: all given back; reads the unread ones first). */
  get addresses(): number {
    this.readUnread();
    return this.held.size;
  }

  /** Requests counted without their address read yet (tests). */
  get unreadCount(): number {
    return this.unread.size;
  }
}

/** Takes one from `key`'s count; returns what is left. */
function decrement(map: Map<string, number>, key: string): number {
  const n = (map.get(key) ?? 1) - 1;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
  return n;
}
