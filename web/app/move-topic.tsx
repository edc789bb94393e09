/**
 * A topic's Move (or Rename) dialog, from its "⋮" menu (topic-actions.tsx), as the reference's
 * move-topic modal from the sidebar: the new name, the channel it goes to (Move only: one who may
 * move messages between channels; the name is then editable only for one who may also move them
 * between topics), whether the notification bot tells the new topic and the old one (the
 * reference's defaults: the new one only; the last choices are kept while the page is), Cancel
 * and Confirm (Enter in the name too). Confirm sends PATCH /messages/{id} for the topic's newest
 * message with propagate_mode change_all; a refusal shows the server's words in the dialog. A
 * member held back by the realm's time limit for moving (some of the topic's messages are older)
 * is asked, as by the reference's "Move some messages?", whether to move only the newer ones,
 * which then go by PATCH /messages/{first_message_id_allowed_to_move} with change_later (the
 * server's answer names that message and the counts); as the reference's, the dialog closes
 * first (the focus back where it would go, where the question then gives it back too), and a
 * message's edit box asks the same (offerPartialMove). The
 * app follows the topic if it is the one viewed (Controller.followMove, on the update_message
 * event). Loaded with the other dialogs (lazy-dialogs.ts), as are the topic menu's Mark as
 * resolved (or unresolved) and Delete topic, below (topic-actions.tsx offers them).
 *
 * The message these edits name is the topic's newest, asked of the server (the reference's
 * with_first_message_id): the app may list a topic (the sidebar, the Inbox) without holding any
 * of its messages.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../../src/client/api.js';
import { apiNarrow, topicNarrow } from '../state/narrow.js';
import { topicPowers, type TopicAction } from '../state/topic-actions.js';
import {
  moveRequest,
  partialMove,
  partialMoveQuestion,
  partialMoveRequest,
  toggledResolved,
  type PartialMove,
  topicLink,
} from '../state/topic-move.js';
import { CloseButton, FormError, Swatch } from './bits.js';
import type { Controller } from './controller.js';
import { useFocusBack, wrapTab } from './focus-back.js';
import { useLive } from './live.js';
import { track } from './track.js';

/** The notices' choices, kept from one move to the next (as the reference keeps them). */
const notifyLast = { newThread: true, oldThread: false };

export function MoveTopic({
  c,
  streamId,
  topic,
  rename,
}: {
  c: Controller;
  streamId: number;
  topic: string;
  rename: boolean;
}) {
  const s = c.state.value!;
  track(s.rev.channels, s.rev.settings);
  const box = useRef<HTMLDivElement>(null);
  const field = useRef<HTMLInputElement>(null);
  const select = useRef<HTMLSelectElement>(null);
  const powers = topicPowers(s, streamId);
  const nameEditable = rename || powers.moveTopics;
  const giveBack = useFocusBack(box, () => (nameEditable ? field.current : select.current));
  const [name, setName, nameNow] = useLive(topic);
  const [to, setTo, toNow] = useLive(streamId);
  const [notify, setNotify, notifyNow] = useLive({ ...notifyLast });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy, busyNow] = useLive(false);
  useEffect(() => {
    if (nameEditable) field.current?.select();
  }, []);
  const close = () => {
    if (c.dialog.value?.kind === 'move-topic') c.dialog.value = null;
  };
  const from = s.channels.get(streamId);
  // Where it may go: the channels the user is in and may post to (and its own).
  const targets = [...s.channelGroups().pinned, ...s.channelGroups().others].filter(
    (sub) => sub.stream_id === streamId || s.canPostIn(sub.stream_id),
  );
  const req = (now: boolean) =>
    moveRequest(
      { streamId, topic },
      {
        streamId: now ? toNow.current : to,
        topic: now ? nameNow.current : name,
      },
      now ? notifyNow.current : notify,
      { emptyTopicAllowed: !s.realm.mandatoryTopics },
    );
  const submit = async () => {
    const r = req(true);
    if (!r.ok) return setError(r.why);
    setError(null);
    setBusy(true);
    Object.assign(notifyLast, notifyNow.current);
    try {
      const id = await newestInTopic(c, streamId, topic);
      if (id === null) throw new Error('There are no messages to move.');
      await c.client.editMessage(id, r.body);
      close();
    } catch (e) {
      // Older messages than the realm lets this user move: as the reference's, this dialog
      // closes (the focus back where it would go) and then asks whether the newer ones go.
      const part = e instanceof ApiError ? partialMove(e.code, e.body) : null;
      if (!part) {
        setError(e instanceof Error ? e.message : String(e));
        setBusy(false);
        return;
      }
      close();
      giveBack();
      await offerPartialMove(c, r.body, part);
    }
  };
  const title = rename ? 'Rename topic' : 'Move topic';
  const ready = req(false).ok;

  return (
    <div class="overlay" onMouseDown={(e) => e.target === e.currentTarget && close()}>
      <div
        ref={box}
        class="dialog move-topic-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="move-topic-title"
        aria-describedby="move-topic-from"
        onKeyDown={(e) => {
          // Nothing behind it hears its keys (the app's shortcuts; Esc is its own).
          e.stopPropagation();
          if (e.key === 'Escape') {
            e.preventDefault();
            close();
          } else wrapTab(box.current, e);
        }}
      >
        <header>
          <h2 id="move-topic-title">{title}</h2>
          <CloseButton onClick={close} />
        </header>
        <form
          class="body"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            if (!busyNow.current) void submit();
          }}
        >
          <p class="move-topic-from" id="move-topic-from">
            <Swatch
              color={s.subs.get(streamId)?.color ?? '#9aa0ad'}
              privateChannel={from?.invite_only}
            />
            <span>{from?.name ?? 'Unknown channel'}</span>
            <span aria-hidden="true">›</span>
            <span>{s.topicName(topic)}</span>
          </p>
          {!rename && (
            <div class="stack-field">
              <label for="move-topic-channel">Channel</label>
              <select
                ref={select}
                id="move-topic-channel"
                class="field"
                value={String(to)}
                onChange={(e) => setTo(Number(e.currentTarget.value))}
              >
                {targets.map((sub) => (
                  <option key={sub.stream_id} value={String(sub.stream_id)}>
                    #{sub.name}
                  </option>
                ))}
              </select>
            </div>
          )}
          <div class="stack-field">
            <label for="move-topic-name">New topic name</label>
            <input
              ref={field}
              id="move-topic-name"
              class="field"
              type="text"
              value={name}
              maxLength={s.realm.maxTopicLength}
              placeholder={s.realm.emptyTopicName}
              disabled={!nameEditable}
              onInput={(e) => setName(e.currentTarget.value)}
            />
          </div>
          <label class="check">
            <input
              type="checkbox"
              name="send_notification_to_new_thread"
              checked={notify.newThread}
              onChange={(e) =>
                setNotify({ ...notifyNow.current, newThread: e.currentTarget.checked })
              }
            />
            <span>Send automated notice to new topic</span>
          </label>
          <label class="check">
            <input
              type="checkbox"
              name="send_notification_to_old_thread"
              checked={notify.oldThread}
              onChange={(e) =>
                setNotify({ ...notifyNow.current, oldThread: e.currentTarget.checked })
              }
            />
            <span>Send automated notice to old topic</span>
          </label>
          <FormError error={error} />
          <div class="confirm-actions">
            <button class="btn" type="button" onClick={close}>
              Cancel
            </button>
            <button class="btn primary" type="submit" disabled={busy || !ready}>
              {busy ? 'Moving…' : 'Confirm'}
            </button>
          </div>
        </form>
      </div>
    </div>
  );
}

/** The id of the topic's newest message the user may see, or null when it has none. */
export async function newestInTopic(
  c: Controller,
  streamId: number,
  topic: string,
): Promise<number | null> {
  const r = await c.client.getMessages({
    anchor: 'newest',
    num_before: 1,
    num_after: 0,
    narrow: apiNarrow(topicNarrow(streamId, topic)),
  });
  return r.messages.at(-1)?.id ?? null;
}

const why = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * A whole-topic move refused for the realm's time limit (`part`, from the refusal): asks, as the
 * reference's "Move some messages?", whether the newer messages go, and if so sends the partial
 * move (partialMoveRequest: change_later from the first the server named, the same name, channel
 * and notices as `body`). From the Move dialog (once it closed) and from a message's edit box
 * (its topic changed for "All messages in the topic"). True when the user confirmed and the
 * server took it; a refusal of the partial move is a toast (its dialog is gone).
 */
export async function offerPartialMove<B extends { propagate_mode: string }>(
  c: Controller,
  body: B,
  part: PartialMove,
): Promise<boolean> {
  const q = partialMoveQuestion(part);
  const ok = await c.ask({
    title: q.title,
    text: q.text,
    extra: <p class="move-some-detail">{q.detail}</p>,
    action: 'Confirm',
  });
  if (!ok) return false;
  const again = partialMoveRequest(body, part);
  try {
    await c.client.editMessage(again.id, again.body);
    return true;
  } catch (e) {
    c.toast(why(e));
    return false;
  }
}

/**
 * The same from an ApiError of an edit (the edit box's): asked when it is the time limit's
 * refusal with messages left to move; null when it is another refusal (the caller shows it).
 */
export function offerPartialMoveFor<B extends { propagate_mode: string }>(
  c: Controller,
  body: B,
  e: unknown,
): Promise<boolean> | null {
  const part = e instanceof ApiError ? partialMove(e.code, e.body) : null;
  return part && offerPartialMove(c, body, part);
}
const NO_MESSAGES = 'There are no messages in this topic.';

async function toggleResolved(c: Controller, streamId: number, topic: string): Promise<void> {
  try {
    const id = await newestInTopic(c, streamId, topic);
    if (id === null) return c.toast(NO_MESSAGES);
    await c.client.editMessage(id, {
      topic: toggledResolved(topic),
      propagate_mode: 'change_all',
      send_notification_to_old_thread: false,
      send_notification_to_new_thread: true,
    });
  } catch (e) {
    c.toast(why(e));
  }
}

async function deleteTopic(c: Controller, streamId: number, topic: string): Promise<void> {
  const s = c.state.value;
  if (!s) return;
  const ok = await c.ask({
    title: 'Delete topic',
    text:
      `Are you sure you want to permanently delete ${s.topicName(topic)}? Deleting a topic ` +
      'removes it and its messages for everyone at once.',
    action: 'Delete',
    danger: true,
  });
  if (!ok) return;
  try {
    // The server deletes for as long as one request may take; the rest is asked again.
    for (let round = 0; round < 100; round++) {
      if ((await c.client.deleteTopic(streamId, topic)).complete) return;
    }
    c.toast('The topic is not all deleted yet: try again.');
  } catch (e) {
    c.toast(why(e));
  }
}

/** The topic menu's Copy link, (Un)resolve and Delete (topic-actions.tsx). */
export function topicAction(
  c: Controller,
  a: TopicAction,
  streamId: number,
  topic: string,
): Promise<void> | void {
  if (a === 'copy-link') return copyTopicLink(c, streamId, topic);
  if (a === 'delete') return deleteTopic(c, streamId, topic);
  if (a === 'resolve' || a === 'unresolve') return toggleResolved(c, streamId, topic);
}

/** The topic view's address to the clipboard, as a message's Copy link. */
function copyTopicLink(c: Controller, streamId: number, topic: string): void {
  const s = c.state.value;
  if (!s) return;
  const url = topicLink(location.origin, streamId, topic, s.names());
  void navigator.clipboard?.writeText(url).then(
    () => c.toast('Link copied.', 'info'),
    () => c.toast('Could not copy the link.'),
  );
}
