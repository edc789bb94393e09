/**
 * The markdown RenderContext of a realm, built from what the realm has now (users, user groups,
 * linkifiers, custom emoji) and cached until any of them changes. Channels and alert words are
 * empty here until those areas exist; each adds its data to build() and its change counter to
 * the version.
 */
import type { ServerConfig } from '../config.js';
import type { RenderContext } from '../lib/markdown/context.js';
import { realmUrl } from '../lib/urls.js';
import type { Store } from '../storage/store.js';
import { linkifierStamp, linkifiersOf } from './linkifiers.js';
import { realmEmojiRows, realmEmojiStamp, emojiSourceUrl } from './realm-emoji.js';
import type { RealmView } from './realm-view.js';

const cache = new WeakMap<RealmView, RenderContext>();

function versionOf(view: RealmView): string {
  return `${view.id}.${view.version}.${linkifierStamp(view.id)}.${realmEmojiStamp(view.id)}`;
}

export function renderContextFor(
  config: Pick<ServerConfig, 'externalHost' | 'externalScheme'>,
  store: Store,
  view: RealmView,
): RenderContext {
  const version = versionOf(view);
  const hit = cache.get(view);
  if (hit && hit.version === version) return hit;
  const ctx: RenderContext = {
    version,
    realm_url: realmUrl(config, view.row.string_id),
    users: [...view.usersById.values()].map((u) => ({
      id: u.id,
      full_name: u.full_name,
      is_active: u.is_active === 1,
    })),
    groups: [...view.groupsById.values()].map((g) => ({
      id: g.id,
      name: g.name,
      deactivated: g.deactivated === 1,
    })),
    channels: [],
    linkifiers: linkifiersOf(store, view),
    realm_emoji: realmEmojiRows(store, view)
      .filter((e) => !e.deactivated)
      .map((e) => ({ name: e.name, source_url: emojiSourceUrl(e.realm_id, e.file_name) })),
    alert_words: [],
  };
  cache.set(view, ctx);
  return ctx;
}
