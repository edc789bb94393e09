/**
 * A RenderContext turned into lookup tables once (per realm and version), and the per-render
 * accumulators the patterns fill in.
 */
import type { RenderContext, RenderGroup, RenderUser } from './context.js';
import { alertWordMatcherFor, type AlertWordMatcher } from './alert-words.js';
import { compileLinkifier, type CompiledLinkifier } from './linkifiers.js';

export type PreparedContext = {
  version: string;
  realmUrl: string;
  realmHost: string;
  /** The image proxy (camo scheme), or null. */
  imageProxy: { prefix: string; key: string } | null;
  usersById: ReadonlyMap<number, RenderUser>;
  /** Lower-cased full name → user (an active user wins over a deactivated one, then the oldest). */
  usersByName: ReadonlyMap<string, RenderUser>;
  groupsByName: ReadonlyMap<string, RenderGroup>;
  channelsByName: ReadonlyMap<string, number>;
  linkifiers: readonly CompiledLinkifier[];
  realmEmoji: ReadonlyMap<string, string>;
  /** The realm's alert words (null: none), matched in one pass over a message. */
  alertWords: AlertWordMatcher | null;
};

export type RenderState = {
  mentionsUserIds: Set<number>;
  mentionsGroupIds: Set<number>;
  mentionsStreamWildcard: boolean;
  mentionsTopicWildcard: boolean;
};

export function prepareContext(ctx: RenderContext): PreparedContext {
  const usersById = new Map<number, RenderUser>();
  const usersByName = new Map<string, RenderUser>();
  for (const u of ctx.users) {
    usersById.set(u.id, u);
    const key = u.full_name.toLowerCase();
    const prev = usersByName.get(key);
    if (
      !prev ||
      (!prev.is_active && u.is_active) ||
      (prev.is_active === u.is_active && u.id < prev.id)
    )
      usersByName.set(key, u);
  }
  const groupsByName = new Map<string, RenderGroup>();
  for (const g of ctx.groups) groupsByName.set(g.name.toLowerCase(), g);
  const channelsByName = new Map<string, number>();
  for (const c of ctx.channels) channelsByName.set(c.name, c.id);
  const linkifiers: CompiledLinkifier[] = [];
  for (const l of ctx.linkifiers) {
    const c = compileLinkifier(l);
    if (c) linkifiers.push(c);
  }
  let realmHost: string;
  try {
    realmHost = ctx.realm_url ? new URL(ctx.realm_url).host : '';
  } catch {
    realmHost = '';
  }
  return {
    version: ctx.version,
    realmUrl: ctx.realm_url,
    realmHost,
    imageProxy: ctx.image_proxy ?? null,
    usersById,
    usersByName,
    groupsByName,
    channelsByName,
    linkifiers,
    realmEmoji: new Map(ctx.realm_emoji.map((e) => [e.name, e.source_url])),
    alertWords: alertWordMatcherFor(ctx.alert_words),
  };
}
