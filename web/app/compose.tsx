/**
 * The compose box: a channel and topic (topic autocomplete from the channel's topics) or direct
 * message recipients (people autocomplete); the message, with autocomplete for @people and
 * groups, #channels and :emoji:; Enter sends, Shift+Enter is a new line; a preview rendered by
 * the server; uploads by paste, drag-and-drop and the button, with progress; a draft per
 * conversation kept across narrows and reloads; typing notifications while typing.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import {
  applyCandidate,
  channelCandidates,
  commandCandidates,
  emojiCandidates,
  mentionCandidates,
  notifiedMentions,
  tokenAt,
  topicCandidates,
  type Candidate,
  type Token,
} from '../state/autocomplete.js';
import { emojiText } from '../state/emoji.js';
import { composeAction, type ScheduleTo } from '../state/scheduled.js';
import {
  channelOf,
  dmOf,
  narrowHash,
  narrowKey,
  placeAfterMove,
  topicNarrow,
  topicOf,
} from '../state/narrow.js';
import { Avatar, CloseButton } from './bits.js';
import type { ComposeTo, Controller } from './controller.js';
import { isSlashCommand, sizeText } from '../state/format.js';
import { Icon } from './icons.js';
import { moveActive } from './listbox.js';
import { useLive } from './live.js';
import { Menu } from './menu.js';
import { EditingScheduled, saveScheduled, ScheduledNotice, SchedulePicker } from './scheduled.js';
import { decorate, openPicker } from './message.js';
import { track } from './track.js';
import { draftKey } from '../state/drafts.js';

type Upload = { id: number; name: string; loaded: number; total: number; error?: string };

let uploadSeq = 0;

function sameTo(a: ComposeTo, b: ComposeTo): boolean {
  if (a.kind === 'dm' && b.kind === 'dm') return a.userIds.join(',') === b.userIds.join(',');
  if (a.kind === 'stream' && b.kind === 'stream')
    return a.streamId === b.streamId && a.topic === b.topic;
  return false;
}

export function Options({
  items,
  active,
  onPick,
  id,
  label,
  below,
}: {
  items: Candidate[];
  active: number;
  onPick: (c: Candidate) => void;
  id: string;
  /** Its name for screen readers (a listbox must have one: axe's aria-input-field-name). */
  label: string;
  below?: boolean;
}) {
  if (!items.length) return null;
  return (
    <ul class={`popup ac${below ? ' below' : ''}`} role="listbox" id={id} aria-label={label}>
      {items.map((it, i) => (
        <li
          key={it.key}
          id={`${id}-${i}`}
          class="option"
          role="option"
          aria-selected={i === active}
          onMouseDown={(e) => {
            e.preventDefault();
            onPick(it);
          }}
        >
          {it.kind === 'user' && it.userId !== undefined && (
            <Avatar small id={it.userId} name={it.label} />
          )}
          {it.kind === 'emoji' &&
            (it.emojiUrl ? (
              <img src={it.emojiUrl} alt="" />
            ) : (
              <span class="e">{emojiText(it.emojiCode ?? '')}</span>
            ))}
          <span>
            {it.kind === 'channel'
              ? `#${it.label}`
              : it.kind === 'emoji'
                ? `:${it.label}:`
                : it.label}
          </span>
          {it.detail && <span class="detail">{it.detail}</span>}
        </li>
      ))}
    </ul>
  );
}

export function Compose({ c }: { c: Controller }) {
  const s = c.state.value!;
  const narrow = c.narrow.value;
  // The handlers read what the box holds now (`…Ref.current`), not what the last drawing showed:
  // a key pressed right after typing, before the redraw, acts on all that was typed.
  const [to, setTo, toRef] = useLive<ComposeTo>(
    () => c.composeToFor(narrow) ?? { kind: 'stream', streamId: null, topic: '' },
  );
  const [text, setText, textRef] = useLive(() => {
    const d = c.draftTo(toRef.current);
    return d ? (c.drafts?.get(d) ?? '') : '';
  });
  const [preview, setPreview, previewRef] = useLive<string | null>(null);
  /** The box is to take the focus as it is drawn again (the preview hidden). */
  const focusArea = useRef(false);
  const [error, setError] = useState<string | null>(null);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [token, setToken, tokenRef] = useLive<Token | null>(null);
  // Where the last `:` token that asked for the emoji index again began (its file could not be
  // fetched: the index holds the realm's own emoji only).
  const emojiAskedAt = useRef<number | null>(null);
  const [active, setActive, activeRef] = useLive(0);
  const [topicOpen, setTopicOpen, topicOpenRef] = useLive(false);
  const [dmQuery, setDmQuery, dmQueryRef] = useLive('');
  /** What was entered as a recipient while the people were still loading. */
  const [pendingDm, setPendingDm] = useState<string | null>(null);
  const [dragging, setDragging] = useState(false);
  /** The time picker of "Schedule message" is open. */
  const [picking, setPicking] = useState(false);
  /** A scheduled message on its way to the server (one at a time). */
  const scheduling = useRef(false);
  /** A message sent without a local echo (a slash command) on its way (one at a time). */
  const [sending, setSending, sendingRef] = useLive(false);
  const area = useRef<HTMLTextAreaElement>(null);
  const previewBox = useRef<HTMLDivElement>(null);
  /** The narrow (its key) a request addressed the box in, until the narrow's effect saw it. */
  const requestedIn = useRef<string | null>(null);

  /** Addresses the box elsewhere: the old text stays as that conversation's draft. */
  const retarget = (next: ComposeTo, content?: string) => {
    if (sameTo(next, toRef.current) && content === undefined) return;
    setTo(next);
    const d = c.draftTo(next);
    setText(content ?? (d ? (c.drafts?.get(d) ?? '') : ''));
    setPreview(null);
    setError(null);
    c.typingSender?.stop();
  };

  // Narrowing readdresses the box to the narrow's conversation (or channel). A view of none (All
  // messages, a search, Starred…) leaves it addressed to nobody, the channel to choose, as the
  // reference's compose defaults (narrow_state.set_compose_defaults), not to the conversation
  // viewed before; unless something is typed in it (the reference's has_message_content keeps
  // the box as it is), or a request addressed it for this narrow (`c` or `x` from the Inbox,
  // goAndCompose: the narrow and the request come in the same drawing).
  // A scheduled message being edited stays with its conversation: narrowed elsewhere, the box
  // holds that conversation's draft, which is no edit of it.
  useEffect(() => {
    const requested = requestedIn.current === narrowKey(narrow);
    requestedIn.current = null;
    let next = c.composeToFor(narrow);
    if (!next) {
      if (requested || textRef.current.trim() !== '') return;
      next = { kind: 'stream', streamId: null, topic: '' };
    }
    if (c.editingScheduled.peek() !== null && !sameTo(next, toRef.current))
      c.editingScheduled.value = null;
    retarget(next);
  }, [narrowKey(narrow)]);

  // A move took the topic the box is addressed to: the box goes with it (its draft went too).
  const moved = c.topicMoved.value;
  useEffect(() => {
    const now = toRef.current;
    if (!moved || now.kind !== 'stream' || now.streamId === null) return;
    const to = placeAfterMove({ streamId: now.streamId, topic: now.topic }, moved);
    if (to) retarget({ kind: 'stream', ...to }, textRef.current);
  }, [moved]);

  // Replies and "new message" requests. The field takes the focus as the box is drawn addressed
  // to the request (layout effects: in the task of the key or click that asked, the app drawing
  // the user's input at once), so that keys typed right after `r`, `c` or Reply land in it, not
  // on the message list (where n and c are shortcuts).
  const req = c.composeRequest.value;
  const focusFor = useRef<ComposeTo | null>(null);
  useLayoutEffect(() => {
    if (!req) return;
    requestedIn.current = narrowKey(c.narrow.peek());
    retarget(req.to, req.quote);
    // A quote is the conversation's draft now, as if typed (a second quote goes after it); a
    // scheduled message loaded for editing is not.
    if (req.quote !== undefined && !req.notDraft) saveDraft(req.quote);
    focusFor.current = req.to;
  }, [req?.seq]);
  // As drawn, not a frame later: keys typed right after the preview's button go into the box.
  useLayoutEffect(() => {
    if (!focusArea.current || !area.current) return;
    focusArea.current = false;
    area.current.focus();
  });
  useLayoutEffect(() => {
    const want = focusFor.current;
    if (!want) return;
    // Readdressed elsewhere since (before it was drawn): no focus to give.
    if (!sameTo(want, toRef.current)) focusFor.current = null;
    if (!sameTo(want, to)) return;
    focusFor.current = null;
    // No channel yet (`c` in a view of several): its choice first, as the next Tab would skip
    // back over it.
    if (want.kind === 'stream' && want.streamId === null)
      document.querySelector<HTMLElement>('.compose select.to-channel')?.focus();
    else if (want.kind === 'stream' && want.topic === '')
      document.getElementById('compose-topic')?.focus();
    else if (want.kind === 'dm' && want.userIds.length === 0)
      document.getElementById('compose-dm')?.focus();
    else area.current?.focus();
  });

  // The channel's topics, and again once a move made them out of date (the controller fetches
  // only the shown channel's; the box sees it when drawn again, at the latest when the topic is
  // focused).
  const toChannel = to.kind === 'stream' ? to.streamId : null;
  const topicsGone = toChannel !== null && s.topicsToFetch(toChannel);
  useEffect(() => {
    if (toChannel !== null) void c.loadTopics(toChannel);
  }, [toChannel, topicsGone]);

  // Files dropped anywhere on the message pane come here.
  useEffect(() => {
    c.dropFiles = (files) => upload(files);
    return () => (c.dropFiles = null);
  });

  const saveDraft = (value: string) => {
    const d = c.draftTo(toRef.current);
    if (d) c.drafts?.set(d, value);
  };

  const setValue = (value: string, caret?: number) => {
    setText(value);
    saveDraft(value);
    c.typingSender?.typed(c.typingTo(toRef.current), value.trim() === '');
    if (caret !== undefined) {
      // The box and its caret change at once, not at the next drawing: keys typed right after
      // a suggestion was taken go after it.
      const place = (el: HTMLTextAreaElement) => {
        el.value = value;
        el.focus();
        el.setSelectionRange(caret, caret);
        autosize(el);
      };
      if (area.current) place(area.current);
      else requestAnimationFrame(() => area.current && place(area.current));
    }
  };

  const candidates = (token: Token | null): Candidate[] => {
    if (!token) return [];
    track(s.rev.users);
    if (token.kind === 'mention') {
      track(s.rev.muted);
      const users = [...s.users.values()].filter(
        (u) => u.is_active !== false && u.user_id !== s.selfId,
      );
      return mentionCandidates(
        token.query,
        {
          users,
          // A deactivated group cannot be mentioned.
          groups: [...s.groups.values()].filter((g) => g.deactivated !== true),
          hidden: (id) => s.mutedUsers.has(id),
        },
        token.silent,
      );
    }
    if (token.kind === 'channel') return channelCandidates(token.query, [...s.channels.values()]);
    if (token.kind === 'command') return commandCandidates(token.query);
    const idx = c.emoji.value;
    // Not loaded yet, or partial after a failed fetch: asked for again by each new `:` token (as
    // by each opening of the picker), not at each key typed in it.
    if (!idx || (c.emojiPartial && emojiAskedAt.current !== token.start)) {
      emojiAskedAt.current = token.start;
      void c.loadEmoji();
    }
    return idx ? emojiCandidates(token.query, idx.names) : [];
  };
  const items = candidates(token);

  const refreshToken = () => {
    const el = area.current;
    if (!el) return;
    const t = tokenAt(el.value, el.selectionStart ?? 0);
    setToken(t);
    setActive(0);
  };

  const pick = (cand: Candidate) => {
    const token = tokenRef.current;
    if (!token) return;
    const r = applyCandidate(textRef.current, token, cand);
    setToken(null);
    setValue(r.text, r.caret);
  };

  /** The box emptied now (typed and sent before a drawing, the text would come back). */
  const clearBox = () => {
    setText('');
    if (area.current) area.current.value = '';
    setPreview(null);
    setError(null);
    setToken(null);
    requestAnimationFrame(() => area.current && autosize(area.current));
  };

  const submit = () => {
    const to = toRef.current;
    const text = textRef.current;
    const problem = c.checkSend(to, text);
    if (problem) {
      setError(problem);
      return;
    }
    // A scheduled message being edited: sending saves it (at its time), not a new message.
    if (c.editingScheduled.peek() !== null) {
      void schedule(null);
      return;
    }
    c.scheduledNotice.value = null;
    if (isSlashCommand(text)) void sendUnechoed(to, text);
    else {
      c.send(to, text);
      clearBox();
    }
  };

  /**
   * A slash command (/poll, /todo) is not echoed, as the reference's: the server makes what it
   * shows. The box keeps it, sending, until the server has it; then it empties (unless typed over
   * meanwhile), or says why it was not sent.
   */
  const sendUnechoed = async (to: ComposeTo, text: string) => {
    if (sendingRef.current) return;
    setSending(true);
    try {
      await c.sendUnechoed(to, text);
    } catch (e) {
      setError(`Your message was not sent: ${e instanceof Error ? e.message : String(e)}`);
      return;
    } finally {
      setSending(false);
    }
    if (textRef.current === text) clearBox();
  };

  /**
   * Schedules the box's message for `at` (UNIX seconds), or, while it holds a scheduled message,
   * changes that one (at `at`, or at its own time when null). Problems show under the box.
   */
  const schedule = async (at: number | null) => {
    const to = toRef.current;
    const text = textRef.current;
    const problem = c.checkSend(to, text);
    if (problem) {
      setError(problem);
      return;
    }
    if (scheduling.current) return;
    const id = c.editingScheduled.peek();
    const editing = id === null ? null : (c.scheduled.get(id) ?? null);
    // checkSend passed: a channel is chosen.
    const action = composeAction(editing, to as ScheduleTo, text, at, Date.now());
    if (action.kind === 'problem') {
      setError(action.problem);
      return;
    }
    if (action.kind === 'send') return;
    scheduling.current = true;
    try {
      await saveScheduled(c, action);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
      return;
    } finally {
      scheduling.current = false;
    }
    // Out of the box (unless typed over meanwhile), and out of the drafts.
    if (textRef.current === text) {
      const d = c.draftTo(to);
      if (d) c.drafts?.delete(d);
      clearBox();
    }
    c.typingSender?.stop();
    c.editingScheduled.value = null;
    c.scheduledNotice.value = { timestamp: action.params.scheduled_delivery_timestamp };
  };

  const openSchedule = () => {
    const problem = c.checkSend(toRef.current, textRef.current);
    if (problem) setError(problem);
    else setPicking(true);
  };

  const cancelEditing = () => {
    c.editingScheduled.value = null;
    setValue('');
    clearBox();
  };

  const onKeyDown = (e: KeyboardEvent) => {
    const items = candidates(tokenRef.current);
    if (items.length) {
      if (moveActive(e, items.length, setActive)) return;
      if (e.key === 'Enter' || e.key === 'Tab') {
        e.preventDefault();
        pick(items[Math.min(activeRef.current, items.length - 1)]!);
        return;
      }
      if (e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        setToken(null);
        return;
      }
    }
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      submit();
    } else if (e.key === 'Escape') {
      area.current?.blur();
    }
  };

  // ---- Uploads ------------------------------------------------------------------------
  const upload = (files: File[]) => {
    const max = s.realm.maxUploadMib * 1024 * 1024;
    for (const file of files) {
      const id = ++uploadSeq;
      const name = file.name || 'pasted-file';
      if (file.size > max) {
        setUploads((u) => [
          ...u,
          {
            id,
            name,
            loaded: 0,
            total: file.size,
            error: `${name} is ${sizeText(file.size)}: files can be at most ${s.realm.maxUploadMib} MB.`,
          },
        ]);
        continue;
      }
      const placeholder = `[Uploading ${name}…]()`;
      const el = area.current;
      const at = el ? (el.selectionStart ?? textRef.current.length) : textRef.current.length;
      const cur = textRef.current;
      const pre = at > 0 && !/\s$/.test(cur.slice(0, at)) ? ' ' : '';
      setValue(
        cur.slice(0, at) + pre + placeholder + ' ' + cur.slice(at),
        at + pre.length + placeholder.length + 1,
      );
      setUploads((u) => [...u, { id, name, loaded: 0, total: file.size }]);
      c.client
        .upload(file, name, {
          onProgress: (loaded, total) =>
            setUploads((u) => u.map((x) => (x.id === id ? { ...x, loaded, total } : x))),
        })
        .then((r) => {
          setValue(textRef.current.replace(placeholder, `[${name}](${r.url})`));
          setUploads((u) => u.filter((x) => x.id !== id));
        })
        .catch((err: unknown) => {
          setValue(textRef.current.replace(placeholder + ' ', '').replace(placeholder, ''));
          setUploads((u) =>
            u.map((x) =>
              x.id === id
                ? { ...x, error: `${name}: ${err instanceof Error ? err.message : String(err)}` }
                : x,
            ),
          );
        });
    }
  };

  const togglePreview = async () => {
    if (previewRef.current !== null) {
      focusArea.current = true;
      setPreview(null);
      return;
    }
    const text = textRef.current;
    const to = toRef.current;
    if (text.trim() === '') return;
    // Shown only if the box still holds that text for that conversation when the answer comes
    // (not after a narrow elsewhere, a send or more typing).
    const still = () => textRef.current === text && toRef.current === to;
    try {
      const r = await c.client.render(text);
      if (still()) setPreview(r.rendered);
    } catch (e) {
      if (still()) setError(e instanceof Error ? e.message : String(e));
    }
  };
  useEffect(() => {
    if (previewBox.current) decorate(previewBox.current);
  }, [preview]);

  // The scheduled message the box holds, if any (gone once sent or deleted).
  track(c.scheduled.rev);
  const editingId = c.editingScheduled.value;
  const editingNow = editingId === null ? undefined : c.scheduled.get(editingId);

  // ---- Recipients ---------------------------------------------------------------------
  track(s.rev.channels);
  // The channel the box is addressed to is gone from what the app knows (the user was removed
  // from a private channel, or it was archived): the box asks for another, keeping the text and
  // the topic, rather than offering to send where the server will refuse.
  const lost = to.kind === 'stream' && to.streamId !== null && !s.channels.has(to.streamId);
  useEffect(() => {
    const now = toRef.current;
    if (lost && now.kind === 'stream') retarget({ ...now, streamId: null }, textRef.current);
  }, [lost]);
  const subs = s.sortedSubs();
  // A channel the box is addressed to without being in it (left since, or opened by a link):
  // listed too, so that the box shows where the message goes (the server takes it, if public).
  const outside =
    to.kind === 'stream' && to.streamId !== null && !s.subs.has(to.streamId)
      ? s.channels.get(to.streamId)
      : undefined;
  // The topic suggestions follow new topics only while they are shown (a message arriving
  // changes a channel's topics: the box is not drawn again for it).
  if (topicOpen) track(s.rev.topics);
  const topicsFor = (to: ComposeTo, open: boolean) => {
    if (!open || to.kind !== 'stream') return [];
    const topics = to.streamId !== null ? (s.topics.get(to.streamId) ?? []).map((t) => t.name) : [];
    return topicCandidates(to.topic, topics).filter((x) => x.label !== to.topic);
  };
  const topicItems = topicsFor(to, topicOpen);
  // People to send to: the realm's users arrive after the first screen (GET /users); the list
  // follows them.
  if (to.kind === 'dm') track(s.rev.users, s.rev.muted);
  const peopleFor = (query: string, taken: number[]) =>
    mentionCandidates(
      query,
      {
        users: [...s.users.values()].filter(
          (u) => u.is_active !== false && !taken.includes(u.user_id),
        ),
        groups: [],
        hidden: (id) => s.mutedUsers.has(id),
      },
      false,
    ).filter((x) => x.kind === 'user');
  const dmFor = (to: ComposeTo, query: string) =>
    to.kind === 'dm' && query.trim() !== '' ? peopleFor(query, to.userIds) : [];
  const dmItems = dmFor(to, dmQuery);
  const addRecipient = (userId: number) => {
    const to = toRef.current;
    if (to.kind !== 'dm') return;
    retarget({ kind: 'dm', userIds: [...to.userIds, userId] }, textRef.current);
    setDmQuery('');
    setPendingDm(null);
  };
  // A name entered (Enter) before the people were loaded: taken when they are.
  useEffect(() => {
    if (pendingDm === null || !s.usersComplete || to.kind !== 'dm') return;
    const best = peopleFor(pendingDm, to.userIds)[0];
    if (best?.userId !== undefined) addRecipient(best.userId);
    else {
      setPendingDm(null);
      setError(`No one here matches “${pendingDm}”.`);
    }
  });

  const typists = c.typingIn(c.composeToFor(narrow));
  const placeholder =
    to.kind === 'dm'
      ? to.userIds.length
        ? `Message ${s.dmName(to.userIds)}`
        : 'Message…'
      : to.streamId !== null && !lost
        ? `Message #${s.channelName(to.streamId)}${to.topic ? ` > ${to.topic}` : ''}`
        : 'Message…';

  return (
    <>
      <div class="typing" aria-live="polite">
        {typists.length > 0 &&
          (typists.length > 3
            ? 'Several people are typing…'
            : `${typists.map((id) => s.userName(id)).join(', ')} ${typists.length === 1 ? 'is' : 'are'} typing…`)}
      </div>
      <SentToMuted c={c} />
      <SentOutside c={c} />
      <NotSubscribed c={c} to={to} text={text} />
      <ScheduledNotice c={c} />
      <EditingScheduled c={c} onCancel={cancelEditing} />
      <form
        class={`compose${dragging ? ' dragging' : ''}`}
        aria-label="Compose a message"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
        onDragOver={(e) => {
          if (e.dataTransfer?.types.includes('Files')) {
            e.preventDefault();
            setDragging(true);
          }
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          setDragging(false);
          const files = [...(e.dataTransfer?.files ?? [])];
          if (files.length) {
            e.preventDefault();
            e.stopPropagation();
            upload(files);
          }
        }}
      >
        <div class="compose-to">
          <div class="to-kind" role="group" aria-label="Send to">
            <button
              type="button"
              aria-pressed={to.kind === 'stream'}
              onClick={() =>
                toRef.current.kind !== 'stream' &&
                retarget({ kind: 'stream', streamId: null, topic: '' })
              }
            >
              Channel
            </button>
            <button
              type="button"
              aria-pressed={to.kind === 'dm'}
              onClick={() => toRef.current.kind !== 'dm' && retarget({ kind: 'dm', userIds: [] })}
            >
              Direct
            </button>
          </div>
          {to.kind === 'stream' ? (
            <>
              <select
                class="field to-channel"
                aria-label="Channel"
                value={to.streamId === null || lost ? '' : String(to.streamId)}
                onChange={(e) => {
                  const now = toRef.current;
                  retarget({
                    kind: 'stream',
                    streamId: e.currentTarget.value ? Number(e.currentTarget.value) : null,
                    topic: now.kind === 'stream' ? now.topic : '',
                  });
                }}
              >
                {/* `selected` too: a value no option had (a channel gone from the list)
                    leaves the DOM's value '' already, so setting value '' would change nothing. */}
                <option value="" selected={to.streamId === null || lost}>
                  Choose a channel
                </option>
                {outside && (
                  <option value={String(outside.stream_id)}>
                    #{outside.name} (not subscribed)
                  </option>
                )}
                {subs.map((x) => (
                  <option key={x.stream_id} value={String(x.stream_id)}>
                    #{x.name}
                  </option>
                ))}
              </select>
              <span class="to-arrow" aria-hidden="true">
                ›
              </span>
              <div class="to-topic" style={{ position: 'relative' }}>
                <input
                  id="compose-topic"
                  class="field"
                  aria-label="Topic"
                  role="combobox"
                  aria-expanded={topicItems.length > 0}
                  aria-controls="topic-options"
                  aria-autocomplete="list"
                  autocomplete="off"
                  placeholder={
                    s.realm.mandatoryTopics ? 'Topic' : `Topic (or ${s.realm.emptyTopicName})`
                  }
                  maxLength={s.realm.maxTopicLength}
                  value={to.topic}
                  onFocus={() => setTopicOpen(true)}
                  onBlur={() => setTopicOpen(false)}
                  onInput={(e) => {
                    setTopicOpen(true);
                    const now = toRef.current;
                    if (now.kind !== 'stream') return;
                    const next = { ...now, topic: e.currentTarget.value };
                    setTo(next);
                    // The box's text moves to the new topic's draft: the one it had under the
                    // topic as it was (a partial one while typing: "p", "pl", …) goes, or every
                    // keystroke of a topic typed after the text would leave a draft behind (and,
                    // with drafts kept on the server, send it there).
                    const text = textRef.current;
                    if (!text) return;
                    const was = c.draftTo(now);
                    const d = c.draftTo(next);
                    const moved = was && (!d || draftKey(was) !== draftKey(d));
                    if (moved && c.drafts?.get(was) === text) c.drafts.delete(was);
                    if (d) c.drafts?.set(d, text);
                  }}
                  onKeyDown={(e) => {
                    const now = toRef.current;
                    const topicItems = topicsFor(now, topicOpenRef.current);
                    const active = activeRef.current;
                    if (e.key === 'Enter') {
                      e.preventDefault();
                      if (
                        now.kind === 'stream' &&
                        topicItems.length &&
                        active < topicItems.length &&
                        e.currentTarget.value !== ''
                      )
                        retarget({ ...now, topic: topicItems[active]!.label }, textRef.current);
                      setTopicOpen(false);
                      area.current?.focus();
                    } else if (moveActive(e, topicItems.length, setActive)) {
                      return;
                    } else if (e.key === 'Escape' && topicOpenRef.current) {
                      e.stopPropagation();
                      setTopicOpen(false);
                    }
                  }}
                />
                <Options
                  id="topic-options"
                  label="Topics"
                  below
                  items={topicItems}
                  active={active}
                  onPick={(x) => {
                    retarget({ ...toRef.current, topic: x.label } as ComposeTo, textRef.current);
                    setTopicOpen(false);
                    area.current?.focus();
                  }}
                />
              </div>
            </>
          ) : (
            <div class="pills" style={{ position: 'relative' }}>
              {to.userIds.map((id) => (
                <span class="pill" key={id}>
                  {s.userName(id)}
                  <button
                    type="button"
                    aria-label={`Remove ${s.userName(id)}`}
                    onClick={() => {
                      const now = toRef.current;
                      if (now.kind !== 'dm') return;
                      retarget(
                        { kind: 'dm', userIds: now.userIds.filter((x) => x !== id) },
                        textRef.current,
                      );
                    }}
                  >
                    ×
                  </button>
                </span>
              ))}
              <input
                id="compose-dm"
                aria-label="Add a recipient"
                role="combobox"
                aria-expanded={dmItems.length > 0}
                aria-controls="dm-options"
                autocomplete="off"
                placeholder={to.userIds.length ? '' : 'Type a name'}
                value={dmQuery}
                onInput={(e) => {
                  setDmQuery(e.currentTarget.value);
                  setPendingDm(null);
                  setError(null);
                  setActive(0);
                }}
                onKeyDown={(e) => {
                  const to = toRef.current;
                  if (to.kind !== 'dm') return;
                  const dmQuery = dmQueryRef.current;
                  const dmItems = dmFor(to, dmQuery);
                  if ((e.key === 'Enter' || e.key === 'Tab') && dmItems.length) {
                    e.preventDefault();
                    addRecipient(dmItems[Math.min(activeRef.current, dmItems.length - 1)]!.userId!);
                  } else if (e.key === 'Backspace' && dmQuery === '' && to.userIds.length) {
                    retarget({ kind: 'dm', userIds: to.userIds.slice(0, -1) }, textRef.current);
                  } else if (moveActive(e, dmItems.length, setActive)) {
                    return;
                  } else if (e.key === 'Enter' && dmQuery.trim() !== '') {
                    // A name no one matches, or the people not loaded yet: said, or taken once
                    // they are.
                    e.preventDefault();
                    if (s.usersComplete) setError(`No one here matches “${dmQuery.trim()}”.`);
                    else setPendingDm(dmQuery.trim());
                  } else if (e.key === 'Enter') {
                    e.preventDefault();
                    area.current?.focus();
                  }
                }}
              />
              <Options
                id="dm-options"
                label="People"
                below
                items={dmItems}
                active={active}
                onPick={(u) => addRecipient(u.userId!)}
              />
              {(pendingDm !== null || (dmQuery.trim() !== '' && !s.usersComplete)) && (
                <p class="popup ac below loading" role="status">
                  Loading people…
                </p>
              )}
            </div>
          )}
        </div>
        {preview !== null ? (
          <div
            class="preview content"
            ref={previewBox}
            aria-label="Preview"
            dangerouslySetInnerHTML={{ __html: preview }}
          />
        ) : (
          <textarea
            ref={area}
            id="compose-text"
            aria-label="Message"
            aria-controls={items.length ? 'compose-options' : undefined}
            aria-autocomplete="list"
            aria-activedescendant={items.length ? `compose-options-${active}` : undefined}
            placeholder={placeholder}
            rows={1}
            maxLength={s.realm.maxMessageLength}
            value={text}
            onInput={(e) => {
              setValue(e.currentTarget.value);
              autosize(e.currentTarget);
              refreshToken();
            }}
            onClick={refreshToken}
            onKeyDown={onKeyDown}
            onBlur={() => setToken(null)}
            onPaste={(e) => {
              const files = [...(e.clipboardData?.files ?? [])];
              if (files.length) {
                e.preventDefault();
                upload(files);
              }
            }}
          />
        )}
        {preview === null && (
          <Options
            id="compose-options"
            label="Suggestions"
            items={items}
            active={active}
            onPick={pick}
          />
        )}
        {uploads.length > 0 && (
          <div class="uploads" aria-live="polite">
            {uploads.map((u) => (
              <div
                key={u.id}
                class={`upload${u.error ? ' failed' : ''}`}
                role={u.error ? 'alert' : undefined}
              >
                {u.error ? (
                  <>
                    <span>{u.error}</span>
                    <button
                      class="icon-btn"
                      type="button"
                      aria-label="Dismiss"
                      onClick={() => setUploads((x) => x.filter((y) => y.id !== u.id))}
                    >
                      <Icon name="x" />
                    </button>
                  </>
                ) : (
                  <>
                    <span>Uploading {u.name}</span>
                    <progress
                      max={u.total || 1}
                      value={u.loaded}
                      aria-label={`Uploading ${u.name}`}
                    />
                    <span>{u.total ? Math.round((u.loaded / u.total) * 100) : 0}%</span>
                  </>
                )}
              </div>
            ))}
          </div>
        )}
        {error && (
          <p class="error-text" role="alert" style={{ margin: '0 12px 6px' }}>
            {error}
          </p>
        )}
        <div class="compose-bar">
          <label class="icon-btn" title="Attach files" aria-label="Attach files">
            <Icon name="clip" />
            <input
              type="file"
              multiple
              class="sr-only"
              onChange={(e) => {
                const files = [...(e.currentTarget.files ?? [])];
                e.currentTarget.value = '';
                upload(files);
              }}
            />
          </label>
          <button
            class="icon-btn"
            type="button"
            aria-label="Insert an emoji"
            title="Emoji"
            onClick={(e) =>
              openPicker(c, e.currentTarget, 'Insert an emoji', (entry) => {
                const el = area.current;
                const at = el
                  ? (el.selectionStart ?? textRef.current.length)
                  : textRef.current.length;
                const ins = `:${entry.name}: `;
                setValue(
                  textRef.current.slice(0, at) + ins + textRef.current.slice(at),
                  at + ins.length,
                );
              })
            }
          >
            <Icon name="smile" />
          </button>
          <button
            class="icon-btn"
            type="button"
            aria-label="Preview"
            title="Preview"
            aria-pressed={preview !== null}
            onClick={() => void togglePreview()}
          >
            <Icon name="eye" />
          </button>
          {sending ? (
            <span class="hint" role="status">
              Sending…
            </span>
          ) : (
            <span class="hint">Enter to send · Shift+Enter for a new line</span>
          )}
          <button class="btn primary send-btn" type="submit" disabled={sending}>
            <Icon name="send" />
            {editingNow ? 'Save' : 'Send'}
          </button>
          <Menu
            class="send-menu"
            label="Send options"
            items={[{ label: 'Schedule message', run: openSchedule }]}
          />
        </div>
      </form>
      {picking && (
        <SchedulePicker
          c={c}
          title={editingNow ? 'Reschedule message' : 'Schedule message'}
          initial={editingNow?.scheduled_delivery_timestamp}
          onPick={(ts) => void schedule(ts)}
          onClose={() => setPicking(false)}
        />
      )}
    </>
  );
}

/**
 * The notice of a message sent to a muted topic (Controller.sentToMuted), as the reference's
 * unmute banner above its compose box: where the message went, that All messages leaves it out,
 * and "Unmute topic". Shown while the topic stays muted (unmuted anyhow, it goes).
 */
function SentToMuted({ c }: { c: Controller }) {
  const s = c.state.value!;
  const sent = c.sentToMuted.value;
  void s.rev.channels.value; // muting changes
  if (!sent) return null;
  const why = s.mutedBy(sent.streamId, sent.topic);
  if (!why) return null;
  const where = `#${s.channelName(sent.streamId)} › ${s.topicName(sent.topic)}`;
  return (
    <div class="compose-notice" role="status">
      <p>
        Sent to <a href={narrowHash(topicNarrow(sent.streamId, sent.topic), s.names())}>{where}</a>
        {why === 'topic' ? ', a topic you muted' : ', in a channel you muted'}: All messages does
        not show it.
      </p>
      <button class="btn" type="button" onClick={() => c.unmuteSentTo(sent.streamId, sent.topic)}>
        Unmute topic
      </button>
      <CloseButton tooltip onClick={() => (c.sentToMuted.value = null)} />
    </div>
  );
}

/**
 * The notice of a message sent where the view does not show it (Controller.sentOutside), as the
 * reference's: "Sent! Your message is outside your current view." and a link to its conversation.
 */
function SentOutside({ c }: { c: Controller }) {
  const s = c.state.value!;
  const n = c.sentOutside.value;
  if (!n) return null;
  const ch = channelOf(n);
  const where =
    ch !== undefined
      ? `#${s.channelName(ch)} › ${s.topicName(topicOf(n) ?? '')}`
      : s.dmName(dmOf(n) ?? []);
  return (
    <div class="compose-notice sent-outside" role="status">
      <p>
        Sent! Your message is outside your current view.{' '}
        <a href={narrowHash(n, s.names())}>Go to {where}</a>
      </p>
      <CloseButton tooltip onClick={() => (c.sentOutside.value = null)} />
    </div>
  );
}

/**
 * People mentioned in a channel message who are not its members, as the reference's compose
 * warning: they are not notified (the server notifies members only), which the sender would not
 * otherwise learn. "Subscribe them" where the user may add members; dismissed person by person.
 * The channel's members are fetched once there is a mention to check.
 */
function NotSubscribed({ c, to, text }: { c: Controller; to: ComposeTo; text: string }) {
  const s = c.state.value!;
  track(s.rev.users, s.rev.channels, s.members.rev);
  const [dismissed, setDismissed] = useState<ReadonlySet<string>>(new Set());
  const [adding, setAdding] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const streamId = to.kind === 'stream' ? to.streamId : null;
  const mentioned =
    streamId === null || !text.includes('@**')
      ? []
      : notifiedMentions(
          text,
          [...s.users.values()].filter((u) => u.is_active !== false && u.user_id !== s.selfId),
        );
  useEffect(() => {
    if (streamId !== null && mentioned.length > 0) void c.loadMembers(streamId);
  }, [streamId, mentioned.length > 0]);
  useEffect(() => setError(null), [streamId]);
  if (streamId === null || mentioned.length === 0) return null;
  const members = s.members.get(streamId);
  if (!members) return null;
  const key = (id: number) => `${streamId}:${id}`;
  const outside = mentioned.filter((id) => !members.has(id) && !dismissed.has(key(id)));
  if (outside.length === 0) return null;
  const names = outside.map((id) => s.userName(id));
  const who =
    names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
  const subscribe = async () => {
    setAdding(true);
    setError(null);
    const refused = await c.addMembers(streamId, outside);
    setAdding(false);
    if (refused) setError(refused);
  };
  return (
    <div class="compose-notice not-subscribed" role="status">
      <p>
        {who} {outside.length === 1 ? 'is' : 'are'} not subscribed to #{s.channelName(streamId)}:
        the mention will not notify {outside.length === 1 ? 'them' : 'any of them'}.
        {error && <span class="error"> {error}</span>}
      </p>
      {s.channelPermissions(streamId).addMembers && (
        <button class="btn" type="button" disabled={adding} onClick={() => void subscribe()}>
          Subscribe {outside.length === 1 ? 'them' : 'them all'}
        </button>
      )}
      <CloseButton
        tooltip
        onClick={() => setDismissed(new Set([...dismissed, ...outside.map(key)]))}
      />
    </div>
  );
}

function autosize(el: HTMLTextAreaElement): void {
  el.style.height = 'auto';
  el.style.height = `${Math.min(el.scrollHeight, window.innerHeight * 0.4)}px`;
}
