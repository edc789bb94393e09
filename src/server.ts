/**
 * createServer(): wires storage, realm actors, the event publisher and the HTTP layer, and listens.
 * Used by `npm start` (src/main.ts), by the tests (port 0, a temporary data directory) and by the
 * benches.
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { log } from './observability/log.js';
import { openFilesLimit, openFilesReport } from './observability/open-files.js';
import { restoreQueues, saveQueues } from './delivery/persistence.js';
import { EventQueues } from './delivery/publisher.js';
import { RealmRegistry } from '../actors/registry.js';
import { ScheduledDelivery } from '../actors/scheduled-delivery.js';
import { RealmExportJobs } from './admin/export-jobs.js';
import { handleAdminRequest } from './admin/service.js';
import { AdminSocketServer } from './admin/socket.js';
import { defaultConfig, nowSeconds, type ServerConfig } from './config.js';
import type { ServerContext } from './context.js';
import { ENDPOINTS } from './endpoints/index.js';
import { mountTestSockets, TEST_ENDPOINTS } from './endpoints/testing.js';
import { AddressLimits } from './http/address-limits.js';
import { ProxyTrust } from './http/client-address.js';
import { RequestLimits } from './http/rate-limits.js';
import { mountOpsRoutes } from './http/ops-routes.js';
import { ShutdownGate } from './http/drain.js';
import { removeStrayUploadParts } from './http/body.js';
import { InflightTracker, mountEndpoints } from './http/router.js';
import { withJsonMirror } from './http/json-mirror.js';
import { mountWebApp } from './http/static-files.js';
import { mountDefaultImages } from './http/default-images.js';
import { resolveRealm } from './http/auth.js';
import { mountEventSocket } from './http/socket.js';
import {
  buildReport,
  closeAllConnections,
  closeListenSocket,
  createApp,
  listen,
  uwsBuild,
  type us_listen_socket,
} from './http/uws.js';
import type { ClusterNode, ClusterOptions } from './cluster/node.js';
import type { OutboundEvent } from './lib/events.js';
import { DEFAULT_IMAGE_PROXY, ImageProxy } from './media/image-proxy.js';
import { Thumbnailer } from './media/thumbnailer.js';
import { MailSender, loadSmtpTransport } from './mail/sender.js';
import { MissedMessageMailer } from './mail/missed-messages.js';
import {
  MAX_WAITING as MAX_OUTGOING_WEBHOOK_CALLS,
  OutgoingWebhooks,
} from './bots/outgoing-webhooks.js';
import type { ServiceBotDeps } from './lib/bots.js';
import type { MailDeps } from './lib/mail.js';
import { uploadedIconFileIn } from './lib/realm-icons.js';
import { realmUrl } from './lib/urls.js';
import { loadImageProxyKey } from './storage/image-proxy-key.js';
import { dataDirWritable, HealthMonitor } from './observability/health.js';
import { DataStats } from './observability/data-stats.js';
import { registerSource, setBuildInfo, type QueueFigures } from './observability/metrics.js';
import { DataDirLock } from './storage/data-lock.js';
import { Store } from './storage/store.js';
import { UploadFiles } from './storage/upload-files.js';
import { RenderPool } from '../workers/pool.js';
import { CONFAB_VERSION, VERSION_FIELDS } from './version.js';
import { SQLITE_PACKAGE } from './storage/sqlite.js';

export type ServerOptions = Partial<ServerConfig> & {
  /** Observe every SQL statement run (query-count assertions in tests). */
  verboseSql?: (sql: unknown) => void;
  /**
   * Observe every batch of committed events as mutations emit them (with the users each is for),
   * before the queues narrow them further. Tests use it to check who an event is for.
   */
  eventTap?: (realmId: number, events: readonly OutboundEvent[]) => void;
  /**
   * The data directory's lock, when the caller already holds it (npm start takes it before the
   * first boot); otherwise the server takes it, and refuses to start if another process has it.
   */
  lock?: DataDirLock;
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
   * With `graceMs` (a standalone server's signal passes its SHUTDOWN_GRACE_MS setting), answers
   * new requests 503 (./http/drain.ts) and stops listening only after the grace; without, stops
   * listening at once. Then answers held polls and closes sockets, lets in-flight requests finish,
   * closes realms, saves the event queues and closes the database.
   */
  close(options?: { graceMs?: number }): Promise<void>;
  /**
   * What the shutdown is doing now (null before `close`): the step a shutdown that does not end
   * is stuck in, for its log line (src/signals.ts).
   */
  readonly closeStage: string | null;
  /** What GET /health reports (src/main.ts marks the start-up under way on it). */
  readonly health: HealthMonitor;
};

/**
 * Whether this process has said which uWS build it runs and how many connections its open-files
 * limit allows (once, at its first server's start).
 */
let buildLogged = false;

export async function createServer(opts: ServerOptions = {}): Promise<ConfabServer> {
  const { verboseSql, eventTap, lock: heldLock, cluster: clusterOptions, ...overrides } = opts;
  const config: ServerConfig = { ...defaultConfig(), ...overrides };
  // New requests once the shutdown began: 503 (./http/drain.ts). GET /health keeps answering
  // its report (503, shutting_down) for load balancers, and GET /metrics its figures for
  // scrapers: a process stays scrapeable until it is gone, as Prometheus' exporters are, and the
  // last scrape holds the counters up to the end.
  const proxyTrust =
    config.trustedProxies.length > 0 ? new ProxyTrust(config.trustedProxies) : null;
  const gate = new ShutdownGate(['/health', '/metrics'], { access: config, proxyTrust });
  const app = createApp(gate); // throws before anything else if uWS's native binding is missing
  if (!buildLogged) {
    buildLogged = true;
    const { msg, fields } = buildReport();
    log.info(fields, msg);
    const limit = openFilesLimit();
    if (limit) {
      const files = openFilesReport(limit);
      log[files.level](files.fields, files.msg);
    }
  }
  // nodemailer, only in a server that sends mail (loaded here, before anything is opened, so that a
  // module that fails to load fails the start as it failed the import before: ./mail/sender.ts).
  const makeSmtpTransport = config.smtpUrl !== null ? await loadSmtpTransport(config) : null;
  const lock = heldLock ?? DataDirLock.acquire(config.dataDir, 'server');
  let store: Store;
  try {
    store = Store.open(config.dataDir, {
      durability: config.durability,
      ...(verboseSql ? { verbose: verboseSql } : {}),
    });
  } catch (err) {
    lock.release();
    throw err;
  }
  const strayParts = removeStrayUploadParts(path.join(config.dataDir, 'tmp'));
  if (strayParts > 0)
    log.info({ files: strayParts }, 'removed partial uploads left by an earlier run');
  config.imageProxyKey ??= loadImageProxyKey(config.dataDir);
  const queues = new EventQueues(config, eventTap);
  // Queues saved by a graceful shutdown come back, with a `restart` event, if their user still can
  // use them.
  restoreQueues(queues, config.dataDir, VERSION_FIELDS, (s) => {
    const u = store.users.byId(s.userId);
    return u !== undefined && u.is_active === 1 && u.realm_id === s.realmId;
  });
  // Only a cluster node loads the cluster module (and the NATS client): connected first, so that
  // what the node needs exists before it is made (nothing is wired into it afterwards).
  const clusterModule = clusterOptions ? await import('./cluster/node.js') : null;
  const link = clusterModule ? await clusterModule.ClusterNode.connect(clusterOptions!) : null;
  const replicated = link
    ? new (await import('./cluster/uploads.js')).ReplicatedUploadFiles(
        config.dataDir,
        link.files,
        (await import('./cluster/objects.js')).nextThroughLeader(link.jsm),
      )
    : null;
  const uploads = replicated ?? new UploadFiles(config.dataDir);
  const exports = new RealmExportJobs(config, uploads, store, link?.exportRuns);
  let realms: RealmRegistry | null = null;
  const cluster =
    clusterModule && link
      ? new clusterModule.ClusterNode(link, store, queues, {
          // Copies of deleted uploads, and of realm icons replaced or deleted, go as the log is
          // applied (a catch-up too).
          filesGone: ({ uploads: pathIds, realmIcons }) => {
            for (const id of pathIds)
              replicated!.removeLocal(id).catch((err: unknown) => {
                log.error({ err, path_id: id }, 'removing the copy of a deleted upload failed');
              });
            for (const realmId of realmIcons)
              replicated!
                .removeLocalRealmIconsExcept(realmId, () =>
                  uploadedIconFileIn(store.realms.byId(realmId)?.settings),
                )
                .catch((err: unknown) => {
                  log.error({ err, realm_id: realmId }, 'removing the copy of a realm icon failed');
                });
          },
          // Copies of archives no longer served go whenever a change to an export is applied.
          exportsChanged: () => void exports.sweep(),
          exportOrphaned: async (realmId, id) => {
            const realm = realms?.get(realmId);
            if (!realm) throw new Error(`no realm ${realmId}`);
            await exports.failOrphaned(realm, id);
          },
          // A realm taken over: what its previous owner left in the store goes from here.
          realmOwned: () => {
            mailer?.wake();
            missedMail?.wake();
            outgoing?.wake();
          },
        })
      : null;
  // Outgoing mail: the realms write it to the outbox, the sender delivers it (docs/mail.md).
  const mailOn = makeSmtpTransport !== null;
  let mailer: MailSender | null = null;
  let missedMail: MissedMessageMailer | null = null;
  const mailDeps: MailDeps | undefined = mailOn
    ? {
        realmUrl: (stringId) => realmUrl(config, stringId),
        maxOutbox: config.mail.maxOutbox,
        wake: () => mailer?.wake(),
        hasMessageQueue: (realmId, userId) =>
          queues.forUser(userId).some((q) => q.realmId === realmId && q.filter.wantsMessages),
        wakeMissedMessages: () => missedMail?.wake(),
      }
    : undefined;
  let outgoing: OutgoingWebhooks | null = null;
  const serviceBots: ServiceBotDeps = {
    maxWaiting: MAX_OUTGOING_WEBHOOK_CALLS,
    wake: () => outgoing?.wake(),
  };
  realms = new RealmRegistry(
    store,
    queues,
    config.clock,
    cluster ?? undefined,
    mailDeps,
    serviceBots,
    config.commitSpacingMs,
  );
  mailer = makeSmtpTransport ? new MailSender(config, store, realms, makeSmtpTransport()) : null;
  missedMail = mailOn ? new MissedMessageMailer(config, store, realms) : null;
  if (mailOn) {
    // A user's last queue gone unfetched: what it missed may be mailed (docs/mail.md).
    queues.onLastMessageQueueGone = (realmId, userId, lastActivityMs) => {
      const realm = realms.get(realmId);
      if (!realm || !realms.owns(realmId)) return;
      realm
        .ask('missed_messages.queue_gone', {
          user_id: userId,
          since: Math.floor(lastActivityMs / 1000),
        })
        .catch((err: unknown) => log.warn({ err, realmId, userId }, 'queue-gone mail not noted'));
    };
  }
  try {
    await cluster?.start(realms);
  } catch (err) {
    // Nothing listens or runs yet: what was made on this copy is closed, so that whoever started
    // the server may start it again in this process (src/cluster/main.ts, from a snapshot when
    // the log was trimmed past the copy). A lock the caller holds stays held.
    await cluster?.close().catch(() => undefined);
    // The mail senders (made above: an SMTP pool, timers a replayed entry may have armed).
    await missedMail?.close().catch(() => undefined);
    await mailer?.close().catch(() => undefined);
    realms.closeAll();
    await exports.close().catch(() => undefined);
    queues.close();
    store.close();
    await store.stopped();
    if (!heldLock) lock.release();
    throw err;
  }
  const renderer = new RenderPool(
    config.renderInlineThreshold !== undefined
      ? { inlineThreshold: config.renderInlineThreshold }
      : {},
  );
  const scheduler = new ScheduledDelivery(config, store, realms, renderer);
  outgoing = new OutgoingWebhooks(config, store, realms, renderer, config.outgoingWebhookLimits);
  const context: ServerContext = {
    config,
    store,
    uploads,
    temporaryUrlKey: cluster ? cluster.temporaryUrlKey : crypto.randomBytes(32),
    realms,
    publisher: cluster ? cluster.publisher : queues,
    queues,
    renderer,
    proxyTrust,
    limits: RequestLimits.fromConfig(config, cluster?.sharedLimits),
    addressLimits: AddressLimits.fromConfig(config),
    scheduler,
    mailer,
    missedMessageMail: missedMail,
    outgoingWebhooks: outgoing,
    imageProxy: new ImageProxy(config.dataDir, {
      ...DEFAULT_IMAGE_PROXY,
      ...config.imageProxyLimits,
      allowPrivate: config.imageProxyAllowPrivate,
    }),
    thumbnailer: new Thumbnailer(store, realms, uploads),
    exports,
    ...(cluster
      ? {
          readBarrier: (realmId: number | undefined) =>
            realmId !== undefined && cluster.owns(realmId) ? null : cluster.readBarrier(),
          deleteRemoteQueue: async (queueId: string, userId: number) => {
            const r = await cluster.queueOp({ op: 'delete', queueId, userId });
            if (r === null) return 'gone' as const;
            if (r.ok) return 'deleted' as const;
            return r.error === 'NOT_YOURS' ? ('not-yours' as const) : ('gone' as const);
          },
        }
      : {}),
  };
  // Exports the previous process left unfinished failed with it. Not on a cluster node: its copy
  // is written by the log only (this write would reach no other node, and its captured row would
  // ride, stale, in a later entry of whatever realm the node writes next), and an unfinished export
  // there may be under way on another node. There, the owner of an export's realm fails it through
  // the log once its node is gone (src/cluster/export-runs.ts).
  if (!cluster) store.realmExports.failUnfinished(nowSeconds(config));
  // What an interrupted or failed export left on disk goes now; on a cluster node also copies of
  // archives since deleted, now and whenever it applies a change to an export (docs/cluster.md
  // "Guarantees").
  void exports.sweep();
  const inflight = new InflightTracker();
  const health = new HealthMonitor(
    () => store.ping(),
    config.healthMaxLagMs,
    dataDirWritable(config.dataDir),
  );
  mountOpsRoutes(app, {
    health,
    metricsToken: config.metricsToken,
    proxyTrust: context.proxyTrust,
  });

  // The browser app's page and assets; every API endpoint also under /json/ for it, by session.
  mountWebApp(
    app,
    config,
    config.webDir,
    (host) =>
      resolveRealm(realms, host, config.externalHost)?.view.settings.external_avatars ?? false,
  );
  mountDefaultImages(app, config);
  mountEndpoints(
    app,
    context,
    withJsonMirror(config.testRoutes ? [...ENDPOINTS, ...TEST_ENDPOINTS] : ENDPOINTS),
    inflight,
  );
  mountEventSocket(app, context);
  if (config.testRoutes) mountTestSockets(app);

  let listener: { socket: us_listen_socket; port: number };
  try {
    listener = await listen(app, config.host, config.port);
  } catch (err) {
    await scheduler.close();
    await missedMail?.close();
    await mailer?.close();
    await cluster?.close();
    queues.close();
    store.close();
    await renderer.close();
    lock.release();
    throw err;
  }
  // The admin tool's way in while the server runs (src/admin/socket.ts).
  let adminSocket: AdminSocketServer | null = null;
  try {
    adminSocket = await AdminSocketServer.listen(config.dataDir, (req) =>
      handleAdminRequest(
        {
          config,
          store,
          realms,
          renderer,
          queues,
          ...(cluster ? { readBarrier: () => cluster.readBarrier() } : {}),
        },
        req,
      ),
    );
  } catch (err) {
    // The server serves without it; the admin tool then finds the data directory locked.
    log.error({ err }, 'the admin socket could not be opened');
  }

  // Messages that fell due while the server was down go out now, and mail left in the outbox.
  scheduler.start();
  missedMail?.start();
  mailer?.start();
  outgoing.start(); // calls left by the last run
  health.start();
  setBuildInfo({ version: CONFAB_VERSION, uws: uwsBuild, sqlite: SQLITE_PACKAGE });
  const dataStats = new DataStats(config.dataDir);
  const unregisterMetrics = registerSource({
    data: () => dataStats.current(),
    inflight: () => inflight.count,
    queues: () => queueFigures(queues),
    renderPool: () => renderer.backlog,
    checkpoints: () => store.checkpointStats,
    unreadSettle: () => store.unreadSettleFigures,
    ...(mailer ? { mail: () => mailer.figures() } : {}),
    ...(cluster
      ? {
          replication: async () => {
            const local = cluster.localStatus();
            // The log not answering within 2 s: the rest is still reported.
            let timer: NodeJS.Timeout | undefined;
            const unknown = { lag: NaN, replicasAway: NaN };
            const { lag, replicasAway } = await Promise.race([
              cluster.status().then(
                (st) => st,
                () => unknown,
              ),
              new Promise<typeof unknown>(
                (resolve) => (timer = setTimeout(() => resolve(unknown), 2000)),
              ),
            ]);
            clearTimeout(timer);
            return {
              applied: local.applied,
              lag,
              replicasAway,
              owned: local.held,
              acting: local.acting,
              stalled: local.stalled ? 1 : 0,
              stalledSeconds: local.behindFor,
              consumerRestarts: local.consumerRestarts,
              natsServer: local.natsServer,
            };
          },
        }
      : {}),
  });

  const port = listener.port;
  // PORT=0 without EXTERNAL_HOST: the links given to clients name the port actually picked.
  if (config.externalHostFromPort) config.externalHost = `localhost:${port}`;
  let closing: Promise<void> | null = null;
  let closeStage: string | null = null;
  return {
    port,
    url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
    context,
    store,
    cluster,
    health,
    get inflight() {
      return inflight.count;
    },
    get closeStage() {
      return closeStage;
    },
    close({ graceMs = 0 } = {}) {
      closing ??= (async () => {
        // Each step on its own: one that fails is logged by name and the rest still run (the
        // queues are saved, the database closed, the lock released); the exit is then non-zero,
        // with every failed step named in the log.
        const failed: string[] = [];
        const step = async (name: string, fn: () => unknown): Promise<void> => {
          closeStage = name;
          try {
            await fn();
          } catch (err) {
            log.error({ err, step: name }, `shutdown: ${name} failed`);
            failed.push(name);
          }
        };
        health.shuttingDown = true;
        // With a grace only (a standalone server's signal): a cluster node's proxy fails over on
        // a refused connection, and direct calls (tests, benches) stop as they always did.
        if (graceMs > 0) gate.close();
        // Still listening for the grace: a connection in the kernel's backlog would be reset by
        // the close; taken, its request is answered 503 (./http/drain.ts).
        const stopListening = (async () => {
          if (graceMs > 0) await new Promise((resolve) => setTimeout(resolve, graceMs));
          await step('closing the listening socket', () => closeListenSocket(listener.socket));
          if (gate.refused > 0)
            log.info(
              { refused: gate.refused, graceMs },
              `shutdown: ${gate.refused} requests answered 503 (shutting down) so far`,
            );
        })();
        await step('closing the admin socket', () => adminSocket?.close());
        // Answers held polls, closes sockets (clients come back later).
        await step('answering held polls', () => queues.beginShutdown());
        closeStage = 'letting requests in flight finish';
        await inflight.drained(10_000);
        closeStage = 'waiting for the grace to end';
        await stopListening;
        // From here the parts requests use close one by one. A request that comes now, on a
        // connection taken before the listening socket closed (with no grace: a cluster node),
        // is answered 503 (shutting down, Retry-After) rather than run against them: one came
        // 3 ms after a node's signal, found its NATS connection draining, and was answered 503
        // "catching up" (test/cluster/node-grace).
        gate.close();
        await step('stopping scheduled messages', () => scheduler.close());
        await step('stopping missed-message mail', () => missedMail?.close());
        await step('stopping the mail sender', () => mailer?.close());
        await step('stopping outgoing webhooks', () => outgoing.close());
        await step('stopping the thumbnailer', () => context.thumbnailer.close());
        await step('stopping exports', () => context.exports.close());
        await step('closing the realms', () => realms.closeAll());
        await step('leaving the cluster', () => cluster?.close());
        // Their clients get BAD_EVENT_QUEUE_ID and register again when this fails.
        await step('saving the event queues', () => saveQueues(queues, config.dataDir));
        await step('stopping the queues', () => queues.close());
        await step('closing connections', () => closeAllConnections(app));
        await step('stopping the render threads', () => renderer.close());
        await step('closing the database', async () => {
          store.close();
          // Its checkpoint thread ends before the process does (it may still be starting).
          await store.stopped();
        });
        health.stop();
        unregisterMetrics();
        dataStats.stop();
        await step('releasing the data directory', () => lock.release());
        closeStage = 'done';
        if (failed.length > 0) throw new Error(`shutdown: ${failed.join(', ')} failed`);
      })();
      return closing;
    },
  };
}

/** The event queues' figures for /metrics: walks every queue (at scrape time only). */
function queueFigures(queues: EventQueues): QueueFigures {
  const { bytes: memory, budget } = queues.stats();
  const figures: QueueFigures = {
    queues: 0,
    events: 0,
    bytes: 0,
    memory,
    budget,
    heldPolls: 0,
    sockets: 0,
  };
  // Each buffer keeps its own count and size: a scrape walks the queues, not their events (at
  // 10,000 queues, listing every pending event cost a scrape about 30 ms of the main thread).
  for (const rt of queues.list()) {
    figures.queues++;
    if (rt.state === 'waiting') figures.heldPolls++;
    else if (rt.state === 'streaming') figures.sockets++;
    figures.events += rt.queue.size;
    figures.bytes += rt.queue.bytes;
  }
  return figures;
}
