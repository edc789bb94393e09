/**
 * Widgets: messages that are polls, to-do lists or a bot's form, and the submessages that act on
 * them. Reference: lib/widget.py (get_widget_data, the poll and todo parsers), lib/validator.py
 * (check_widget_content, validate_poll_data, validate_todo_data) and views/submessage.py.
 *
 * A message whose content begins with `/poll` or `/todo` gets a first submessage of msg_type
 * `widget` describing it; so does one sent with a valid `widget_content` (a bot's `zform`). Every
 * later submessage is one event of the widget, validated here by the widget's type. Error
 * messages are the reference's (its validators' templates, with their variable names).
 */
import { JsonableError } from './errors.js';
import { parseJson } from './json.js';
import { MAX_MESSAGE_LENGTH } from './limits.js';

/** The only msg_type this server takes for a submessage (the reference's widgets use no other). */
export const SUBMESSAGE_MSG_TYPE = 'widget';

/** Longest `content` of a submessage, and of a send's `widget_content` (characters). */
export const MAX_SUBMESSAGE_CONTENT_LENGTH = MAX_MESSAGE_LENGTH;

/**
 * Most submessages one message can have (its widget's description included). Every vote, unvote,
 * new option or struck task adds one, and each message carries all of its own wherever it is
 * shown, so a message's share of an answer stays bounded. The reference sets no limit.
 */
export const MAX_SUBMESSAGES_PER_MESSAGE = 1000;

/** The largest option index (poll) or task key (to-do list) a submessage may use (MAX_IDX). */
export const MAX_WIDGET_IDX = 1000;

/** What the first submessage of a widget message holds. */
export type WidgetContent = { widget_type: string; extra_data: Record<string, unknown> };

export type PollExtraData = { question: string; options: string[] };
export type TodoExtraData = { task_list_title: string; tasks: { task: string; desc: string }[] };

/** Python's str.splitlines separators (a trailing separator makes no empty last line). */
// eslint-disable-next-line no-control-regex -- Python counts the separators \x1c-\x1e as breaks
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

function splitLines(s: string): string[] {
  const lines = s.split(LINE_BREAK);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** A list item's text: without its bullet (`-` or `*`) and the spaces around it. */
function listItemText(line: string): string {
  return line.trim().replace(/^\s*[-*]?\s*/, '');
}

/** The first line (when not empty) as a title; the non-empty list items of the rest. */
function titleAndItems(content: string): { title: string; items: string[] } {
  const lines = splitLines(content);
  let title = '';
  if (lines.length > 0 && lines[0] !== '') title = lines.shift()!.trim();
  const items: string[] = [];
  for (const line of lines) {
    const text = listItemText(line);
    if (text.length > 0) items.push(text);
  }
  return { title, items };
}

export function parsePoll(rest: string): PollExtraData {
  const { title, items } = titleAndItems(rest);
  return { question: title, options: items };
}

/** Tasks are `name: description` (the first `: ` separates them) or just a name. */
export function parseTodo(rest: string): TodoExtraData {
  const { title, items } = titleAndItems(rest);
  const tasks = items.map((item) => {
    const at = item.indexOf(': ');
    return at < 0
      ? { task: item.trim(), desc: '' }
      : { task: item.slice(0, at).trim(), desc: item.slice(at + 2).trim() };
  });
  return { task_list_title: title, tasks };
}

/**
 * The widget a message's content starts, if any: its first word is `/poll` or `/todo` (the word
 * ends at any whitespace), and the rest of the content is the widget's question or title and its
 * options or tasks.
 */
export function widgetFromContent(content: string): WidgetContent | null {
  const first = content.split(/\s/, 1)[0]!;
  if (!first.startsWith('/')) return null;
  const type = first.slice(1);
  if (type !== 'poll' && type !== 'todo') return null;
  const rest = content.slice(first.length);
  return {
    widget_type: type,
    extra_data: type === 'poll' ? parsePoll(rest) : parseTodo(rest),
  };
}

// ---- the reference's validators -------------------------------------------------------------

/** A validation failure: its message is the API error's, as the reference's ValidationError. */
class WidgetDataError extends Error {}

type Check = (name: string, value: unknown) => void;

const isDict = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const checkString: Check = (name, v) => {
  if (typeof v !== 'string') throw new WidgetDataError(`${name} is not a string`);
};

const checkInt: Check = (name, v) => {
  if (typeof v !== 'number' || !Number.isInteger(v))
    throw new WidgetDataError(`${name} is not an integer`);
};

const checkBool: Check = (name, v) => {
  if (typeof v !== 'boolean') throw new WidgetDataError(`${name} is not a boolean`);
};

const checkIntIn =
  (allowed: readonly number[]): Check =>
  (name, v) => {
    checkInt(name, v);
    if (!allowed.includes(v as number)) throw new WidgetDataError(`Invalid ${name}`);
  };

const checkIntRange =
  (low: number, high: number): Check =>
  (name, v) => {
    checkInt(name, v);
    if ((v as number) < low) throw new WidgetDataError(`${name} is too small`);
    if ((v as number) > high) throw new WidgetDataError(`${name} is too large`);
  };

const checkEquals =
  (expected: string): Check =>
  (name, v) => {
    if (v !== expected)
      throw new WidgetDataError(`${name} != ${expected} (${JSON.stringify(v)} is wrong)`);
  };

const checkList =
  (item: Check): Check =>
  (name, v) => {
    if (!Array.isArray(v)) throw new WidgetDataError(`${name} is not a list`);
    v.forEach((x, i) => item(`${name}[${i}]`, x));
  };

/** A dict with these keys (each checked); `only`: and no others. */
function checkDict(keys: readonly (readonly [string, Check])[], only = false): Check {
  return (name, v) => {
    if (!isDict(v)) throw new WidgetDataError(`${name} is not a dict`);
    for (const [key, check] of keys) {
      if (!(key in v)) throw new WidgetDataError(`${key} key is missing from ${name}`);
      check(`${name}["${key}"]`, v[key]);
    }
    if (only) {
      const known = new Set(keys.map(([k]) => k));
      const extra = Object.keys(v).filter((k) => !known.has(k));
      if (extra.length > 0) throw new WidgetDataError(`Unexpected arguments: ${extra.join(', ')}`);
    }
  };
}

const TYPE_ONLY = checkDict([['type', checkString]]);

const POLL_EVENTS: Record<string, Check> = {
  vote: checkDict(
    [
      ['type', checkString],
      ['key', checkString],
      ['vote', checkIntIn([1, -1])],
    ],
    true,
  ),
  question: checkDict(
    [
      ['type', checkString],
      ['question', checkString],
    ],
    true,
  ),
  new_option: checkDict(
    [
      ['type', checkString],
      ['option', checkString],
      ['idx', checkIntRange(0, MAX_WIDGET_IDX)],
    ],
    true,
  ),
};

const TODO_EVENTS: Record<string, Check> = {
  new_task: checkDict(
    [
      ['type', checkString],
      ['key', checkIntRange(0, MAX_WIDGET_IDX)],
      ['task', checkString],
      ['desc', checkString],
      ['completed', checkBool],
    ],
    true,
  ),
  strike: checkDict(
    [
      ['type', checkString],
      ['key', checkString],
    ],
    true,
  ),
  new_task_list_title: checkDict(
    [
      ['type', checkString],
      ['title', checkString],
    ],
    true,
  ),
};

/** The events only the widget's author may send, and what others are told. */
const AUTHOR_ONLY: Record<string, string> = {
  'poll question': "You can't edit a question unless you are the author.",
  'todo new_task_list_title': "You can't edit the task list title unless you are the author.",
};

/**
 * Checks a submessage's parsed content against its widget's type (poll, todo; any other widget
 * type's events are not checked, as the reference's). Throws a 400 with the reference's message.
 */
export function checkWidgetEvent(widgetType: string, data: unknown, isAuthor: boolean): void {
  const events = widgetType === 'poll' ? POLL_EVENTS : widgetType === 'todo' ? TODO_EVENTS : null;
  if (!events) return;
  const name = `${widgetType} data`;
  try {
    TYPE_ONLY(name, data);
    const type = (data as { type: string }).type;
    const check = Object.hasOwn(events, type) ? events[type] : undefined;
    if (!check) throw new WidgetDataError(`Unknown type for ${name}: ${type}`);
    const denied = AUTHOR_ONLY[`${widgetType} ${type}`];
    if (denied !== undefined && !isAuthor) throw new WidgetDataError(denied);
    check(name, data);
  } catch (err) {
    if (err instanceof WidgetDataError) throw new JsonableError(err.message);
    throw err;
  }
}

const ZFORM_CHOICES = checkDict([
  ['type', checkEquals('choices')],
  ['heading', checkString],
  [
    'choices',
    checkList(
      checkDict([
        ['short_name', checkString],
        ['long_name', checkString],
        ['reply', checkString],
      ]),
    ),
  ],
]);

/**
 * A send's `widget_content` (JSON text): the reference takes only a `zform` of `choices`
 * (buttons that send a reply), from any sender, and refuses anything else with "Widgets: …".
 */
export function parseWidgetContent(text: string): WidgetContent {
  let value: unknown;
  try {
    value = parseJson(text);
  } catch {
    throw new JsonableError('Widgets: API programmer sent invalid JSON content');
  }
  try {
    if (!isDict(value)) throw new WidgetDataError('widget_content is not a dict');
    if (!('widget_type' in value))
      throw new WidgetDataError('widget_type is not in widget_content');
    if (!('extra_data' in value)) throw new WidgetDataError('extra_data is not in widget_content');
    const { widget_type: type, extra_data: extra } = value;
    if (!isDict(extra)) throw new WidgetDataError('extra_data is not a dict');
    if (type !== 'zform') throw new WidgetDataError(`unknown widget type: ${String(type)}`);
    if (!('type' in extra)) throw new WidgetDataError('zform is missing type field');
    if (extra.type !== 'choices')
      throw new WidgetDataError(`unknown zform type: ${String(extra.type)}`);
    ZFORM_CHOICES('extra_data', extra);
    return { widget_type: type, extra_data: extra };
  } catch (err) {
    if (err instanceof WidgetDataError) throw new JsonableError(`Widgets: ${err.message}`);
    throw err;
  }
}

/** The widget type a widget submessage's content names, or null (unparsable, no type). */
export function widgetTypeOf(content: string): string | null {
  try {
    const data = parseJson(content);
    return isDict(data) && typeof data.widget_type === 'string' ? data.widget_type : null;
  } catch {
    return null;
  }
}
