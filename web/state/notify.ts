/**
 * Whether a new message deserves a desktop notification, following the user's settings as the
 * reference reads them: direct messages, personal mentions and the user's alert words by
 * `enable_desktop_notifications`;
 * wildcard mentions also by `wildcard_mentions_notify` (the channel's own value first); other
 * channel messages by the channel's `desktop_notifications` (null: the user's
 * `enable_stream_desktop_notifications`), or by `enable_followed_topic_desktop_notifications` in
 * a followed topic (shouldSound: the same with the sound settings). Never for one's own messages,
 * a muted user's, in muted topics (unless personally mentioned),
 * or for what the user is looking at in a focused window. Plus the page title.
 */
import type { Subscription, UserSettings } from '../../src/client/types.js';
import type { StoredMessage } from './chat.js';

export type NotifyContext = {
  selfId: number;
  settings: UserSettings;
  sub: Subscription | undefined;
  mutedTopic: boolean;
  /** The user muted the sender: never a notification or a sound (the reference's rule). */
  senderMuted?: boolean;
  followedTopic: boolean;
  /** The window has focus and shows this message's conversation. */
  seeing: boolean;
};

/** A channel's own notification settings, each with the user's setting it falls back to. */
export const CHANNEL_NOTIFY = [
  {
    key: 'desktop_notifications',
    global: 'enable_stream_desktop_notifications',
    label: 'Desktop notifications',
    fallback: false,
  },
  {
    key: 'audible_notifications',
    global: 'enable_stream_audible_notifications',
    label: 'Sound',
    fallback: false,
  },
  {
    key: 'push_notifications',
    global: 'enable_stream_push_notifications',
    label: 'Mobile notifications',
    fallback: false,
  },
  {
    key: 'email_notifications',
    global: 'enable_stream_email_notifications',
    label: 'E-mail notifications',
    fallback: false,
  },
  {
    key: 'wildcard_mentions_notify',
    global: 'wildcard_mentions_notify',
    label: 'Notify me of @all and @topic mentions',
    fallback: true,
  },
] as const;

export type ChannelNotifyKey = (typeof CHANNEL_NOTIFY)[number]['key'];

/** The user's own setting a channel's setting falls back to (absent: the reference's default). */
export function notifyDefault(settings: UserSettings, key: ChannelNotifyKey): boolean {
  const d = CHANNEL_NOTIFY.find((n) => n.key === key)!;
  const v = settings[d.global];
  return typeof v === 'boolean' ? v : d.fallback;
}

/**
 * What applies in a channel for one of its notification settings: its own value if it has one
 * (null: none), else the user's. `own` is whether it differs from the user's setting (a value
 * equal to it, as the reference's "reset" sends, is the default's).
 */
export function channelNotify(
  sub: Subscription | undefined,
  settings: UserSettings,
  key: ChannelNotifyKey,
): { on: boolean; own: boolean; byDefault: boolean } {
  const byDefault = notifyDefault(settings, key);
  const v = sub?.[key];
  const on = typeof v === 'boolean' ? v : byDefault;
  return { on, own: on !== byDefault, byDefault };
}

function wildcardMention(m: StoredMessage): boolean {
  return (
    m.flags.includes('stream_wildcard_mentioned') ||
    m.flags.includes('topic_wildcard_mentioned') ||
    m.flags.includes('wildcard_mentioned')
  );
}

export function shouldNotify(m: StoredMessage, c: NotifyContext): boolean {
  if (m.sender_id === c.selfId || c.senderMuted || c.seeing || m.flags.includes('read'))
    return false;
  const desktop = c.settings.enable_desktop_notifications !== false;
  if (m.type === 'private') return desktop;
  if (m.flags.includes('mentioned')) return desktop;
  if (c.mutedTopic) return false;
  // One of the user's alert words (the server's flag) is as a mention, outside muted topics.
  if (m.flags.includes('has_alert_word')) return desktop;
  if (
    wildcardMention(m) &&
    desktop &&
    channelNotify(c.sub, c.settings, 'wildcard_mentions_notify').on
  )
    return true;
  if (c.followedTopic && c.settings.enable_followed_topic_desktop_notifications === true)
    return true;
  return channelNotify(c.sub, c.settings, 'desktop_notifications').on;
}

/**
 * Whether a new message deserves the notification sound: as shouldNotify, with the sound
 * settings: `enable_sounds` for direct messages and mentions, the channel's
 * `audible_notifications` (null: the user's `enable_stream_audible_notifications`) for the
 * rest, `enable_followed_topic_audible_notifications` in a followed topic.
 */
export function shouldSound(m: StoredMessage, c: NotifyContext): boolean {
  if (m.sender_id === c.selfId || c.senderMuted || c.seeing || m.flags.includes('read'))
    return false;
  const sounds = c.settings.enable_sounds !== false;
  if (m.type === 'private' || m.flags.includes('mentioned')) return sounds;
  if (c.mutedTopic) return false;
  if (m.flags.includes('has_alert_word')) return sounds;
  if (
    wildcardMention(m) &&
    sounds &&
    channelNotify(c.sub, c.settings, 'wildcard_mentions_notify').on
  )
    return true;
  if (c.followedTopic && c.settings.enable_followed_topic_audible_notifications === true)
    return true;
  return channelNotify(c.sub, c.settings, 'audible_notifications').on;
}

const PRODUCT = 'Confab';

/**
 * The page's title, as the reference's: unread count (if any), what is shown, the realm, the
 * product. A realm named after the product (the default realm's name) or unnamed is not named
 * twice ("#sandbox - Confab", not "#sandbox - Confab - Confab").
 */
export function pageTitle(unread: number, view: string, realm: string): string {
  const count = unread > 0 ? `(${unread > 999 ? '999+' : unread}) ` : '';
  const name = realm.trim();
  const same = name === '' || name.toLowerCase() === PRODUCT.toLowerCase();
  return `${count}${view}${same ? '' : ` - ${name}`} - ${PRODUCT}`;
}
