/**
 * A realm's linkifiers as the API shows them (`{id, pattern, url_template}`, in processing
 * order), cached per realm until a linkifier mutation commits.
 */
import type { RenderLinkifier } from '../lib/markdown/context.js';
import { topicLinks, type TopicLink } from '../lib/markdown/linkifiers.js';
import type { ReadStore } from '../storage/store.js';
import { cacheSlot } from './realm-caches.js';
import type { RealmView } from './realm-view.js';

type Cached = { stamp: number; list: readonly RenderLinkifier[] };

const LINKIFIERS = cacheSlot<Cached>('linkifiers');

/** Call after a linkifier change commits (the realm actor's afterCommit). */
export function noteLinkifiersChanged(view: RealmView): void {
  view.caches.changed('linkifiers');
}

export function linkifierStamp(view: RealmView): number {
  return view.caches.stamp('linkifiers');
}

export function linkifiersOf(store: ReadStore, view: RealmView): readonly RenderLinkifier[] {
  const stamp = linkifierStamp(view);
  const hit = view.caches.get(LINKIFIERS);
  if (hit && hit.stamp === stamp) return hit.list;
  const list = store.linkifiers
    .byRealm(view.id)
    .map((r) => ({ pattern: r.pattern, url_template: r.url_template, id: r.id }));
  view.caches.set(LINKIFIERS, { stamp, list });
  return list;
}

/** The `topic_links` of a topic in this realm (message objects carry them). */
export function topicLinksOf(store: ReadStore, view: RealmView, topic: string): TopicLink[] {
  return topicLinks(topic, linkifiersOf(store, view));
}
