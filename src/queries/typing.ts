/**
 * What POST /typing reads: participants as TypingPerson, and a channel's typing audience.
 */
import { JsonableError } from '../lib/errors.js';
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
 * The active subscribers of channel `streamId`, after checking that `userId` may post in it
 * (reference: access_stream_by_id_for_message + access_stream_for_send_message).
 *
 * Channels arrive with the channels area (issue #4, branch `channels`); until that merges no
 * channel exists in this realm model, so every id is answered as the reference answers an unknown
 * channel. At integration this reads the channel and its subscribers from the channels read model
 * and maps them with typingPerson(); channelTypingEvent() then applies the fan-out rules.
 */
export function channelTypingAudience(
  _view: RealmView,
  _userId: number,
  _streamId: number,
): TypingPerson[] {
  throw new JsonableError('Invalid channel ID');
}
