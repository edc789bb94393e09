/**
 * Polls and to-do lists: a widget message's state, folded from its submessages (oldest first), as
 * the reference's web app folds them (web/src/poll_data.ts, todo_widget.ts). The first submessage
 * (msg_type `widget`) describes the widget; each later one is an event by its sender:
 *
 * - poll: `vote` (`key`, `vote` 1 or -1; an option that does not exist is ignored),
 *   `new_option` (`option`, `idx`: the option's key is "sender,idx"; a key seen before is
 *   ignored), `question` (honoured from the message's sender only). The description's options
 *   are "canned,0", "canned,1", …
 * - todo: `new_task` (`key`, `task`, `desc`, `completed`: the task's key is "key,sender"; a key
 *   or a task name seen before is ignored), `strike` (`key`: toggles the task), and
 *   `new_task_list_title` (from the message's sender only). The description's tasks are
 *   "0,canned", "1,canned", …
 *
 * Anything unparsable or ill-formed is skipped: a widget draws what it can.
 */
import type { Submessage } from '../../src/client/types.js';

export type PollOption = {
  key: string;
  text: string;
  /** Who voted for it, in the order they did. */
  voters: number[];
};

export type Poll = {
  kind: 'poll';
  question: string;
  options: PollOption[];
};

export type Task = { key: string; task: string; desc: string; completed: boolean };

export type TodoList = { kind: 'todo'; title: string; tasks: Task[] };

export type Widget = Poll | TodoList;

type Obj = Record<string, unknown>;

function parse(text: string): Obj | null {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : null;
  } catch {
    return null;
  }
}

const str = (v: unknown): v is string => typeof v === 'string';
const int = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

function foldPoll(extra: Obj, events: readonly Submessage[], authorId: number): Poll {
  const options = new Map<string, PollOption>();
  const canned = Array.isArray(extra.options) ? extra.options : [];
  canned.forEach((text, i) => {
    if (str(text)) options.set(`canned,${i}`, { key: `canned,${i}`, text, voters: [] });
  });
  let question = str(extra.question) ? extra.question : '';
  for (const sub of events) {
    const d = parse(sub.content);
    if (!d) continue;
    if (d.type === 'vote' && str(d.key) && (d.vote === 1 || d.vote === -1)) {
      const o = options.get(d.key);
      if (!o) continue;
      const has = o.voters.includes(sub.sender_id);
      if (d.vote === 1 && !has) o.voters = [...o.voters, sub.sender_id];
      if (d.vote === -1 && has) o.voters = o.voters.filter((id) => id !== sub.sender_id);
    } else if (d.type === 'new_option' && str(d.option) && int(d.idx)) {
      const key = `${sub.sender_id},${d.idx}`;
      if (!options.has(key)) options.set(key, { key, text: d.option, voters: [] });
    } else if (d.type === 'question' && str(d.question) && sub.sender_id === authorId) {
      question = d.question;
    }
  }
  return { kind: 'poll', question, options: [...options.values()] };
}

function foldTodo(extra: Obj, events: readonly Submessage[], authorId: number): TodoList {
  const tasks = new Map<string, Task>();
  const named = (name: string) => [...tasks.values()].some((t) => t.task === name);
  const canned = Array.isArray(extra.tasks) ? extra.tasks : [];
  canned.forEach((t, i) => {
    const o = typeof t === 'object' && t !== null ? (t as Obj) : {};
    if (str(o.task) && !named(o.task))
      tasks.set(`${i},canned`, {
        key: `${i},canned`,
        task: o.task,
        desc: str(o.desc) ? o.desc : '',
        completed: false,
      });
  });
  let title = str(extra.task_list_title) ? extra.task_list_title : '';
  for (const sub of events) {
    const d = parse(sub.content);
    if (!d) continue;
    if (d.type === 'new_task' && int(d.key) && str(d.task)) {
      const key = `${d.key},${sub.sender_id}`;
      if (tasks.has(key) || named(d.task)) continue;
      tasks.set(key, {
        key,
        task: d.task,
        desc: str(d.desc) ? d.desc : '',
        completed: d.completed === true,
      });
    } else if (d.type === 'strike' && str(d.key)) {
      const t = tasks.get(d.key);
      if (t) tasks.set(d.key, { ...t, completed: !t.completed });
    } else if (d.type === 'new_task_list_title' && str(d.title) && sub.sender_id === authorId) {
      title = d.title;
    }
  }
  return { kind: 'todo', title, tasks: [...tasks.values()] };
}

/**
 * The widget a message is, from its submessages; null for a message that is none (or a widget
 * this app does not draw, such as a bot's form). `authorId`: the message's sender.
 */
export function foldWidget(
  submessages: readonly Submessage[] | undefined,
  authorId: number,
): Widget | null {
  const first = submessages?.[0];
  if (!first || first.msg_type !== 'widget') return null;
  const head = parse(first.content);
  const extra =
    head && typeof head.extra_data === 'object' ? (head.extra_data as Obj | null) : null;
  if (!head || !extra) return null;
  const events = submessages.slice(1).filter((s) => s.msg_type === 'widget');
  if (head.widget_type === 'poll') return foldPoll(extra, events, authorId);
  if (head.widget_type === 'todo') return foldTodo(extra, events, authorId);
  return null;
}

/**
 * The next index this user's new option or task takes: one past the largest they used on this
 * message (so two of theirs never share a key), from 1.
 */
export function nextIndex(submessages: readonly Submessage[] | undefined, selfId: number): number {
  let next = 1;
  for (const s of submessages?.slice(1) ?? []) {
    if (s.sender_id !== selfId) continue;
    const d = parse(s.content);
    const idx = d?.type === 'new_option' ? d.idx : d?.type === 'new_task' ? d.key : undefined;
    if (int(idx) && idx >= next) next = idx + 1;
  }
  return next;
}

/** The submessage content that votes for an option, or takes one's vote back. */
export function voteEvent(option: PollOption, selfId: number): string {
  const vote = option.voters.includes(selfId) ? -1 : 1;
  return JSON.stringify({ type: 'vote', key: option.key, vote });
}

/** The submessage content of a new option, or null when empty or already an option. */
export function newOptionEvent(poll: Poll, text: string, idx: number): string | null {
  const option = text.trim();
  if (option === '' || poll.options.some((o) => o.text === option)) return null;
  return JSON.stringify({ type: 'new_option', idx, option });
}

/** The submessage content of a new question, or null when empty or unchanged. */
export function questionEvent(poll: Poll, text: string): string | null {
  const question = text.trim();
  if (question === '' || question === poll.question) return null;
  return JSON.stringify({ type: 'question', question });
}

/** The submessage content of a new task list title, or null when empty or unchanged. */
export function titleEvent(list: TodoList, text: string): string | null {
  const title = text.trim();
  if (title === '' || title === list.title) return null;
  return JSON.stringify({ type: 'new_task_list_title', title });
}

/** The submessage content of a new task, or null when its name is empty or already a task's. */
export function newTaskEvent(
  list: TodoList,
  task: string,
  desc: string,
  key: number,
): string | null {
  const name = task.trim();
  if (name === '' || list.tasks.some((t) => t.task === name)) return null;
  return JSON.stringify({ type: 'new_task', key, task: name, desc: desc.trim(), completed: false });
}

/** The submessage content that strikes a task, or puts it back. */
export function strikeEvent(task: Task): string {
  return JSON.stringify({ type: 'strike', key: task.key });
}
