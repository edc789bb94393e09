/**
 * A widget message drawn as its widget, in place of its content (as the reference's web app):
 * a poll (its question, its options with their votes and voters, a click votes or takes the vote
 * back, anyone adds an option, the author edits the question) or a to-do list (its tasks with
 * checkboxes that strike them, anyone adds a task). The state is folded from the message's
 * submessages (web/state/widgets.ts); each action is a submessage the server announces to all,
 * this page included, so what is drawn is always what the events said.
 */
import { useState } from 'preact/hooks';
import type { ChatState, StoredMessage } from '../state/chat.js';
import {
  newOptionEvent,
  newTaskEvent,
  nextIndex,
  questionEvent,
  strikeEvent,
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

function PollView({ c, s, m, w }: Props<Poll>) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(w.question);
  const author = m.sender_id === s.selfId;
  const send = (content: string) => c.widgetEvent(m.id, content);
  const total = new Set(w.options.flatMap((o) => o.voters)).size;
  return (
    <div class="widget poll" role="group" aria-label="Poll">
      {editing ? (
        <form
          class="widget-add"
          onSubmit={(e) => {
            e.preventDefault();
            const content = questionEvent(w, draft);
            if (content === null) {
              setEditing(false);
              return;
            }
            void send(content).then((ok) => ok && setEditing(false));
          }}
        >
          <input
            class="field"
            type="text"
            aria-label="Question"
            value={draft}
            maxLength={500}
            onInput={(e) => setDraft(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key !== 'Escape') return;
              e.stopPropagation();
              setEditing(false);
            }}
            ref={(el) => el?.focus()}
          />
          <button class="btn small primary" type="submit" disabled={draft.trim() === ''}>
            Save
          </button>
          <button class="btn small" type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <div class="widget-head">
          <p class="widget-title">{w.question || 'Poll'}</p>
          {author && (
            <button
              class="btn small"
              type="button"
              onClick={() => {
                setDraft(w.question);
                setEditing(true);
              }}
            >
              Edit question
            </button>
          )}
        </div>
      )}
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
      <div class="widget-head">
        <p class="widget-title">{w.title || 'Task list'}</p>
      </div>
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
