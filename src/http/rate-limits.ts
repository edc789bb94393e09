/**
 * The server's rate limits (docs/robustness.md "Rate limits"), as the reference applies them
 * (zerver/lib/rate_limiter.py, zerver/decorator.py, zproject/default_settings.py):
 *
 *  - every request authenticated as a user counts against that user (`api_by_user`, 200 per
 *    minute), event-queue requests (GET/DELETE /events, WebSocket upgrades) against a budget of
 *    their own (`events_by_user`);
 *  - every request without credentials counts against its address (`api_by_ip`, 100 per minute);
 *  - POST /fetch_api_key counts against the username (`authenticate_by_username`, 5 per 30
 *    minutes, forgotten after a successful login), and failed HTTP Basic authentications against
 *    the address and the account tried together (`failed_authentication_by_ip`; unknown accounts
 *    share one count per address): once over, that account's credentials from that address are
 *    no longer even checked (those authenticated recently, still in the cache, pass), while other
 *    accounts' from the same address are.
 *
 * Over a limit: 429 RATE_LIMIT_HIT ("API usage exceeded rate limit") with `retry-after` and a
 * `Retry-After` header. Every response to a request a per-user or per-address limit applied to
 * carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset.
 */
import type { RateLimitRules, ServerConfig } from '../config.js';
import { RateLimitedError } from '../lib/errors.js';
import { RateLimiter, type RateStatus, type RateWatch } from '../lib/rate-limit.js';
import { addressKey } from './client-address.js';
import type { RequestContext } from './request.js';

export type UserBucket = 'api' | 'events';

/** The limits' names, as processes sharing their counts name them. */
export type LimitName =
  | 'api_by_user'
  | 'events_by_user'
  | 'api_by_ip'
  | 'authenticate_by_username'
  | 'failed_authentication_by_ip'
  | 'password_reset_by_email';

/**
 * Counts shared between processes serving one deployment (a cluster's nodes behind one proxy:
 * src/cluster/rate-share.ts), so that a client sees the limits of one process wherever its
 * requests go: each process tells the others what it counted and forgot (`counted`, `cleared`),
 * and adds theirs (`attach`'s callback).
 */
export interface SharedLimits {
  counted(limit: LimitName, key: string | number): void;
  cleared(limit: LimitName, key: string | number): void;
  /** Gives the counts of the other processes to `apply` from now on. */
  attach(apply: (limit: LimitName, key: string | number, count: number | 'cleared') => void): void;
}

export class RequestLimits {
  readonly apiByUser: RateLimiter<number>;
  readonly eventsByUser: RateLimiter<number>;
  readonly apiByIp: RateLimiter<string>;
  readonly authenticateByUsername: RateLimiter<string>;
  readonly failedAuthenticationByIp: RateLimiter<string>;
  readonly passwordResetByEmail: RateLimiter<string>;

  /**
   * `clock`: the limiters' (monotonic, milliseconds); `serverClock`: the server's (ServerConfig.clock),
   * for the reset time the headers give.
   */
  constructor(
    rules: RateLimitRules,
    clock: () => number,
    private readonly serverClock: () => number,
    /** A cluster node's: counts shared with the other nodes. */
    shared?: SharedLimits,
  ) {
    const byName = new Map<LimitName, RateLimiter<string | number>>();
    /** `name`'s limiter; a cluster node's tells the other nodes what it counts and forgets. */
    const limiter = <K extends string | number>(name: LimitName): RateLimiter<K> => {
      const watch: RateWatch<K> | undefined = shared && {
        counted: (key) => shared.counted(name, key),
        cleared: (key) => shared.cleared(name, key),
      };
      const made = new RateLimiter<K>(rules[name], clock, watch);
      byName.set(name, made);
      return made;
    };
    this.apiByUser = limiter('api_by_user');
    this.eventsByUser = limiter('events_by_user');
    this.apiByIp = limiter('api_by_ip');
    this.authenticateByUsername = limiter('authenticate_by_username');
    this.failedAuthenticationByIp = limiter('failed_authentication_by_ip');
    this.passwordResetByEmail = limiter('password_reset_by_email');
    shared?.attach((name, key, count) => {
      const made = byName.get(name)!;
      if (count === 'cleared') made.forgetElsewhere(key);
      else made.countElsewhere(key, count);
    });
  }

  /**
   * The limits `config` asks for, or null when rate limiting is off; `shared`: a cluster node's
   * counts shared with the other nodes.
   */
  static fromConfig(config: ServerConfig, shared?: SharedLimits): RequestLimits | null {
    if (config.rateLimits === null) return null;
    return new RequestLimits(
      config.rateLimits,
      config.rateLimitClock ?? (() => performance.now()),
      config.clock,
      shared,
    );
  }

  /**
   * Counts one request by an authenticated user; throws the 429 when over the limit. `null`: a
   * route no per-user limit applies to (media).
   */
  user(ctx: RequestContext, userId: number, bucket: UserBucket | null): void {
    if (bucket === null) return;
    const limiter = bucket === 'events' ? this.eventsByUser : this.apiByUser;
    if (limiter.empty) return;
    const status = newStatus();
    this.take(ctx, status);
    const wait = limiter.attempt(userId, status);
    if (wait > 0) throw new RateLimitedError(wait);
  }

  /** Counts one request without credentials against its address; throws the 429 when over. */
  anonymous(ctx: RequestContext): void {
    if (this.apiByIp.empty) return;
    const status = newStatus();
    this.take(ctx, status);
    const wait = this.apiByIp.attempt(this.addressKeyOf(ctx), status);
    if (wait > 0) throw new RateLimitedError(wait);
  }

  /**
   * Before checking credentials that are not cached: refuses the address and account (a user id,
   * or '*' for accounts that do not exist) over their failures.
   */
  checkAuthentication(ctx: RequestContext, account: string): void {
    if (this.failedAuthenticationByIp.empty) return;
    const status = newStatus();
    const wait = this.failedAuthenticationByIp.peek(this.failureKey(ctx, account), status);
    if (wait > 0) {
      this.note(ctx, status);
      throw new RateLimitedError(wait);
    }
  }

  /**
   * One POST /fetch_api_key attempt for `username` of `realmId` (every attempt counts, as the
   * reference's rate_limit_auth); throws the 429 when over, whatever the password.
   */
  loginAttempt(ctx: RequestContext, realmId: number, username: string): void {
    if (this.authenticateByUsername.empty) return;
    const status = newStatus();
    const wait = this.authenticateByUsername.attempt(usernameKey(realmId, username), status);
    this.note(ctx, status);
    if (wait > 0) throw new RateLimitedError(wait);
  }

  /** A successful login forgets the username's attempts. */
  loginSucceeded(realmId: number, username: string): void {
    this.authenticateByUsername.clear(usernameKey(realmId, username));
  }

  /**
   * One password reset asked for `email` of `realmId`: whether a mail may go (the reference's
   * rate_limit_password_reset_form_by_email). Over the limit the caller sends none and says
   * nothing different, so the limit reveals nothing about the address.
   */
  passwordResetAllowed(realmId: number, email: string): boolean {
    if (this.passwordResetByEmail.empty) return true;
    return this.passwordResetByEmail.attempt(usernameKey(realmId, email)) === 0;
  }

  /** After credentials failed: counts the failure against the address and the account. */
  authenticationFailed(ctx: RequestContext, account: string): void {
    if (this.failedAuthenticationByIp.empty) return;
    this.failedAuthenticationByIp.charge(this.failureKey(ctx, account));
  }

  private failureKey(ctx: RequestContext, account: string): string {
    return `${this.addressKeyOf(ctx)} ${account}`;
  }

  /** The client's key: its address (ctx.clientAddress), an IPv6 one's /64. */
  private addressKeyOf(ctx: RequestContext): string {
    return addressKey(ctx.clientAddress());
  }

  /** The request's standing is this limit's. */
  private take(ctx: RequestContext, status: RateStatus): void {
    ctx.rate = status;
    ctx.rateTakenAt = this.serverClock() / 1000;
  }

  /**
   * Adds a limit's standing to the request's (the headers report the tightest, as the reference's
   * middleware: the fewest requests left with that rule's limit, the latest reset).
   */
  private note(ctx: RequestContext, status: RateStatus): void {
    const rate = ctx.rate;
    if (rate === null) {
      this.take(ctx, status);
      return;
    }
    if (status.remaining < rate.remaining) {
      rate.limit = status.limit;
      rate.remaining = status.remaining;
    }
    rate.resetSeconds = Math.max(rate.resetSeconds, status.resetSeconds);
  }
}

function usernameKey(realmId: number, username: string): string {
  return `${realmId}:${username.trim().toLowerCase()}`;
}

function newStatus(): RateStatus {
  return { limit: 0, remaining: 0, resetSeconds: 0 };
}
