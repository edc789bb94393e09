/**
 * createServer(): wires storage, realm actors, the event publisher and the HTTP layer, and listens.
 * Used by `npm start` (src/main.ts), by the tests (port 0, a temporary data directory) and by the
 * benches.
 */
import { restoreQueues, saveQueues } from '../actors/event-queue-persistence.js';
import { EventQueues } from '../actors/event-queues.js';
import { RealmRegistry } from '../actors/registry.js';
import { ScheduledDelivery } from '../actors/scheduled-delivery.js';
import { defaultConfig, type ServerConfig } from './config.js';
import type { ServerContext } from './context.js';
import { ENDPOINTS } from './endpoints/index.js';
import { TEST_ENDPOINTS } from './endpoints/testing.js';
import { RequestLimits } from './http/rate-limits.js';
import { InflightTracker, mountEndpoints } from './http/router.js';
import { mountEventSocket } from './http/socket.js';
import { closeListenSocket, createApp, listen, type us_listen_socket } from './http/uws.js';
import type { ClusterNode, ClusterOptions } from './cluster/node.js';
import type { OutboundEvent } from './lib/events.js';
import { DEFAULT_IMAGE_PROXY, ImageProxy } from './media/image-proxy.js';
import { Thumbnailer } from './media/thumbnailer.js';
import { loadImageProxyKey } from './storage/image-proxy-key.js';
import { Store } from './storage/store.js';
import { UploadFiles } from './storage/upload-files.js';
import { RenderPool } from '../workers/pool.js';
import { SERVICE_FEATURE_LEVEL, SERVICE_MERGE_BASE, SERVICE_VERSION } from './version.js';

export type ServerOptions = Partial<ServerConfig> & {
  /** Observe every SQL statement run (query-count assertions in tests). */
  verboseSql?: (sql: unknown) => void;
  /**
   * Observe every batch of committed events as mutations emit them (with the users each is for),
   * before the queues narrow them further. Tests use it to check who an event is for.
   */
  eventTap?: (realmId: number, events: readonly OutboundEvent[]) => void;
  /** Run as a node of a cluster (docs/cluster.md); absent: the single-process server. */
  cluster?: ClusterOptions;
};

export type ConfabServer = {
  readonly port: number;
  readonly url: string;
  readonly context: ServerContext;
  /** The whole store (reads and writes): for tools and tests; endpoints get `context.store`. */
  readonly store: Store;
  /** Requests between arrival and the end of their answer (tests: nothing is left hanging). */
  readonly inflight: number;
  /** The cluster node, when running as one. */
  readonly cluster: ClusterNode | null;
  /**
   * Stops accepting, answers held polls and closes sockets, lets in-flight requests finish, closes
   * realms, saves the event queues and closes the database.
   */
  close(): Promise<void>;
};

export async function createServer(opts: ServerOptions = {}): Promise<ConfabServer> {
  const { verboseSql, eventTap, cluster: clusterOptions, ...overrides } = opts;
  const config: ServerConfig = { ...defaultConfig(), ...overrides };
  const app = createApp(); // throws before anything else if uWS's native binding is missing
  const store = Store.open(config.dataDir, {
    durability: config.durability,
    ...(verboseSql ? { verbose: verboseSql } : {}),
  });
  config.imageProxyKey ??= loadImageProxyKey(config.dataDir);
  const queues = new EventQueues(config, eventTap);
  // Queues saved by a graceful shutdown come back, with a `restart` event, if their user still can
  // use them.
  restoreQueues(
    queues,
    config.dataDir,
    {
      service_version: SERVICE_VERSION,
      service_merge_base: SERVICE_MERGE_BASE,
      service_feature_level: SERVICE_FEATURE_LEVEL,
    },
    (s) => {
      const u = store.users.byId(s.userId);
      return u !== undefined && u.is_active === 1 && u.realm_id === s.realmId;
    },
  );
  // Only a cluster node loads the cluster module (and the NATS client).
  const cluster = clusterOptions
    ? await (await import('./cluster/node.js')).ClusterNode.join(clusterOptions, store, queues)
    : null;
  const realms = new RealmRegistry(store, queues, config.clock, cluster ?? undefined);
  await cluster?.start(realms);
  const renderer = new RenderPool(
    config.renderInlineThreshold !== undefined
      ? { inlineThreshold: config.renderInlineThreshold }
      : {},
  );
  const scheduler = new ScheduledDelivery(config, store, realms, renderer);
  const context: ServerContext = {
    config,
    store,
    uploads: cluster
      ? new (await import('./cluster/uploads.js')).ReplicatedUploadFiles(
          config.dataDir,
          cluster.files,
        )
      : new UploadFiles(config.dataDir),
    realms,
    publisher: cluster ? cluster.publisher : queues,
    queues,
    renderer,
    limits: RequestLimits.fromConfig(config),
    scheduler,
    imageProxy: new ImageProxy(config.dataDir, {
      ...DEFAULT_IMAGE_PROXY,
      ...config.imageProxyLimits,
      allowPrivate: config.imageProxyAllowPrivate,
    }),
    thumbnailer: new Thumbnailer(config, store, realms),
  };
  const inflight = new InflightTracker();

  mountEndpoints(
    app,
    context,
    config.testRoutes ? [...ENDPOINTS, ...TEST_ENDPOINTS] : ENDPOINTS,
    inflight,
  );
  mountEventSocket(app, context);

  let socket: us_listen_socket;
  let port: number;
  try {
    ({ socket, port } = await listen(app, config.host, config.port));
  } catch (err) {
    await scheduler.close();
    await cluster?.close();
    queues.close();
    store.close();
    await renderer.close();
    throw err;
  }

  // Messages that fell due while the server was down go out now.
  scheduler.start();

  let closing: Promise<void> | null = null;
  return {
    port,
    url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
    context,
    store,
    cluster,
    get inflight() {
      return inflight.count;
    },
    close() {
      closing ??= (async () => {
        closeListenSocket(socket);
        queues.beginShutdown(); // answers held polls, closes sockets (clients come back later)
        await inflight.drained(10_000);
        await scheduler.close();
        await context.thumbnailer.close();
        realms.closeAll();
        await cluster?.close();
        let saveFailure: Error | null = null;
        try {
          saveQueues(queues, config.dataDir);
        } catch (err) {
          // Their clients will get BAD_EVENT_QUEUE_ID and register again; the exit is non-zero.
          console.error('saving the event queues failed', err);
          saveFailure = err instanceof Error ? err : new Error(String(err));
        }
        queues.close();
        await renderer.close();
        store.close();
        if (saveFailure !== null) throw saveFailure;
      })();
      return closing;
    },
  };
}
