/**
 * Inline patterns that name things of the realm: @-mentions of users and groups, and links to
 * channels, topics and messages (`#**channel**`, `#**channel>topic**`, `#**channel>topic@id**`);
 * also the scan of content for the channel and topic names it may link to (prepared before
 * rendering).
 */
import { groupDisplayName } from '../../client/group-names.js';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../events.js';
import { BEFORE_MENTION, type InlineState, type Pattern } from './inline-pattern.js';
import { El } from './tree.js';
import { encodeChannel, hashUtilEncode } from './urls.js';

export const userMention: Pattern = {
  re: new RegExp(`${BEFORE_MENTION}@(_?)\\*\\*([^*]+)\\*\\*`, 'gsu'),
  kind: 'search',
  handle: (m, s) => {
    let name = m[2]!;
    let silent = m[1] === '_' || s.inBlockquote;
    const topicWildcard = name === 'topic';
    const channelWildcard = ['all', 'everyone', 'stream', 'channel'].includes(name);
    let userId: string | null = null;
    if (channelWildcard) {
      if (!silent) s.out.mentionsStreamWildcard = true;
      userId = '*';
    } else if (topicWildcard) {
      if (!silent) s.out.mentionsTopicWildcard = true;
    } else {
      const idSyntax = /^(.+)?\|(\d+)$/s.exec(name);
      let user;
      if (idSyntax) {
        user = s.ctx.usersById.get(Number(idSyntax[2]));
        if (
          idSyntax[1] !== undefined &&
          user &&
          user.full_name.toLowerCase() !== idSyntax[1].toLowerCase()
        )
          return null;
      } else {
        user = s.ctx.usersByName.get(name.toLowerCase());
      }
      if (!user) return null;
      if (!user.is_active) silent = true;
      if (!silent) s.out.mentionsUserIds.add(user.id);
      name = user.full_name;
      userId = String(user.id);
    }
    const el = new El('span');
    if (userId !== null) el.attrs['data-user-id'] = userId;
    let cls = topicWildcard
      ? 'topic-mention'
      : channelWildcard
        ? 'user-mention channel-wildcard-mention'
        : 'user-mention';
    if (silent) cls += ' silent';
    el.attrs.class = cls;
    el.text = silent ? name : `@${name}`;
    el.atomic = true;
    return el;
  },
};

export const groupMention: Pattern = {
  re: new RegExp(`${BEFORE_MENTION}@(_?)\\*([^*]+)\\*`, 'gsu'),
  kind: 'search',
  handle: (m, s) => {
    const group = s.ctx.groupsByName.get(m[2]!.toLowerCase());
    if (!group) return null;
    const silent = m[1] === '_' || s.inBlockquote || group.deactivated;
    if (!silent) s.out.mentionsGroupIds.add(group.id);
    const el = new El('span', {
      class: silent ? 'user-group-mention silent' : 'user-group-mention',
      'data-user-group-id': String(group.id),
    });
    // System groups by their display names, as the reference.
    const name = groupDisplayName(group.name);
    el.text = silent ? name : `@${name}`;
    el.atomic = true;
    return el;
  },
};

/** The id of the channel named `name`, if it exists and the content may link to it. */
function linkableChannel(s: InlineState, name: string): number | undefined {
  const id = s.ctx.channelsByName.get(name);
  if (id === undefined || (s.linkable !== null && !s.linkable.has(id))) return undefined;
  return id;
}

/**
 * Every name that `#**…**` syntax in `content` could refer to as a channel (before rendering,
 * to find which of them the sender may link: RenderOptions.linkable_channel_ids). A superset:
 * names inside code blocks are included too.
 */
export function possibleChannelNames(content: string): Set<string> {
  const names = new Set<string>();
  for (const m of content.matchAll(/#\*\*([^*]+)\*\*/g)) {
    const inner = m[1]!;
    names.add(inner);
    const gt = inner.indexOf('>');
    if (gt >= 0) names.add(inner.slice(0, gt));
  }
  return names;
}

/** The (channel, topic) pairs `#**channel>topic**` links in `content` name (not message links). */
export function possibleTopicLinks(content: string): { channel: string; topic: string }[] {
  const out: { channel: string; topic: string }[] = [];
  const seen = new Set<string>();
  for (const m of content.matchAll(/#\*\*([^*>]+)>([^*]*)\*\*/g)) {
    if (/@\d+$/.test(m[2]!)) continue;
    const key = `${m[1]!}\n${m[2]!}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ channel: m[1]!, topic: m[2]! });
  }
  return out;
}

/** `#channel > topic` (the empty topic shown as an emphasized "general chat"), then `after`. */
function topicLinkText(el: El, channel: string, topic: string, after: string): void {
  el.atomic = true;
  if (topic !== '') {
    el.text = `#${channel} > ${topic}${after}`;
    return;
  }
  el.text = `#${channel} > `;
  const em = el.append(new El('em'));
  em.text = EMPTY_TOPIC_DISPLAY_NAME;
  em.atomic = true;
  em.tail = after;
}

export const messageLink: Pattern = {
  re: new RegExp(`${BEFORE_MENTION}#\\*\\*([^*>]+)>([^*]*)@(\\d+)\\*\\*`, 'gsu'),
  kind: 'search',
  handle: (m, s) => {
    const id = linkableChannel(s, m[1]!);
    if (id === undefined) return null;
    const el = new El('a', {
      class: 'message-link',
      href: `/#narrow/channel/${encodeChannel(id, m[1]!)}/topic/${hashUtilEncode(m[2]!)}/near/${m[3]!}`,
    });
    topicLinkText(el, m[1]!, m[2]!, ' @ 💬');
    return el;
  },
};

export const topicLink: Pattern = {
  re: new RegExp(`${BEFORE_MENTION}#\\*\\*([^*>]+)>([^*]*)\\*\\*`, 'gsu'),
  kind: 'search',
  handle: (m, s) => {
    const id = linkableChannel(s, m[1]!);
    if (id === undefined) return null;
    const withId = s.opts.topic_first_message?.[`${m[1]!}\n${m[2]!}`];
    const el = new El('a', {
      class: 'stream-topic',
      'data-stream-id': String(id),
      href:
        `/#narrow/channel/${encodeChannel(id, m[1]!)}/topic/${hashUtilEncode(m[2]!)}` +
        (withId !== undefined ? `/with/${withId}` : ''),
    });
    topicLinkText(el, m[1]!, m[2]!, '');
    return el;
  },
};

export const channelLink: Pattern = {
  re: new RegExp(`${BEFORE_MENTION}#\\*\\*([^*]+)\\*\\*`, 'gsu'),
  kind: 'search',
  handle: (m, s) => {
    const id = linkableChannel(s, m[1]!);
    if (id === undefined) return null;
    const el = new El('a', {
      class: 'stream',
      'data-stream-id': String(id),
      href: `/#narrow/channel/${encodeChannel(id, m[1]!)}`,
    });
    el.text = `#${m[1]!}`;
    el.atomic = true;
    return el;
  },
};
