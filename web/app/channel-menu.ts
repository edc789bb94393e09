/**
 * A channel's "⋮" menu, the same in the sidebar (its row) and in the Inbox (its group's header):
 * Mark all messages as read, Pin to top (or Unpin), Mute channel (or Unmute), Channel settings.
 */
import type { Subscription } from '../../src/client/types.js';
import type { Controller } from './controller.js';
import type { MenuItem } from './menu.js';

export function channelMenuItems(c: Controller, sub: Subscription): MenuItem[] {
  return [
    {
      label: 'Mark all messages as read',
      run: () => void c.markAllAsRead({ streamId: sub.stream_id }),
    },
    {
      label: sub.pin_to_top ? 'Unpin from top' : 'Pin to top',
      run: () => void c.pinChannel(sub.stream_id, !sub.pin_to_top),
    },
    {
      label: sub.is_muted ? 'Unmute channel' : 'Mute channel',
      run: () => void c.setChannelMuted(sub.stream_id, !sub.is_muted),
    },
    { label: 'Channel settings', run: () => c.openChannelSettings(sub.stream_id) },
  ];
}
