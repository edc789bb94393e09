/**
 * Rules of editing and moving messages that do not depend on the realm's data. Reference:
 * actions/message_edit.py (build_message_edit_request, check_update_message), lib/topic.py
 * (RESOLVED_TOPIC_PREFIX).
 */
import { EMPTY_TOPIC_DISPLAY_NAME } from './channel-rules.js';

export const PROPAGATE_MODES = ['change_one', 'change_later', 'change_all'] as const;
export type PropagateMode = (typeof PROPAGATE_MODES)[number];

export const RESOLVED_TOPIC_PREFIX = '✔ ';

/** Seconds of grace on every edit and move time limit (the reference's edit_limit_buffer). */
export const EDIT_LIMIT_BUFFER = 20;

/** Python's str.lstrip(chars): removes any of `chars` from the start. */
function lstripChars(s: string, chars: string): string {
  let i = 0;
  while (i < s.length && chars.includes(s[i]!)) i++;
  return s.slice(i);
}

/** Topic names that would resolve the empty topic (refused: "General chat cannot be ..."). */
export function resolvesEmptyTopic(topic: string): boolean {
  return (
    topic === RESOLVED_TOPIC_PREFIX.trim() ||
    topic === `${RESOLVED_TOPIC_PREFIX}${EMPTY_TOPIC_DISPLAY_NAME}` ||
    topic === `${RESOLVED_TOPIC_PREFIX}(no topic)`
  );
}

/**
 * Whether renaming `origTopic` to `topic` only (un)resolves it, as build_message_edit_request
 * decides: resolving adds the prefix to the same name (compared before truncation:
 * `untruncated`); unresolving strips every prefix character from the start.
 */
export function topicResolution(
  origTopic: string,
  topic: string,
  untruncated: string,
): { resolved: boolean; unresolved: boolean } {
  const resolved =
    topic.startsWith(RESOLVED_TOPIC_PREFIX) &&
    !origTopic.startsWith(RESOLVED_TOPIC_PREFIX) &&
    untruncated.slice(RESOLVED_TOPIC_PREFIX.length) === origTopic;
  const unresolved =
    origTopic.startsWith(RESOLVED_TOPIC_PREFIX) &&
    !topic.startsWith(RESOLVED_TOPIC_PREFIX) &&
    lstripChars(origTopic, RESOLVED_TOPIC_PREFIX) === topic;
  return { resolved, unresolved };
}
