/**
 * createServer(): wires storage, realm actors, the event publisher and the HTTP layer, and listens.
 * Used by `npm start` (src/main.ts), by the tests (port 0, a temporary data directory) and by the
 * benches.
 */
import { RealmRegistry } from '../actors/registry.js';
import { defaultConfig, type ServerConfig } from './config.js';
import type { ServerContext } from './context.js';
import { ENDPOINTS } from './endpoints/index.js';
import { TEST_ENDPOINTS } from './endpoints/testing.js';
import { InflightTracker, mountEndpoints } from './http/router.js';
import { closeListenSocket, createApp, listen, type us_listen_socket } from './http/uws.js';
import type { EventPublisher, OutboundEvent } from './lib/events.js';
import { Store } from './storage/store.js';
import { RenderPool } from '../workers/pool.js';

export type ServerOptions = Partial<ServerConfig> & {
  /** Observe every SQL statement run (query-count assertions in tests). */
  verboseSql?: (sql: unknown) => void;
  /**
   * Observe every batch of committed events as mutations emit them (with the users each is for),
   * before the queues narrow them further. Tests use it to check who an event is for.
   */
  eventTap?: (realmId: number, events: readonly OutboundEvent[]) => void;
};

export type ConfabServer = {
  readonly port: number;
  readonly url: string;
  readonly context: ServerContext;
  /** Stops accepting, lets in-flight requests finish, closes realms and the database. */
  close(): Promise<void>;
};

/** Until the event-queue system is mounted, committed events have no audience but the tap. */
class NoQueuesPublisher implements EventPublisher {
  constructor(private readonly tap?: (realmId: number, events: readonly OutboundEvent[]) => void) {}
  publish(realmId: number, events: readonly OutboundEvent[]): void {
    this.tap?.(realmId, events);
  }
}

export async function createServer(opts: ServerOptions = {}): Promise<ConfabServer> {
  const { verboseSql, eventTap, ...overrides } = opts;
  const config: ServerConfig = { ...defaultConfig(), ...overrides };
  const app = createApp(); // throws before anything else if uWS's native binding is missing
  const store = Store.open(config.dataDir, verboseSql ? { verbose: verboseSql } : {});
  const publisher: EventPublisher = new NoQueuesPublisher(eventTap);
  const realms = new RealmRegistry(store, publisher);
  const renderer = new RenderPool(
    config.renderInlineThreshold !== undefined
      ? { inlineThreshold: config.renderInlineThreshold }
      : {},
  );
  const context: ServerContext = { config, store, realms, publisher, renderer };
  const inflight = new InflightTracker();

  mountEndpoints(
    app,
    context,
    config.testRoutes ? [...ENDPOINTS, ...TEST_ENDPOINTS] : ENDPOINTS,
    inflight,
  );

  let socket: us_listen_socket;
  let port: number;
  try {
    ({ socket, port } = await listen(app, config.host, config.port));
  } catch (err) {
    store.close();
    await renderer.close();
    throw err;
  }

  let closing: Promise<void> | null = null;
  return {
    port,
    url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
    context,
    close() {
      closing ??= (async () => {
        closeListenSocket(socket);
        await inflight.drained(10_000);
        realms.closeAll();
        await renderer.close();
        store.close();
      })();
      return closing;
    },
  };
}
