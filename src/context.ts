/**
 * What endpoints can reach: configuration, the store (its reads only: writes go through realm
 * actors), the uploaded files, the realms, the event publisher and its queues. Built once by
 * createServer().
 */
import type { EventQueues } from './delivery/publisher.js';
import type { RealmExportJobs } from './admin/export-jobs.js';
import type { RealmRegistry } from '../actors/registry.js';
import type { ScheduledDelivery } from '../actors/scheduled-delivery.js';
import type { RenderPool } from '../workers/pool.js';
import type { ServerConfig } from './config.js';
import type { AddressLimits } from './http/address-limits.js';
import type { ProxyTrust } from './http/client-address.js';
import type { RequestLimits } from './http/rate-limits.js';
import type { EventPublisher } from './lib/events.js';
import type { ImageProxy } from './media/image-proxy.js';
import type { MailSender } from './mail/sender.js';
import type { MissedMessageMailer } from './mail/missed-messages.js';
import type { OutgoingWebhooks } from './bots/outgoing-webhooks.js';
import type { Thumbnailer } from './media/thumbnailer.js';
import type { ReadStore } from './storage/store.js';
import type { UploadFiles } from './storage/upload-files.js';

export interface ServerContext {
  readonly config: ServerConfig;
  readonly store: ReadStore;
  /** Uploaded files on disk (their rows are in the store). */
  readonly uploads: UploadFiles;
  /**
   * Signs temporary upload URLs (src/lib/upload-tokens.ts): made at start by a single process (a
   * restart invalidates the URLs it gave, which live a minute by default); one for the whole
   * cluster on a cluster node (ClusterNode.temporaryUrlKey), so that any node accepts a URL
   * another made.
   */
  readonly temporaryUrlKey: Buffer;
  readonly realms: RealmRegistry;
  readonly publisher: EventPublisher;
  /** Markdown rendering: inline for short content, a worker pool for long content and batches. */
  readonly renderer: RenderPool;
  /** The event queues (the publisher itself): register, poll, sockets, GC. */
  readonly queues: EventQueues;
  /** Per-address limits on what one client holds (src/http/address-limits.ts); null when off. */
  readonly addressLimits: AddressLimits | null;
  /**
   * The reverse proxies whose X-Forwarded-For names the client (TRUSTED_PROXIES); null: none, the
   * peer is the client.
   */
  readonly proxyTrust: ProxyTrust | null;
  /** The rate limits (src/http/rate-limits.ts); null when they are off. */
  readonly limits: RequestLimits | null;
  /** Delivery of scheduled messages (one timer); endpoints tell it about new due times. */
  readonly scheduler: ScheduledDelivery;
  /** The image proxy (GET /external_content/…). */
  readonly imageProxy: ImageProxy;
  /** Thumbnails of uploaded images, made off the event loop, one queue for the server. */
  readonly thumbnailer: Thumbnailer;
  /** Outgoing mail's sender (docs/mail.md); null when SMTP_URL is not set. */
  readonly mailer: MailSender | null;
  /** Missed-message mail's batches (docs/mail.md); null when the server sends no mail. */
  readonly missedMessageMail: MissedMessageMailer | null;
  /** Calls to outgoing-webhook bots (docs/integrations.md), off the request path. */
  readonly outgoingWebhooks: OutgoingWebhooks;
  /** Realm exports requested through the API, run one at a time (src/admin/export-jobs.ts). */
  readonly exports: RealmExportJobs;
  /**
   * Cluster nodes only (docs/cluster.md "Guarantees"): what a request of a realm (undefined: none
   * known here yet) waits for before it runs — this node's copy catching up with the log — or
   * null when it need not wait (this node owns the realm).
   */
  readonly readBarrier?: (realmId: number | undefined) => Promise<void> | null;
  /**
   * Cluster nodes only: deletes an event queue another node holds (its id names the node), over
   * NATS (src/cluster/forwarding.ts): 'deleted', 'not-yours', or 'gone' (no such queue or node).
   */
  readonly deleteRemoteQueue?: (
    queueId: string,
    userId: number,
  ) => Promise<'deleted' | 'not-yours' | 'gone'>;
}
