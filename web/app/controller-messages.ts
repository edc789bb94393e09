/**
 * The controller's message actions that only the message list uses (controller.ts keeps the
 * methods, each a call into this module): reactions, "Quote and reply", where moving a topic
 * starts, "Mark as unread from here"'s request; and the emoji index's building
 * (Controller.loadEmoji, for the compose box, the picker and the status dialog). Loaded with the
 * message list (lazy-messages.ts), or on a method's first call.
 */
import type { Message } from '../../src/client/types.js';
import type { StoredMessage } from '../state/chat.js';
import { markUnreadFrom, quoteText, withQuote } from '../state/message-menu.js';
import {
  apiNarrow,
  placementAround,
  PROPAGATE_FOR,
  topicNarrow,
  type PropagateMode,
} from '../state/narrow.js';
import type { ComposeTo, Controller } from './controller.js';

export { markUnreadFrom };
export { buildEmojiIndex } from '../state/emoji.js';

export async function toggleReaction(
  c: Controller,
  m: Message,
  r: { emoji_name: string; emoji_code: string; reaction_type: string },
): Promise<void> {
  const s = c.state.value!;
  // The message as it is now, not as its row was last drawn (a reaction that came since).
  const now = s.messages.get(m.id) ?? m;
  const mine = now.reactions.some(
    (x) =>
      x.user_id === s.selfId &&
      x.emoji_code === r.emoji_code &&
      x.reaction_type === r.reaction_type,
  );
  try {
    if (mine) await c.client.removeReaction(m.id, r);
    else await c.client.addReaction(m.id, r);
  } catch (e) {
    c.toast(e instanceof Error ? e.message : String(e));
  }
}

/** "Quote and reply" (Controller.quote). */
export async function quote(c: Controller, m: Message): Promise<void> {
  const s = c.state.value;
  if (!s) return;
  let raw: string;
  try {
    raw = await c.rawContent(m.id);
  } catch (e) {
    c.toast(e instanceof Error ? e.message : String(e));
    return;
  }
  const now = s.messages.get(m.id) ?? m;
  const at = s.conversationOf(now);
  const to: ComposeTo =
    at.kind === 'stream'
      ? { kind: 'stream', streamId: at.streamId, topic: at.topic }
      : { kind: 'dm', userIds: at.ids.filter((id) => id !== s.selfId) };
  const d = c.draftTo(to);
  const draft = d ? (c.drafts?.get(d) ?? '') : '';
  const text = quoteText({
    senderName: s.users.get(now.sender_id)?.full_name ?? now.sender_full_name,
    senderId: now.sender_id,
    link: c.messageLink(now),
    raw,
  });
  c.requestCompose(to, withQuote(draft, text));
}

/** Controller.moveDefault. */
export async function moveDefault(c: Controller, m: StoredMessage): Promise<PropagateMode> {
  const now = c.moveDefaultNow(m);
  if (now) return now;
  if (m.stream_id === undefined) return 'change_one';
  try {
    const r = await c.client.getMessages({
      anchor: m.id,
      num_before: 1,
      num_after: 1,
      narrow: apiNarrow(topicNarrow(m.stream_id, m.subject)),
    });
    return PROPAGATE_FOR[placementAround(m.id, r.messages)];
  } catch {
    return 'change_one';
  }
}

// The first load (main.tsx, firstLoad: one chunk for all of it).
export { firstLoad } from './main.js';
