/**
 * What POST /typing reads: participants as TypingPerson, and a channel's typing audience.
 */
import { InvalidChannelIdError, JsonableError, NoPostPermissionError } from '../lib/errors.js';
import type { TypingPerson } from '../lib/typing.js';
import type { UserRow } from '../storage/users.js';
import type { RealmView } from './realm-view.js';

export function typingPerson(view: RealmView, u: UserRow): TypingPerson {
  return {
    user_id: u.id,
    email: u.email,
    is_active: u.is_active === 1,
    receives_typing_notifications: view.userSettings(u.id).receives_typing_notifications,
  };
}

/**
 * The active subscribers of channel `streamId`, after checking that `userId` may post in it, as
 * the reference checks before sending channel typing (access_stream_by_id_for_message, then
 * access_stream_for_send_message):
 *
 * - an unknown or archived channel, or one the user has no content access to (a private channel
 *   they are not subscribed to): "Invalid channel ID" — the answer for a channel that does not
 *   exist, so its existence is not revealed;
 * - not in the channel's can_send_message_group: "You do not have permission to post in this
 *   channel.";
 * - otherwise not allowed to post there: "Not authorized to send to channel '<name>'".
 *
 * channelTypingEvent() (src/lib/typing.ts) then applies the fan-out rules (receives_typing_
 * notifications, the 100-subscriber limit); the publisher keeps it to queues registered with
 * `stream_typing_notifications`.
 */
export function channelTypingAudience(
  view: RealmView,
  userId: number,
  streamId: number,
): TypingPerson[] {
  const channels = view.channels;
  const ch = channels.byId(streamId);
  if (!ch || ch.deactivated || !channels.may(userId, ch, 'content')) {
    throw new InvalidChannelIdError();
  }
  switch (channels.sendMessageDecision(userId, ch)) {
    case 'not_allowed':
      throw new NoPostPermissionError();
    case 'unauthorized':
      throw new JsonableError(`Not authorized to send to channel '${ch.name}'`);
    case 'ok':
      break;
  }
  const out: TypingPerson[] = [];
  for (const id of channels.subscriberIds(ch.id)) {
    const u = view.user(id);
    if (u) out.push(typingPerson(view, u));
  }
  return out;
}
