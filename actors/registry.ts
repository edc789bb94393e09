/**
 * The realms of this process: each one's read model (RealmView) and its actor. A realm is the unit
 * of ownership — all its mutations and queues live in one process — so a later multi-process
 * deployment routes by Host to the process owning the realm and this registry stays per process.
 */
import { log } from '../src/observability/log.js';
import { createActor, type Actor } from 'xstate';
import { withAuditOrigin, type AuditOrigin } from '../src/lib/audit.js';
import type { EventPublisher } from '../src/lib/events.js';
import type { MailDeps } from '../src/lib/mail.js';
import type { ServiceBotDeps } from '../src/lib/bots.js';
import { RealmView } from '../src/queries/realm-view.js';
import type { Store } from '../src/storage/store.js';
import { nodeClock } from './clock.js';
import { realmMachine, type CommitStrategy, type Envelope, type Reply } from './realm.machine.js';
import {
  BATCHABLE_COMMANDS,
  REALM_COMMANDS,
  type CommandTable,
  type CommandType,
  type PayloadOf,
  type ResultOf,
} from './realm.commands.js';

/**
 * The cluster deployment's seam (src/cluster, docs/cluster.md): how the realm actor commits (to
 * the replicated log), and where a command runs — here when this node acts as the realm's owner,
 * otherwise forwarded to the node that does. Absent in the single-process server.
 */
export interface RealmPlacement {
  readonly commit: CommitStrategy;
  owns(realmId: number): boolean;
  /** Runs the command on the owner; resolves once this node has applied its effects. */
  forward(realmId: number, type: string, payload: unknown): Promise<unknown>;
  /**
   * Creates a realm at `subdomain` with `create` (its first rows, written outside any realm
   * actor): they become the realm's first log entry, and this node its owner. Refused with the
   * single process's error when another realm has the subdomain, on any node.
   */
  addRealm<T extends { realm_id: number }>(subdomain: string, create: () => T): Promise<T>;
}

/** A realm as one actor uses it (RealmRuntime.actingFrom). */
type ActingView = RealmRuntime & { auditOrigin: () => AuditOrigin };

/** What acting views of `realm` inherit: its own members, and asks that carry their origin. */
function actingPrototypeOf(realm: RealmRuntime): RealmRuntime {
  const proto = Object.create(realm) as RealmRuntime;
  proto.askUntyped = function (this: ActingView, type: string, payload: unknown) {
    return realm.askUntyped(type, withAuditOrigin(type, payload, this.auditOrigin));
  };
  return proto;
}

export class RealmRuntime {
  readonly view: RealmView;
  private readonly actor: Actor<typeof realmMachine>;
  private readonly flushesPresence: boolean;

  constructor(
    store: Store,
    realmId: number,
    publisher: EventPublisher,
    commands: CommandTable = REALM_COMMANDS,
    clock: () => number = Date.now,
    batchable: ReadonlySet<string> = commands === REALM_COMMANDS ? BATCHABLE_COMMANDS : new Set(),
    private readonly placement?: RealmPlacement,
    mail?: MailDeps,
    serviceBots?: ServiceBotDeps,
    /** Group commit spacing (ms; actors/realm.machine.ts), 0: none. */
    commitSpacingMs = 0,
  ) {
    this.view = new RealmView(store, realmId);
    this.flushesPresence = 'presence.flush' in commands;
    this.actor = createActor(realmMachine, {
      input: {
        store,
        view: this.view,
        publisher,
        commands,
        batchable,
        ...(commitSpacingMs > 0 ? { commitSpacingMs } : {}),
        commitHold: () => store.commitHoldMs,
        clock,
        ...(placement ? { commit: placement.commit } : {}),
        ...(mail ? { mail } : {}),
        ...(serviceBots ? { serviceBots } : {}),
      },
      systemId: `realm:${realmId}`,
      clock: nodeClock,
    });
    this.actor.start();
  }

  get id(): number {
    return this.view.id;
  }

  /**
   * Sends a command to the realm actor and resolves with the mutation's result, or rejects with
   * the JsonableError it threw. Commands run in the order `ask` is called.
   */
  ask<K extends CommandType>(type: K, payload: PayloadOf<K>): Promise<ResultOf<K>> {
    return this.askUntyped(type, payload) as Promise<ResultOf<K>>;
  }

  /** For command tables other than the default one (tests of the actor itself). */
  askUntyped(type: string, payload: unknown): Promise<unknown> {
    if (this.placement && !this.placement.owns(this.id))
      return this.placement.forward(this.id, type, payload);
    return this.askHere(type, payload);
  }

  /**
   * This realm as one actor uses it: the commands it asks that the audit log records carry
   * `origin` (src/lib/audit.ts), called when the first such command is asked (never for a request
   * that asks none). Everything else is this runtime's. What it costs per call is one object of a
   * shape shared by every view of this realm (no closure, no new shape): its prototype, which asks
   * with the origin, is made once, at the first call.
   */
  actingFrom(origin: () => AuditOrigin): RealmRuntime {
    const view = Object.create((this.actingPrototype ??= actingPrototypeOf(this))) as ActingView;
    view.auditOrigin = origin;
    return view;
  }

  /** The prototype of this realm's acting views (actingFrom), once one was asked for. */
  private actingPrototype: RealmRuntime | undefined = undefined;

  /**
   * Runs the command on this node's actor (the owner's side of a forwarded command; `forward`: its
   * id, which its batch's log entry names).
   */
  askHere(type: string, payload: unknown, forward?: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const reply = (r: Reply) =>
        r.ok
          ? resolve(r.data)
          : reject(r.error instanceof Error ? r.error : new Error(String(r.error)));
      const envelope: Envelope = { command: type, payload, reply };
      if (forward !== undefined) envelope.forward = forward;
      this.actor.send({ type: 'COMMAND', envelope });
    });
  }

  get status(): 'open' | 'closed' {
    return this.actor.getSnapshot().matches('closed') ? 'closed' : 'open';
  }

  get applied(): number {
    return this.actor.getSnapshot().context.applied;
  }

  close(): void {
    // Presence changed since the last batch write is written before the realm closes.
    if (this.flushesPresence && (!this.placement || this.placement.owns(this.id))) {
      this.actor.send({
        type: 'COMMAND',
        envelope: {
          command: 'presence.flush',
          payload: {},
          reply: (r) => {
            if (!r.ok) log.error({ err: r.error, realmId: this.id }, 'writing presence failed');
          },
        },
      });
    }
    this.actor.send({ type: 'CLOSE' });
  }
}

export class RealmRegistry {
  private readonly byId = new Map<number, RealmRuntime>();
  private readonly idByStringId = new Map<string, number>();
  /** Host header → realm, memoized (a Host maps to the same realm until realms are added). */
  private readonly byHost = new Map<string, RealmRuntime | undefined>();

  constructor(
    private readonly store: Store,
    private readonly publisher: EventPublisher,
    /** The realms' clock (milliseconds); see ServerConfig.clock. */
    private readonly clock: () => number = Date.now,
    /** Cluster deployment only. */
    private readonly placement?: RealmPlacement,
    /** Outgoing mail (docs/mail.md); absent: the realms send none. */
    private readonly mail?: MailDeps,
    /** Outgoing-webhook bots (docs/integrations.md); absent: none are called. */
    private readonly serviceBots?: ServiceBotDeps,
    /** Group commit spacing of message sends (ms; ServerConfig.commitSpacingMs), 0: none. */
    private readonly commitSpacingMs = 0,
  ) {
    for (const r of store.realms.all()) this.idByStringId.set(r.string_id, r.id);
  }

  /** The realm for a Host header, given how to read its subdomain. */
  byHostHeader(host: string, subdomainOf: (host: string) => string): RealmRuntime | undefined {
    const known = this.byHost.get(host);
    if (known !== undefined || this.byHost.has(host)) return known;
    const rt = this.bySubdomain(subdomainOf(host));
    if (this.byHost.size >= 1000) this.byHost.clear();
    this.byHost.set(host, rt);
    return rt;
  }

  /** The realm served at a subdomain ('' = the root domain), if any. */
  bySubdomain(subdomain: string): RealmRuntime | undefined {
    const id = this.idByStringId.get(subdomain);
    return id === undefined ? undefined : this.get(id);
  }

  get(realmId: number): RealmRuntime | undefined {
    let rt = this.byId.get(realmId);
    if (!rt) {
      if (!this.store.realms.byId(realmId)) return undefined;
      rt = new RealmRuntime(
        this.store,
        realmId,
        this.publisher,
        REALM_COMMANDS,
        this.clock,
        BATCHABLE_COMMANDS,
        this.placement,
        this.mail,
        this.serviceBots,
        this.commitSpacingMs,
      );
      this.byId.set(realmId, rt);
      this.idByStringId.set(rt.view.row.string_id, realmId);
    }
    return rt;
  }

  /**
   * Creates a realm at `subdomain`: `create` writes its first rows (there is no actor for it
   * yet) — here, or on a cluster node through the cluster, which makes this node its owner.
   */
  async createRealm<T extends { realm_id: number }>(
    subdomain: string,
    create: () => T,
  ): Promise<T> {
    const created = this.placement ? await this.placement.addRealm(subdomain, create) : create();
    this.noteRealmCreated(created.realm_id);
    return created;
  }

  /** Whether this process runs the realm's actor (always, outside a cluster). */
  owns(realmId: number): boolean {
    return this.placement === undefined || this.placement.owns(realmId);
  }

  /** Whether the realms belong to a cluster (this process is one of its nodes). */
  get clustered(): boolean {
    return this.placement !== undefined;
  }

  /** Call after creating a realm outside the registry (first boot, admin command). */
  noteRealmCreated(realmId: number): void {
    const row = this.store.realms.byId(realmId);
    if (row) this.idByStringId.set(row.string_id, row.id);
    this.byHost.clear();
  }

  loaded(): RealmRuntime[] {
    return [...this.byId.values()];
  }

  closeAll(): void {
    for (const rt of this.byId.values()) rt.close();
  }
}
