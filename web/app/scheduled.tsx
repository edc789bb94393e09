/**
 * Scheduled messages and drafts (as the reference's web app): the time picker the compose box's
 * "Schedule message" and a scheduled message's "Reschedule" open (suggested times computed from
 * the local time, or a date and time of one's own); the Scheduled messages view (#scheduled),
 * soonest first, each with where and when it goes, its rendered content, Edit (back into the
 * compose box: sending then changes it), Reschedule, Send now and Delete, and the ones the server
 * could not send marked (one to an archived channel offers only Delete, and says why); the
 * Drafts view (#drafts), the most recently edited first, with Restore and Delete; their sidebar
 * entries with a count; and the notice of a message just scheduled.
 * Both lists follow the server's `scheduled_messages` events and the drafts as they are typed.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Draft } from '../state/drafts.js';
import { dmNarrow, narrowHash, topicNarrow, channelNarrow, type Narrow } from '../state/narrow.js';
import {
  destinationText,
  inputValue,
  parseInputValue,
  schedulePresets,
  timeProblem,
  whenLabel,
  type ComposeAction,
  type ScheduledMessage,
} from '../state/scheduled.js';
import type { ComposeTo, Controller } from './controller.js';
import { useFocusBack, wrapTab } from './focus-back.js';
import { Icon } from './icons.js';
import { CloseButton } from './bits.js';
import { decorate } from './message.js';
import { track } from './track.js';

/** The browser's time zone: the suggested times are the user's local ones. */
export function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

function twentyFour(c: Controller): boolean {
  return c.state.value?.settings.twenty_four_hour_time === true;
}

/** When a scheduled message goes, in words, in the user's local time. */
export function when(c: Controller, ts: number): string {
  return whenLabel(ts, Date.now(), localZone(), twentyFour(c));
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

// ---- The time picker ---------------------------------------------------------------------------

/**
 * A dialog of send times: the suggested ones, and a date and time of one's own ("Schedule").
 * Picking one closes it and hands the time (UNIX seconds) to `onPick`; Esc or Cancel closes it.
 */
export function SchedulePicker({
  c,
  title,
  initial,
  onPick,
  onClose,
}: {
  c: Controller;
  title: string;
  /** The time the custom field starts at (a rescheduled message's own). */
  initial?: number;
  onPick: (ts: number) => void;
  onClose: () => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const zone = localZone();
  const now = Date.now();
  const presets = schedulePresets(now, zone, twentyFour(c));
  // The custom time starts an hour ahead, on the hour (or at the message's own time).
  const start = initial ?? Math.ceil(now / 3_600_000) * 3600 + 3600;
  const [custom, setCustom] = useState(() => inputValue(start, zone));
  const [problem, setProblem] = useState<string | null>(null);
  useFocusBack(box, () => box.current?.querySelector<HTMLElement>('.schedule-preset, input'));
  const pick = (ts: number) => {
    onClose();
    onPick(ts);
  };
  const pickCustom = () => {
    const ts = parseInputValue(custom, zone);
    const p = timeProblem(ts, Date.now());
    if (p) setProblem(p);
    else pick(ts!);
  };
  return (
    <div class="overlay" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div
        ref={box}
        class="dialog schedule-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="schedule-title"
        onKeyDown={(e) => {
          e.stopPropagation();
          if (e.key === 'Escape') {
            e.preventDefault();
            onClose();
          } else wrapTab(box.current, e);
        }}
      >
        <header>
          <h2 id="schedule-title">{title}</h2>
          <CloseButton onClick={onClose} />
        </header>
        <div class="body">
          <ul class="schedule-presets" aria-label="Suggested times">
            {presets.map((p) => (
              <li key={p.key}>
                <button class="schedule-preset" type="button" onClick={() => pick(p.timestamp)}>
                  <Icon name="clock" />
                  {p.label}
                </button>
              </li>
            ))}
          </ul>
          <form
            class="schedule-custom"
            onSubmit={(e) => {
              e.preventDefault();
              pickCustom();
            }}
          >
            <label>
              <span>Custom time</span>
              <input
                class="field"
                type="datetime-local"
                value={custom}
                aria-invalid={problem !== null}
                aria-describedby={problem ? 'schedule-problem' : undefined}
                onInput={(e) => {
                  setCustom(e.currentTarget.value);
                  setProblem(null);
                }}
              />
            </label>
            {problem && (
              <p id="schedule-problem" class="error-text" role="alert">
                {problem}
              </p>
            )}
            <div class="schedule-buttons">
              <button class="btn" type="button" onClick={onClose}>
                Cancel
              </button>
              <button class="btn primary" type="submit">
                Schedule
              </button>
            </div>
          </form>
        </div>
      </div>
    </div>
  );
}

// ---- Requests ----------------------------------------------------------------------------------

/** Creates or changes a scheduled message (composeAction's `create` or `edit`). */
export async function saveScheduled(
  c: Controller,
  action: Extract<ComposeAction, { kind: 'create' | 'edit' }>,
): Promise<void> {
  if (action.kind === 'create')
    await c.client.request('POST', '/scheduled_messages', action.params);
  else await c.client.request('PATCH', `/scheduled_messages/${action.id}`, action.params);
}

/** The compose box's address of a scheduled message or a draft. */
function composeTo(m: ScheduledMessage): ComposeTo {
  return m.type === 'stream'
    ? { kind: 'stream', streamId: m.to as number, topic: m.topic ?? '' }
    : { kind: 'dm', userIds: [...(m.to as number[])].sort((a, b) => a - b) };
}

function narrowOf(c: Controller, to: ComposeTo): Narrow {
  if (to.kind === 'dm') return dmNarrow(to.userIds, c.state.value!.selfId);
  if (to.streamId === null) return { terms: [], near: null };
  return to.topic === '' ? channelNarrow(to.streamId) : topicNarrow(to.streamId, to.topic);
}

/** Edit: the conversation shown, its text in the compose box; sending then changes this one. */
function editScheduled(c: Controller, m: ScheduledMessage): void {
  const to = composeTo(m);
  c.editingScheduled.value = m.scheduled_message_id;
  c.scheduledNotice.value = null;
  c.goAndCompose(narrowOf(c, to), to, m.content, true);
}

/**
 * Send now: the scheduled one deleted, then sent as the compose box sends (echoed, retried if it
 * fails); the conversation's draft, if any, stays.
 */
async function sendNow(c: Controller, m: ScheduledMessage): Promise<string | null> {
  try {
    await c.client.request('DELETE', `/scheduled_messages/${m.scheduled_message_id}`);
  } catch (e) {
    return errorText(e);
  }
  const to = composeTo(m);
  const d = c.draftTo(to);
  const kept = d ? (c.drafts?.get(d) ?? '') : '';
  c.send(to, m.content);
  if (d && kept) c.drafts?.set(d, kept);
  return null;
}

async function deleteScheduled(c: Controller, m: ScheduledMessage): Promise<string | null> {
  const ok = await c.ask({
    title: 'Delete scheduled message?',
    text: `It will not be sent (${when(c, m.scheduled_delivery_timestamp)}), and it cannot be brought back.`,
    action: 'Delete',
    danger: true,
  });
  if (!ok) return null;
  try {
    await c.client.request('DELETE', `/scheduled_messages/${m.scheduled_message_id}`);
    return null;
  } catch (e) {
    return errorText(e);
  }
}

// ---- The views ---------------------------------------------------------------------------------

/** Where a message goes, as a link to that conversation. */
function Destination({ c, to }: { c: Controller; to: ComposeTo }) {
  const s = c.state.value!;
  track(s.rev.channels, s.rev.users);
  const n = narrowOf(c, to);
  const text = destinationText(to, {
    channel: (id) => {
      const known = s.channels.get(id);
      if (known) return { name: known.name, archived: false };
      const archived = s.archived.get(id);
      return archived && { name: archived.channel.name, archived: true };
    },
    topic: (t) => s.topicName(t),
    dm: (ids) => s.dmName(ids),
  });
  return (
    <a
      class="page-dest"
      href={narrowHash(n, s.names())}
      onClick={(e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey) return;
        e.preventDefault();
        c.go(n);
      }}
    >
      <Icon name={to.kind === 'dm' ? 'dm' : 'hash'} />
      {text}
    </a>
  );
}

function Rendered({ html }: { html: string }) {
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (el.current) decorate(el.current);
  }, [html]);
  return <div class="content page-content" ref={el} dangerouslySetInnerHTML={{ __html: html }} />;
}

/**
 * The name of the archived channel a scheduled message goes to, or null (a direct message, a
 * channel not archived, or one the app does not know). The server refuses every message to an
 * archived channel ("Not authorized to send to channel '<name>'"), at its time as sent now, and a
 * new time or new text changes nothing: such a message can only be deleted.
 */
function archivedChannel(c: Controller, m: ScheduledMessage): string | null {
  if (m.type !== 'stream') return null;
  return c.state.value!.archived.get(m.to as number)?.channel.name ?? null;
}

/** #scheduled: the user's scheduled messages, soonest first. */
export function ScheduledView({ c }: { c: Controller }) {
  // The channels' too: archiving (or unarchiving) one changes what its messages offer.
  track(c.scheduled.rev, c.state.value!.rev.channels);
  const list = c.scheduled.all();
  const [errors, setErrors] = useState<Map<number, string>>(new Map());
  const [picking, setPicking] = useState<ScheduledMessage | null>(null);
  const said = (id: number, error: string | null) =>
    setErrors((m) => {
      const next = new Map(m);
      if (error) next.set(id, error);
      else next.delete(id);
      return next;
    });
  const reschedule = async (m: ScheduledMessage, ts: number) => {
    try {
      await c.client.request('PATCH', `/scheduled_messages/${m.scheduled_message_id}`, {
        scheduled_delivery_timestamp: ts,
      });
      said(m.scheduled_message_id, null);
    } catch (e) {
      said(m.scheduled_message_id, errorText(e));
    }
  };
  return (
    <section class="page-view" aria-label="Scheduled messages">
      {list.length === 0 ? (
        <p class="page-empty">
          No scheduled messages. To send one later, choose “Schedule message” in the menu beside the
          compose box’s Send button.
        </p>
      ) : (
        <ul class="page-list">
          {list.map((m) => {
            const id = m.scheduled_message_id;
            const error = errors.get(id);
            const archived = archivedChannel(c, m);
            return (
              <li key={id} class={`page-item${m.failed ? ' failed' : ''}`} data-id={id}>
                <div class="page-item-head">
                  <Destination c={c} to={composeTo(m)} />
                  <span class="page-when">
                    <Icon name="clock" />
                    {when(c, m.scheduled_delivery_timestamp)}
                  </span>
                </div>
                {archived !== null ? (
                  <p class="page-failed">
                    {m.failed ? 'Not sent' : 'Cannot be sent'}: #{archived} is archived, and an
                    archived channel takes no messages. It can only be deleted (copy its text first
                    to keep it).
                  </p>
                ) : (
                  m.failed && (
                    <p class="page-failed">
                      Not sent: the server could not send this message at its time. Edit or
                      reschedule it, or send it now.
                    </p>
                  )
                )}
                <Rendered html={m.rendered_content} />
                {error && (
                  <p class="error-text" role="alert">
                    {error}
                  </p>
                )}
                <div class="page-actions">
                  {archived === null && (
                    <>
                      <button class="btn" type="button" onClick={() => editScheduled(c, m)}>
                        <Icon name="edit" />
                        Edit
                      </button>
                      <button class="btn" type="button" onClick={() => setPicking(m)}>
                        <Icon name="clock" />
                        Reschedule
                      </button>
                      <button
                        class="btn"
                        type="button"
                        onClick={() => void sendNow(c, m).then((e) => said(id, e))}
                      >
                        <Icon name="send" />
                        Send now
                      </button>
                    </>
                  )}
                  <button
                    class="btn danger"
                    type="button"
                    onClick={() => void deleteScheduled(c, m).then((e) => said(id, e))}
                  >
                    <Icon name="trash" />
                    Delete
                  </button>
                </div>
              </li>
            );
          })}
        </ul>
      )}
      {picking && (
        <SchedulePicker
          c={c}
          title="Reschedule message"
          initial={picking.scheduled_delivery_timestamp}
          onPick={(ts) => void reschedule(picking, ts)}
          onClose={() => setPicking(null)}
        />
      )}
    </section>
  );
}

function draftComposeTo(d: Draft): ComposeTo {
  return d.to.type === 'stream'
    ? { kind: 'stream', streamId: d.to.streamId, topic: d.to.topic }
    : { kind: 'dm', userIds: d.to.userIds };
}

/** #drafts: what the user typed and did not send, the most recently edited first. */
export function DraftsView({ c }: { c: Controller }) {
  const drafts = c.drafts;
  if (drafts) track(drafts.rev);
  const list = drafts?.all() ?? [];
  return (
    <section class="page-view" aria-label="Drafts">
      {list.length === 0 ? (
        <p class="page-empty">
          No drafts. What you type and do not send is kept here, one per conversation.
        </p>
      ) : (
        <ul class="page-list">
          {list.map((d) => {
            const to = draftComposeTo(d);
            return (
              <li key={`${d.to.type}:${JSON.stringify(d.to)}`} class="page-item">
                <div class="page-item-head">
                  <Destination c={c} to={to} />
                  <span class="page-when">
                    Last edited{' '}
                    {when(c, Math.floor(d.updated / 1000)).replace(/^(Today|Tomorrow)/, (w) =>
                      w.toLowerCase(),
                    )}
                  </span>
                </div>
                <p class="page-text">{d.content}</p>
                <div class="page-actions">
                  <button
                    class="btn"
                    type="button"
                    onClick={() => c.goAndCompose(narrowOf(c, to), to, d.content)}
                  >
                    <Icon name="edit" />
                    Restore
                  </button>
                  <button class="btn danger" type="button" onClick={() => drafts?.delete(d.to)}>
                    <Icon name="trash" />
                    Delete
                  </button>
                </div>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}

// ---- The sidebar's entries and the compose box's notice ----------------------------------------

/** "Scheduled for …", with a link to the view, above the compose box after scheduling. */
export function ScheduledNotice({ c }: { c: Controller }) {
  const notice = c.scheduledNotice.value;
  if (!notice) return null;
  return (
    <div class="compose-notice scheduled-notice" role="status">
      <p>
        Scheduled for {when(c, notice.timestamp)}. <a href="#scheduled">View scheduled messages</a>
      </p>
      <CloseButton tooltip onClick={() => (c.scheduledNotice.value = null)} />
    </div>
  );
}

/** Above the compose box while it holds a scheduled message: when it goes, and Cancel. */
export function EditingScheduled({ c, onCancel }: { c: Controller; onCancel: () => void }) {
  track(c.scheduled.rev);
  const id = c.editingScheduled.value;
  const m = id === null ? undefined : c.scheduled.get(id);
  if (!m) return null;
  return (
    <div class="compose-notice editing-scheduled" role="status">
      <p>
        Editing a scheduled message ({when(c, m.scheduled_delivery_timestamp)}): sending saves your
        changes, “Schedule message” picks a new time.
      </p>
      <button class="btn" type="button" onClick={onCancel}>
        Cancel editing
      </button>
    </div>
  );
}
