/**
 * A realm's linkifiers as the API shows them (`{id, pattern, url_template}`, in processing
 * order), cached per realm until a linkifier mutation commits.
 */
import type { RenderLinkifier } from '../lib/markdown/context.js';
import { topicLinks, type TopicLink } from '../lib/markdown/linkifiers.js';
import type { ReadStore } from '../storage/store.js';
import type { RealmView } from './realm-view.js';

type Cached = { stamp: number; list: readonly RenderLinkifier[] };

const cache = new WeakMap<RealmView, Cached>();
const stamps = new Map<number, number>();

/** Call after a linkifier change commits (the realm actor's afterCommit). */
export function noteLinkifiersChanged(realmId: number): void {
  stamps.set(realmId, (stamps.get(realmId) ?? 0) + 1);
}

export function linkifierStamp(realmId: number): number {
  return stamps.get(realmId) ?? 0;
}

export function linkifiersOf(store: ReadStore, view: RealmView): readonly RenderLinkifier[] {
  const stamp = linkifierStamp(view.id);
  const hit = cache.get(view);
  if (hit && hit.stamp === stamp) return hit.list;
  const list = store.linkifiers
    .byRealm(view.id)
    .map((r) => ({ pattern: r.pattern, url_template: r.url_template, id: r.id }));
  cache.set(view, { stamp, list });
  return list;
}

/** The `topic_links` of a topic in this realm (message objects carry them). */
export function topicLinksOf(store: ReadStore, view: RealmView, topic: string): TopicLink[] {
  return topicLinks(topic, linkifiersOf(store, view));
}
