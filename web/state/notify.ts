/**
 * Whether a new message deserves a desktop notification, following the user's settings as the
 * reference reads them: direct messages and personal mentions by `enable_desktop_notifications`;
 * wildcard mentions also by `wildcard_mentions_notify` (the channel's own value first); other
 * channel messages by the channel's `desktop_notifications` (null: the user's
 * `enable_stream_desktop_notifications`), or by `enable_followed_topic_desktop_notifications` in
 * a followed topic. Never for one's own messages, in muted topics (unless personally mentioned),
 * or for what the user is looking at in a focused window. Plus the page title.
 */
import type { Subscription, UserSettings } from '../../src/client/types.js';
import type { StoredMessage } from './chat.js';

export type NotifyContext = {
  selfId: number;
  settings: UserSettings;
  sub: Subscription | undefined;
  mutedTopic: boolean;
  followedTopic: boolean;
  /** The window has focus and shows this message's conversation. */
  seeing: boolean;
};

export function shouldNotify(m: StoredMessage, c: NotifyContext): boolean {
  if (m.sender_id === c.selfId || c.seeing || m.flags.includes('read')) return false;
  const desktop = c.settings.enable_desktop_notifications !== false;
  if (m.type === 'private') return desktop;
  if (m.flags.includes('mentioned')) return desktop;
  if (c.mutedTopic) return false;
  const wildcard =
    m.flags.includes('stream_wildcard_mentioned') ||
    m.flags.includes('topic_wildcard_mentioned') ||
    m.flags.includes('wildcard_mentioned');
  if (wildcard) {
    const notifyWildcard =
      c.sub?.wildcard_mentions_notify ?? c.settings.wildcard_mentions_notify ?? true;
    if (notifyWildcard && desktop) return true;
  }
  if (c.followedTopic && c.settings.enable_followed_topic_desktop_notifications === true)
    return true;
  const channelSetting = c.sub?.desktop_notifications ?? null;
  return channelSetting ?? c.settings.enable_stream_desktop_notifications === true;
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
