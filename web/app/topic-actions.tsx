/**
 * The topic menu's actions beyond reading and visibility (which ones a user sees:
 * web/state/topic-actions.ts), as the reference's topic popover does them:
 *
 * - Copy link to topic: the topic view's address to the clipboard, "Link copied." (as a
 *   message's Copy link).
 * - Move topic / Rename topic: the dialog (move-topic.tsx, loaded with the other dialogs).
 * - Mark as resolved / unresolved: the whole topic renamed with or without the "✔ " prefix
 *   (PATCH /messages/{id}, change_all, the notification bot telling the new topic only).
 * - Delete topic: after a confirmation, POST /streams/{id}/delete_topic, asked again while the
 *   server says it is not complete.
 *
 * The dialog aside, they are done by code loaded with the dialogs (move-topic.tsx,
 * lazy-dialogs.ts: fetched when the browser is idle after the first screen, or at the first
 * use). A refusal is a toast with the server's words; what changed shows when the server's
 * events come (update_message, delete_message), as for an edit made elsewhere.
 */
import type { ChatState } from '../state/chat.js';
import { TOPIC_ACTION_LABELS, topicActions, topicPowers } from '../state/topic-actions.js';
import type { Controller } from './controller.js';
import type { MenuItem } from './menu.js';

/** The topic menu's Copy link, Move (or Rename), (Un)resolve and Delete items, where offered. */
export function topicActionItems(
  c: Controller,
  s: ChatState,
  streamId: number,
  topic: string,
): MenuItem[] {
  return topicActions(topic, topicPowers(s, streamId)).map((a) => ({
    label: TOPIC_ACTION_LABELS[a],
    danger: a === 'delete',
    run: () => {
      if (a === 'move' || a === 'rename')
        c.dialog.value = { kind: 'move-topic', streamId, topic, rename: a === 'rename' };
      else
        import('./lazy-dialogs.js').then(
          (m) => m.topicAction(c, a, streamId, topic),
          () => c.toast('Could not load this action. Check the connection, or reload the page.'),
        );
    },
  }));
}
