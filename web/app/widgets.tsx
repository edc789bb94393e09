/**
 * A widget message drawn as its widget, in place of its content (as the reference's web app):
 * a poll (its question, its options with their votes and voters, a click votes or takes the vote
 * back, anyone adds an option, the author edits the question) or a to-do list (its tasks with
 * checkboxes that strike them, anyone adds a task). The state is folded from the message's
 * submessages (web/state/widgets.ts); each action is a submessage the server announces to all,
 * this page included, so what is drawn is always what the events said.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ChatState, StoredMessage } from '../state/chat.js';
import {
  newOptionEvent,
  newTaskEvent,
  nextIndex,
  questionEvent,
  strikeEvent,
  titleEvent,
  voteEvent,
  type Poll,
  type TodoList,
  type Widget,
} from '../state/widgets.js';
import type { Controller } from './controller.js';

type Props<W> = { c: Controller; s: ChatState; m: StoredMessage; w: W };

export function WidgetView({ c, s, m, w }: Props<Widget>) {
  return w.kind === 'poll' ? (
    <PollView c={c} s={s} m={m} w={w} />
  ) : (
    <TodoView c={c} s={s} m={m} w={w} />
  );
}

/**
 * A form of one line of fields that sends what `make` makes of their text (null: nothing to send
 * yet), and is cleared once sent.
 */
function AddForm({
  fields,
  action,
  make,
  send,
}: {
  fields: { label: string; placeholder: string }[];
  action: string;
  make: (texts: string[]) => string | null;
  send: (content: string) => Promise<boolean>;
}) {
  const empty = () => fields.map(() => '');
  const [texts, setTexts] = useState(empty);
  const [busy, setBusy] = useState(false);
  const content = make(texts);
  return (
    <form
      class="widget-add"
      onSubmit={(e) => {
        e.preventDefault();
        if (content === null || busy) return;
        setBusy(true);
        void send(content).then((ok) => {
          setBusy(false);
          if (ok) setTexts(empty());
        });
      }}
    >
      {fields.map((f, i) => (
        <input
          key={f.label}
          class="field"
          type="text"
          aria-label={f.label}
          placeholder={f.placeholder}
          value={texts[i]}
          maxLength={500}
          onInput={(e) => {
            const v = e.currentTarget.value;
            setTexts((now) => now.map((x, j) => (j === i ? v : x)));
          }}
        />
      ))}
      <button class="btn small" type="submit" disabled={content === null || busy}>
        {action}
      </button>
    </form>
  );
}

/**
 * A widget's question or title, and for its author an editor of it: Enter saves, Escape
 * cancels (the focus goes back to the Edit button).
 */
function WidgetHead({
  title,
  fallback,
  what,
  author,
  make,
  send,
}: {
  title: string;
  fallback: string;
  what: 'question' | 'title';
  author: boolean;
  make: (text: string) => string | null;
  send: (content: string) => Promise<boolean>;
}) {
  const [draft, setDraft] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const edit = useRef<HTMLButtonElement>(null);
  const editing = draft !== null;
  const wasEditing = useRef(false);
  const stop = () => setDraft(null);
  // Into the field as it opens; back to the Edit button as it closes.
  useEffect(() => {
    if (editing) input.current?.focus();
    else if (wasEditing.current) edit.current?.focus();
    wasEditing.current = editing;
  }, [editing]);
  const label = what === 'question' ? 'Question' : 'Title';
  if (!editing)
    return (
      <div class="widget-head">
        <p class="widget-title">{title || fallback}</p>
        {author && (
          <button ref={edit} class="btn small" type="button" onClick={() => setDraft(title)}>
            Edit {what}
          </button>
        )}
      </div>
    );
  return (
    <form
      class="widget-add"
      onSubmit={(e) => {
        e.preventDefault();
        const content = make(draft);
        if (content === null) stop();
        else void send(content).then((ok) => ok && stop());
      }}
    >
      <input
        ref={input}
        class="field"
        type="text"
        aria-label={label}
        value={draft}
        maxLength={500}
        onInput={(e) => setDraft(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key !== 'Escape') return;
          e.stopPropagation();
          stop();
        }}
      />
      <button class="btn small primary" type="submit" disabled={draft.trim() === ''}>
        Save
      </button>
      <button class="btn small" type="button" onClick={stop}>
        Cancel
      </button>
    </form>
  );
}

function PollView({ c, s, m, w }: Props<Poll>) {
  const send = (content: string) => c.widgetEvent(m.id, content);
  const total = new Set(w.options.flatMap((o) => o.voters)).size;
  return (
    <div class="widget poll" role="group" aria-label="Poll">
      <WidgetHead
        title={w.question}
        fallback="Poll"
        what="question"
        author={m.sender_id === s.selfId}
        make={(text) => questionEvent(w, text)}
        send={send}
      />
      {w.options.length === 0 && <p class="widget-empty">No options yet: add one below.</p>}
      <ul class="poll-options">
        {w.options.map((o) => {
          const mine = o.voters.includes(s.selfId);
          const names = o.voters.map((id) => s.userName(id));
          const votes = `${o.voters.length} ${o.voters.length === 1 ? 'vote' : 'votes'}`;
          return (
            <li key={o.key} class={mine ? 'poll-option mine' : 'poll-option'}>
              <button
                class="poll-vote"
                type="button"
                aria-pressed={mine}
                title={names.length > 0 ? names.join(', ') : 'No votes yet'}
                onClick={() => void send(voteEvent(o, s.selfId))}
              >
                <span class="poll-count">{o.voters.length}</span>
                <span class="poll-text">{o.text}</span>
                <span class="sr-only"> ({votes})</span>
              </button>
              {names.length > 0 && <span class="poll-voters">{names.join(', ')}</span>}
            </li>
          );
        })}
      </ul>
      <p class="widget-foot">
        {total === 0 ? 'No votes yet' : `${total} ${total === 1 ? 'person' : 'people'} voted`}
      </p>
      <AddForm
        fields={[{ label: 'New option', placeholder: 'New option' }]}
        action="Add option"
        make={([text]) => newOptionEvent(w, text!, nextIndex(m.submessages, s.selfId))}
        send={send}
      />
    </div>
  );
}

function TodoView({ c, s, m, w }: Props<TodoList>) {
  const send = (content: string) => c.widgetEvent(m.id, content);
  return (
    <div class="widget todo" role="group" aria-label="To-do list">
      <WidgetHead
        title={w.title}
        fallback="Task list"
        what="title"
        author={m.sender_id === s.selfId}
        make={(text) => titleEvent(w, text)}
        send={send}
      />
      {w.tasks.length === 0 && <p class="widget-empty">No tasks yet: add one below.</p>}
      <ul class="todo-tasks">
        {w.tasks.map((t) => (
          <li key={t.key} class={t.completed ? 'todo-task done' : 'todo-task'}>
            <label>
              <input
                type="checkbox"
                checked={t.completed}
                onChange={(e) => {
                  // Drawn from the events only: the box follows the strike when it comes back.
                  e.currentTarget.checked = t.completed;
                  void send(strikeEvent(t));
                }}
              />
              <span class="todo-text">
                <span class="todo-name">{t.task}</span>
                {t.desc && <span class="todo-desc">: {t.desc}</span>}
              </span>
            </label>
          </li>
        ))}
      </ul>
      <AddForm
        fields={[
          { label: 'New task', placeholder: 'New task' },
          { label: 'Description', placeholder: 'Description (optional)' },
        ]}
        action="Add task"
        make={([task, desc]) => newTaskEvent(w, task!, desc!, nextIndex(m.submessages, s.selfId))}
        send={send}
      />
    </div>
  );
}
