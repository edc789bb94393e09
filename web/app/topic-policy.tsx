/**
 * A topic's visibility policy (muted, default, unmuted, followed; POST /user_topics through
 * Controller.setTopicPolicy), where the app offers to change it: the topic menu's Follow and
 * Mute items (the sidebar's, an Inbox row's), and the recipient bar's button (its icon the policy) with its menu of
 * choices, as the reference's. What each offers comes from web/state/muting.ts; both show the
 * server's word once its user_topic event came (ChatState.topicPolicy, rev.channels).
 */
import type { ChatState } from '../state/chat.js';
import { followChoice, muteChoice, policyChoices, policyShown } from '../state/muting.js';
import type { Controller } from './controller.js';
import type { IconName } from './icons.js';
import { Menu, type MenuItem } from './menu.js';
import { topicActionItems } from './topic-actions.js';

/**
 * A topic's "⋮" menu, in the sidebar and on an Inbox row (the reference's topic popover): Mark
 * all messages as read, Follow and Mute, then, where the user may, Copy link to topic, Move topic
 * (or Rename topic), Mark as resolved (or unresolved) and Delete topic (topic-actions.tsx).
 */
export function topicMenuItems(
  c: Controller,
  s: ChatState,
  streamId: number,
  topic: string,
): MenuItem[] {
  return [
    {
      label: 'Mark all messages as read',
      run: () => void c.markAllAsRead({ streamId, topic }),
    },
    ...topicPolicyItems(c, s, streamId, topic),
    ...topicActionItems(c, s, streamId, topic),
  ];
}

/** The sidebar topic menu's Follow (or Unfollow) and Mute (or Unmute) items. */
export function topicPolicyItems(
  c: Controller,
  s: ChatState,
  streamId: number,
  topic: string,
): MenuItem[] {
  const policy = s.topicPolicy(streamId, topic);
  const muted = s.channelMuted(streamId);
  return [followChoice(policy, muted), muteChoice(policy, muted)].map((ch) => ({
    label: ch.label,
    run: () => void c.setTopicPolicy(streamId, topic, ch.policy),
  }));
}

const ICONS: Record<ReturnType<typeof policyShown>['kind'], IconName> = {
  followed: 'bell',
  muted: 'speaker-off',
  unmuted: 'speaker',
  inherit: 'inherit',
};

/**
 * The recipient bar's visibility button and its menu (Mute, Default, Unmute in a muted channel,
 * Follow; the current one checked). Its button says the policy (its name and tooltip: the
 * reference's words) and shows always when the user chose one, on hover or focus otherwise
 * (app.css; always on touch screens). Clicks in it stay in it: the bar's own click opens the
 * topic.
 */
export function TopicPolicyMenu({
  c,
  s,
  streamId,
  topic,
}: {
  c: Controller;
  s: ChatState;
  streamId: number;
  topic: string;
}) {
  const policy = s.topicPolicy(streamId, topic);
  const shown = policyShown(policy);
  const items = policyChoices(policy, s.channelMuted(streamId)).map((ch) => ({
    label: ch.label,
    checked: ch.checked,
    run: () => {
      if (!ch.checked) void c.setTopicPolicy(streamId, topic, ch.policy);
    },
  }));
  return (
    <span
      class={`topic-policy ${shown.always ? 'chosen' : ''}`}
      data-policy={shown.kind}
      onClick={(e) => e.stopPropagation()}
    >
      <Menu
        class="policy-menu"
        icon={ICONS[shown.kind]}
        label={shown.label}
        menuLabel={`Visibility of topic ${s.topicName(topic)}`}
        items={items}
      />
    </span>
  );
}
