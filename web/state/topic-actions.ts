/**
 * What a topic's "⋮" menu offers beyond reading and visibility (web/app/topic-actions.tsx), as
 * the reference's topic popover: Copy link to topic; Move topic (or Rename topic, for one who may
 * move messages between topics but not between channels); Mark as resolved (or unresolved); and
 * Delete topic for the organization's administrators. Who sees which follows the realm's
 * permissions from the register data (`realm_can_move_messages_between_channels_group`,
 * `…_between_topics_group`, `realm_can_resolve_topics_group`); the server checks again.
 *
 * A topic is resolved when its name starts with "✔ " (the server's RESOLVED_TOPIC_PREFIX,
 * src/lib/message-edit.ts). What the actions send, and the link, is in topic-move.ts, loaded with the dialogs.
 */
import type { GroupSetting } from './groups.js';

export const RESOLVED_PREFIX = '✔ ';

export function isResolved(topic: string): boolean {
  return topic.startsWith(RESOLVED_PREFIX);
}

/** What the user may do to a channel's topics (from the realm's permissions). */
export type TopicPowers = {
  /** In `can_move_messages_between_channels_group`. */
  moveChannels: boolean;
  /** In `can_move_messages_between_topics_group`. */
  moveTopics: boolean;
  /** In `can_resolve_topics_group`. */
  resolve: boolean;
  /** An organization administrator (or owner): Delete topic. */
  admin: boolean;
  /** The channel allows only the general chat (topics_policy): no other name to rename to. */
  emptyTopicOnly: boolean;
};

/** The state a TopicPowers is read from (ChatState's, or a test's). */
export type PowersSource = {
  inGroup(setting: GroupSetting | undefined): boolean;
  readonly isAdmin: boolean;
  readonly realm: { settings: Record<string, unknown> };
  readonly subs: ReadonlyMap<number, { topics_policy?: string }>;
};

export function topicPowers(s: PowersSource, streamId: number): TopicPowers {
  const group = (name: string) => s.inGroup(s.realm.settings[name] as GroupSetting | undefined);
  const own = s.subs.get(streamId)?.topics_policy ?? 'inherit';
  const policy = own === 'inherit' ? s.realm.settings.realm_topics_policy : own;
  return {
    moveChannels: group('realm_can_move_messages_between_channels_group'),
    moveTopics: group('realm_can_move_messages_between_topics_group'),
    resolve: group('realm_can_resolve_topics_group'),
    admin: s.isAdmin,
    emptyTopicOnly: policy === 'empty_topic_only',
  };
}

export type TopicAction = 'copy-link' | 'move' | 'rename' | 'resolve' | 'unresolve' | 'delete';

/**
 * The topic actions offered, in the reference's order: the link, then Move topic (one who may
 * move between channels; the dialog's name field is then editable only for one who may also move
 * between topics) or else Rename topic, then (un)resolve (not for the general chat, whose empty
 * name cannot be resolved), then Delete topic (administrators).
 */
export function topicActions(topic: string, p: TopicPowers): TopicAction[] {
  const out: TopicAction[] = ['copy-link'];
  if (p.moveChannels) out.push('move');
  else if (p.moveTopics && !p.emptyTopicOnly) out.push('rename');
  if (p.resolve && topic !== '') out.push(isResolved(topic) ? 'unresolve' : 'resolve');
  if (p.admin) out.push('delete');
  return out;
}

export const TOPIC_ACTION_LABELS: Record<TopicAction, string> = {
  'copy-link': 'Copy link to topic',
  move: 'Move topic',
  rename: 'Rename topic',
  resolve: 'Mark as resolved',
  unresolve: 'Mark as unresolved',
  delete: 'Delete topic',
};
