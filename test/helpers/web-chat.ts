/**
 * The web app's state (web/state/chat.ts `ChatState`) for tap tests: made from a register answer
 * that holds only the user (`self`, "Me", of `role`: a member unless said) and what `o` adds or
 * replaces, with fake timers.
 */
import type { RegisterResponse } from '../../src/client/types.js';
import { ChatState } from '../../web/state/chat.js';
import { FakeTimers } from './fake-timers.js';

export function chatState(o: Record<string, unknown> = {}, self = 3, role = 400): ChatState {
  const clock = new FakeTimers();
  const r = {
    queue_id: 'q',
    last_event_id: -1,
    user_id: self,
    email: 'me@x',
    full_name: 'Me',
    realm_users: [{ user_id: self, email: 'me@x', full_name: 'Me', is_bot: false, role }],
    subscriptions: [],
    unread_msgs: { count: 0, streams: [], pms: [], huddles: [], mentions: [] },
    user_topics: [],
    max_message_id: 0,
    ...o,
  } as unknown as RegisterResponse;
  return new ChatState(r, { now: clock.now, timers: clock.timers });
}
