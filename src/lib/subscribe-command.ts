/** The shape of a subscribe command (src/mutations/subscriptions.ts runs it) and its defaults. */
import type { TopicsPolicy } from './channel-rules.js';
import type { ChannelGroupSettingName } from './group-settings.js';
import type { GroupSettingValue } from './realm-settings.js';

export type SubscribeCommand = {
  acting_user_id: number;
  subscriptions: {
    name: string;
    description: string | null;
    rendered_description: string | null;
    color: string | null;
  }[];
  principals: (number | string)[] | null;
  authorization_errors_fatal: boolean;
  invite_only: boolean;
  is_web_public: boolean;
  is_default_stream: boolean;
  history_public_to_subscribers: boolean | null;
  /** undefined: realm default requested implicitly; null: `realm_default`; else days / -1. */
  message_retention_days: number | null;
  retention_given: boolean;
  topics_policy: TopicsPolicy | null;
  folder_id: number | null;
  settings: Partial<Record<ChannelGroupSettingName, GroupSettingValue>>;
};

/**
 * A subscribe command as a request naming only its channels makes it (the API's defaults: public,
 * not default channels, the realm's retention, no principals, authorization errors fatal), with
 * `overrides` on top.
 */
export function subscribeCommand(
  actingUserId: number,
  subscriptions: SubscribeCommand['subscriptions'],
  overrides: Partial<Omit<SubscribeCommand, 'acting_user_id' | 'subscriptions'>> = {},
): SubscribeCommand {
  return {
    acting_user_id: actingUserId,
    subscriptions,
    principals: null,
    authorization_errors_fatal: true,
    invite_only: false,
    is_web_public: false,
    is_default_stream: false,
    history_public_to_subscribers: null,
    message_retention_days: null,
    retention_given: false,
    topics_policy: null,
    folder_id: null,
    settings: {},
    ...overrides,
  };
}
