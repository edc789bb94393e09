/**
 * web/state/widgets.ts: a poll's and a to-do list's state folded from their submessages, as the
 * reference's web app folds them, and the events the app sends.
 */
import t from 'tap';
import type { Submessage } from '../../src/client/types.js';
import {
  foldWidget,
  newOptionEvent,
  newTaskEvent,
  nextIndex,
  questionEvent,
  strikeEvent,
  titleEvent,
  voteEvent,
  type Poll,
  type TodoList,
} from '../../web/state/widgets.js';

const AUTHOR = 2;
let nextId = 1;
const sub = (sender: number, content: unknown, msgType = 'widget'): Submessage => ({
  id: nextId++,
  message_id: 9,
  sender_id: sender,
  msg_type: msgType,
  content: typeof content === 'string' ? content : JSON.stringify(content),
});
const poll = (question: string, options: string[]) =>
  sub(AUTHOR, { widget_type: 'poll', extra_data: { question, options } });
const todo = (title: string, tasks: { task: string; desc: string }[]) =>
  sub(AUTHOR, { widget_type: 'todo', extra_data: { task_list_title: title, tasks } });

t.test('no widget', (t) => {
  t.equal(foldWidget(undefined, AUTHOR), null);
  t.equal(foldWidget([], AUTHOR), null);
  t.equal(foldWidget([sub(AUTHOR, 'not json')], AUTHOR), null);
  t.equal(foldWidget([sub(AUTHOR, { widget_type: 'poll' })], AUTHOR), null, 'no extra_data');
  const zform = {
    widget_type: 'zform',
    extra_data: { type: 'choices', heading: 'h', choices: [] },
  };
  t.equal(foldWidget([sub(AUTHOR, zform)], AUTHOR), null, 'a form is not drawn as a widget');
  t.equal(
    foldWidget([sub(AUTHOR, { widget_type: 'poll', extra_data: {} }, 'other')], AUTHOR),
    null,
  );
  t.end();
});

t.test('a poll: votes, unvotes, new options, the question', (t) => {
  const subs = [
    poll('Lunch?', ['Pizza', 'Soup']),
    sub(AUTHOR, { type: 'vote', key: 'canned,0', vote: 1 }),
    sub(3, { type: 'vote', key: 'canned,0', vote: 1 }),
    sub(3, { type: 'vote', key: 'canned,0', vote: 1 }), // twice: one vote
    sub(3, { type: 'new_option', option: 'Curry', idx: 1 }),
    sub(4, { type: 'new_option', option: 'Curry again', idx: 1 }), // another key: 4,1
    sub(3, { type: 'new_option', option: 'Not again', idx: 1 }), // 3,1 exists: ignored
    sub(4, { type: 'vote', key: '3,1', vote: 1 }),
    sub(AUTHOR, { type: 'vote', key: 'canned,0', vote: -1 }),
    sub(4, { type: 'vote', key: 'nope', vote: 1 }), // no such option
    sub(3, { type: 'question', question: 'Hijacked?' }), // not the author
    sub(AUTHOR, { type: 'question', question: 'Lunch today?' }),
    sub(3, '{broken'),
    sub(3, { type: 'vote', key: 'canned,1', vote: 2 }), // ill-formed
  ];
  const p = foldWidget(subs, AUTHOR) as Poll;
  t.equal(p.kind, 'poll');
  t.equal(p.question, 'Lunch today?');
  t.same(
    p.options.map((o) => [o.key, o.text, o.voters]),
    [
      ['canned,0', 'Pizza', [3]],
      ['canned,1', 'Soup', []],
      ['3,1', 'Curry', [4]],
      ['4,1', 'Curry again', []],
    ],
  );
  // What the app sends.
  t.same(JSON.parse(voteEvent(p.options[0]!, 3)), { type: 'vote', key: 'canned,0', vote: -1 });
  t.same(JSON.parse(voteEvent(p.options[1]!, 3)), { type: 'vote', key: 'canned,1', vote: 1 });
  t.equal(nextIndex(subs, 3), 2, "one past the user's largest index");
  t.equal(nextIndex(subs, 5), 1, 'from 1');
  t.same(JSON.parse(newOptionEvent(p, ' Salad ', 2)!), {
    type: 'new_option',
    idx: 2,
    option: 'Salad',
  });
  t.equal(newOptionEvent(p, 'Pizza', 2), null, 'an option already there');
  t.equal(newOptionEvent(p, '   ', 2), null, 'empty');
  t.same(JSON.parse(questionEvent(p, 'Dinner?')!), { type: 'question', question: 'Dinner?' });
  t.equal(questionEvent(p, 'Lunch today?'), null, 'unchanged');
  t.equal(questionEvent(p, ''), null, 'empty');
  t.end();
});

t.test('a to-do list: new tasks, strikes, the title', (t) => {
  const subs = [
    todo('Trip', [
      { task: 'Tickets', desc: 'by Friday' },
      { task: 'Hotel', desc: '' },
    ]),
    sub(3, { type: 'strike', key: '0,canned' }),
    sub(3, { type: 'new_task', key: 1, task: 'Passport', desc: 'renew', completed: false }),
    sub(4, { type: 'new_task', key: 1, task: 'Hotel', desc: '', completed: false }), // name taken
    sub(4, { type: 'new_task', key: 1, task: 'Maps', desc: '', completed: true }),
    sub(4, { type: 'strike', key: '1,3' }),
    sub(AUTHOR, { type: 'strike', key: '1,3' }), // struck back
    sub(AUTHOR, { type: 'strike', key: '1,canned' }),
    sub(AUTHOR, { type: 'strike', key: '9,9' }), // no such task
    sub(3, { type: 'new_task_list_title', title: 'Not mine' }),
    sub(AUTHOR, { type: 'new_task_list_title', title: 'Summer trip' }),
  ];
  const l = foldWidget(subs, AUTHOR) as TodoList;
  t.equal(l.kind, 'todo');
  t.equal(l.title, 'Summer trip');
  t.same(
    l.tasks.map((x) => [x.key, x.task, x.desc, x.completed]),
    [
      ['0,canned', 'Tickets', 'by Friday', true],
      ['1,canned', 'Hotel', '', true],
      ['1,3', 'Passport', 'renew', false],
      ['1,4', 'Maps', '', true],
    ],
  );
  t.same(JSON.parse(strikeEvent(l.tasks[2]!)), { type: 'strike', key: '1,3' });
  t.equal(nextIndex(subs, 3), 2);
  t.same(JSON.parse(newTaskEvent(l, ' Bags ', ' two ', 2)!), {
    type: 'new_task',
    key: 2,
    task: 'Bags',
    desc: 'two',
    completed: false,
  });
  t.equal(newTaskEvent(l, 'Maps', '', 2), null, 'a task already there');
  t.same(JSON.parse(titleEvent(l, ' Winter trip ')!), {
    type: 'new_task_list_title',
    title: 'Winter trip',
  });
  t.equal(titleEvent(l, 'Summer trip'), null, 'unchanged');
  t.equal(titleEvent(l, ' '), null, 'empty');
  t.equal(newTaskEvent(l, ' ', 'x', 2), null, 'no name');
  t.end();
});
