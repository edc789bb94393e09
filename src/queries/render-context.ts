/**
 * The markdown RenderContext of a realm, built from what the realm has now (users, user groups,
 * channels, linkifiers) and cached until any of them changes (the version joins the change counters of the realm view, the
 * channel list, the linkifiers, the custom emoji and the alert words). Channels, custom emoji and alert words each add their data to build() and their change
 * counter to the version.
 *
 * Interface for every area that renders markdown for a user (messages, edits, previews,
 * descriptions):
 *   renderContextFor(config, store, view)              the realm's context (cached)
 *   renderOptionsFor(view, userId, content)            the sender's options: translate_emoticons,
 *                                                      and the channels the content may link
 *   renderDescription(config, store, view, text, id)   a channel/folder description (inline, no
 *                                                      previews); id null: the realm description
 */
import type { ServerConfig } from '../config.js';
import { possibleChannelNames, possibleTopicLinks } from '../lib/markdown/index.js';
import type { RenderContext, RenderOptions, UploadPreview } from '../lib/markdown/context.js';
import { imageFacts, uploadPathIdsIn, uploadPreviewOf } from '../lib/thumbnail-formats.js';
import { renderDescriptionHtml } from '../lib/render-description.js';
import { realmUrl } from '../lib/urls.js';
import type { ReadStore } from '../storage/store.js';
import { alertWordStamp, alertWordsOf } from './alert-words.js';
import { linkifierStamp, linkifiersOf } from './linkifiers.js';
import { realmEmojiRows, realmEmojiStamp, emojiSourceUrl } from './realm-emoji.js';
import type { RealmView } from './realm-view.js';

type RenderConfig = Pick<ServerConfig, 'externalHost' | 'externalScheme' | 'imageProxyKey'>;

/** Where the image proxy is served (src/endpoints/external-content.ts). */
export const IMAGE_PROXY_PREFIX = '/external_content/';

const cache = new WeakMap<RealmView, RenderContext>();

function versionOf(view: RealmView): string {
  return `${view.id}.${view.version}.${view.channels.version}.${linkifierStamp(view.id)}.e${realmEmojiStamp(view.id)}.a${alertWordStamp(view.id)}`;
}

export function renderContextFor(
  config: RenderConfig,
  store: ReadStore,
  view: RealmView,
): RenderContext {
  const version = versionOf(view);
  const hit = cache.get(view);
  if (hit && hit.version === version) return hit;
  const channels = [];
  // Archived channels stay linkable, as the reference links them.
  for (const c of view.channels.all()) channels.push({ id: c.id, name: c.name });
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
    channels,
    linkifiers: linkifiersOf(store, view),
    realm_emoji: realmEmojiRows(store, view)
      .filter((e) => !e.deactivated)
      .map((e) => ({ name: e.name, source_url: emojiSourceUrl(e.realm_id, e.file_name) })),
    alert_words: alertWordsOf(store, view),
    image_proxy: config.imageProxyKey
      ? { prefix: IMAGE_PROXY_PREFIX, key: config.imageProxyKey }
      : null,
  };
  cache.set(view, ctx);
  return ctx;
}

/**
 * The channels named in `content` that `userId` may link: those they have content access to
 * (the reference's get_stream_name_map with an acting user). Channel names in links are exact.
 */
export function linkableChannelIds(view: RealmView, userId: number, content: string): number[] {
  const out: number[] = [];
  for (const name of possibleChannelNames(content)) {
    const ch = view.channels.byName(name);
    if (ch && ch.name === name && view.channels.may(userId, ch, 'content')) out.push(ch.id);
  }
  return out;
}

/**
 * The uploaded images `content` links to that the renderer previews (the reference's
 * get_user_upload_previews): their sizes, and their thumbnails once made.
 */
export function uploadPreviewsFor(
  store: ReadStore,
  realmId: number,
  content: string,
): Record<string, UploadPreview> | undefined {
  if (!content.includes('/user_uploads/')) return undefined;
  const out: Record<string, UploadPreview> = {};
  for (const row of store.imageAttachments.byPathIds(realmId, uploadPathIdsIn(content)))
    out[row.path_id] = uploadPreviewOf(row.path_id, imageFacts(row));
  return out;
}

/** What rendering `content` for `userId` (the sender) needs besides the realm's context. */
export function renderOptionsFor(
  store: ReadStore,
  view: RealmView,
  userId: number,
  content: string,
): RenderOptions {
  const previews = uploadPreviewsFor(store, view.id, content);
  const linkable = linkableChannelIds(view, userId, content);
  const firsts = topicFirstMessages(store, view, userId, content, linkable);
  return {
    translate_emoticons: view.userSettings(userId).translate_emoticons,
    linkable_channel_ids: linkable,
    ...(previews ? { upload_previews: previews } : {}),
    ...(firsts ? { topic_first_message: firsts } : {}),
  };
}

/**
 * For each topic `content` links, the first message of it `userId` can see (the reference's
 * get_first_message_for_user_in_topic): the topic's first message where the channel's history
 * is public to subscribers, else the first one the user received.
 */
function topicFirstMessages(
  store: ReadStore,
  view: RealmView,
  userId: number,
  content: string,
  linkable: readonly number[],
): Record<string, number> | undefined {
  if (!content.includes('#**')) return undefined;
  const out: Record<string, number> = {};
  for (const { channel, topic } of possibleTopicLinks(content)) {
    const ch = view.channels.byName(channel);
    if (!ch || ch.name !== channel || !linkable.includes(ch.id)) continue;
    const first = store.messages.firstInTopic(
      ch.id,
      topic,
      view.channels.historyPublic(ch) ? null : userId,
    );
    if (first !== null) out[`${channel}\n${topic}`] = first;
  }
  return out;
}

/**
 * A description (channel, channel folder: `actingUserId` is who sets it; the realm's: null) as
 * the reference renders descriptions: the markdown renderer with the realm's context, no image
 * previews, channel links limited to what the acting user may see (all channels for the realm
 * description, which has no acting user). Descriptions are short: rendered inline.
 */
export function renderDescription(
  config: RenderConfig,
  store: ReadStore,
  view: RealmView,
  text: string,
  actingUserId: number | null,
): string {
  const context = renderContextFor(config, store, view);
  return renderDescriptionHtml(text, context, {
    ...(actingUserId === null
      ? {}
      : { linkable_channel_ids: linkableChannelIds(view, actingUserId, text) }),
  });
}

const realmDescriptions = new WeakMap<RenderContext, { text: string; html: string }>();

/** The realm description as HTML (GET /server_settings), cached with the render context. */
export function renderedRealmDescription(
  config: RenderConfig,
  store: ReadStore,
  view: RealmView,
): string {
  const context = renderContextFor(config, store, view);
  const text = view.row.description;
  const hit = realmDescriptions.get(context);
  if (hit && hit.text === text) return hit.html;
  const html = renderDescriptionHtml(text, context, {});
  realmDescriptions.set(context, { text, html });
  return html;
}
