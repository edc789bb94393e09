/**
 * Widgets: `/poll` and `/todo` messages get their widget submessage when sent; POST /submessage
 * adds votes, options and struck tasks, checked as the reference checks them; message objects and
 * events carry them; a widget's content cannot be edited; they survive a restart and go with
 * their message. Reference: zerver/tests/test_submessage.py, test_widgets.py.
 */
import t, { type Test } from 'tap';
import { assertError, assertSuccess, type ApiClient } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { events, register } from '../helpers/events.js';
import { sendChannelMessage, sendDirectMessage, type FetchedMessage } from '../helpers/messages.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { TestClock } from '../helpers/clock.js';
import { restartServer, startServer } from '../helpers/server.js';

type Sub = { id: number; message_id: number; sender_id: number; msg_type: string; content: string };

async function fetchOne(t: Test, api: ApiClient, who: string, id: number) {
  const res = await api.get(who, `messages/${id}`);
  const body = assertSuccess(t, res, `GET /messages/${id}`);
  return body.message as FetchedMessage & { submessages: Sub[] };
}

async function fetchMany(t: Test, api: ApiClient, who: string, ids: number[]) {
  const res = await api.get(who, 'messages', { message_ids: ids });
  const body = assertSuccess(t, res, 'GET /messages');
  assertMatchesOpenApi(t, '/messages', 'get', body);
  return body.messages as (FetchedMessage & { submessages: Sub[] })[];
}

const submit = (api: ApiClient, who: string, id: number, content: unknown, msgType = 'widget') =>
  api.post(who, 'submessage', {
    message_id: id,
    msg_type: msgType,
    content: typeof content === 'string' ? content : JSON.stringify(content),
  });

t.test('a poll: sent, voted, added to, fetched, announced, and checked', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const [hamlet, othello] = [fx.users.hamlet!.id, fx.users.othello!.id];
  await createChannel(api, 'hamlet', 'Verona', {
    principals: [hamlet, othello],
    invite_only: true,
  });
  const q = await register(t, api, 'othello', { event_types: ['message', 'submessage'] });

  const poll = await sendChannelMessage(
    api,
    'hamlet',
    'Verona',
    'lunch',
    '/poll Where to eat?\n- Pizza\n* Tacos\n\n  Soup  ',
  );
  const sent = await events(t, api, 'othello', q.queue_id, -1, true);
  const msgEvent = sent.find((e) => e.type === 'message')!;
  const subs = (msgEvent.message as { submessages: Sub[] }).submessages;
  t.equal(subs.length, 1, 'the message event carries the widget');
  t.match(subs[0], { message_id: poll, sender_id: hamlet, msg_type: 'widget' });
  t.same(JSON.parse(subs[0]!.content), {
    widget_type: 'poll',
    extra_data: { question: 'Where to eat?', options: ['Pizza', 'Tacos', 'Soup'] },
  });
  assertMatchesOpenApi(t, '/events', 'get', { result: 'success', msg: '', events: sent });

  // Votes by both, a new option by othello, a vote on it.
  for (const [who, content] of [
    ['hamlet', { type: 'vote', key: 'canned,0', vote: 1 }],
    ['othello', { type: 'vote', key: 'canned,0', vote: 1 }],
    ['othello', { type: 'new_option', option: 'Curry', idx: 1 }],
    ['othello', { type: 'vote', key: `${othello},1`, vote: 1 }],
    ['hamlet', { type: 'question', question: 'Where shall we eat?' }],
  ] as const) {
    assertSuccess(t, await submit(api, who, poll, content), `${who} ${content.type}`);
  }
  const evs = await events(t, api, 'othello', q.queue_id, sent.at(-1)!.id, true);
  t.equal(evs.length, 5, 'one submessage event each');
  assertMatchesOpenApi(t, '/events', 'get', { result: 'success', msg: '', events: evs });
  t.match(evs[2], {
    type: 'submessage',
    msg_type: 'widget',
    message_id: poll,
    sender_id: othello,
    content: JSON.stringify({ type: 'new_option', option: 'Curry', idx: 1 }),
  });
  t.type(evs[2]!.submessage_id, 'number');

  // Fetched: every submessage in id order, the same by id and in a range.
  const one = await fetchOne(t, api, 'othello', poll);
  t.same(
    one.submessages.map((s) => [s.sender_id, s.msg_type]),
    [
      [hamlet, 'widget'],
      [hamlet, 'widget'],
      [othello, 'widget'],
      [othello, 'widget'],
      [othello, 'widget'],
      [hamlet, 'widget'],
    ],
  );
  t.same(
    one.submessages.slice(1).map((s) => s.id),
    evs.map((e) => e.submessage_id),
    'the ids the events named',
  );
  const plain = await sendChannelMessage(api, 'hamlet', 'Verona', 'lunch', 'not a /poll');
  const [a, b] = await fetchMany(t, api, 'hamlet', [poll, plain]);
  t.same(a!.submessages, one.submessages, 'GET /messages writes the same submessages');
  t.same(b!.submessages, [], 'an ordinary message has none');

  // Refusals.
  assertError(
    t,
    await submit(api, 'othello', poll, { type: 'question', question: 'Mine now' }),
    "You can't edit a question unless you are the author.",
  );
  assertError(t, await submit(api, 'hamlet', poll, '{not json'), 'Invalid json for submessage');
  assertError(t, await submit(api, 'hamlet', poll, { type: 'vote' }, 'form'), 'Invalid msg_type');
  assertError(
    t,
    await submit(api, 'hamlet', poll, { type: 'vote', key: 'canned,0', vote: 2 }),
    'Invalid poll data["vote"]',
  );
  assertError(
    t,
    await submit(api, 'hamlet', poll, { type: 'vote', key: 1, vote: 1 }),
    'poll data["key"] is not a string',
  );
  assertError(
    t,
    await submit(api, 'hamlet', poll, { type: 'vote', key: 'x', vote: 1, extra: 1 }),
    'Unexpected arguments: extra',
  );
  assertError(
    t,
    await submit(api, 'hamlet', poll, { type: 'new_option', option: 'x', idx: 1001 }),
    'poll data["idx"] is too large',
  );
  assertError(
    t,
    await submit(api, 'hamlet', poll, { type: 'strike', key: 'x' }),
    'Unknown type for poll data: strike',
  );
  assertError(t, await submit(api, 'hamlet', poll, [1]), 'poll data is not a dict');
  assertError(t, await submit(api, 'hamlet', poll, {}), 'type key is missing from poll data');
  assertError(
    t,
    await submit(api, 'hamlet', poll, 'x'.repeat(10001)),
    'content is too long (limit: 10000 characters)',
  );
  assertError(
    t,
    await submit(api, 'hamlet', plain, { type: 'vote', key: 'canned,0', vote: 1 }),
    'You cannot attach a submessage to this message.',
  );
  // cordelia cannot read the private channel: the message does not exist for her.
  assertError(
    t,
    await submit(api, 'cordelia', poll, { type: 'vote', key: 'canned,0', vote: 1 }),
    'Invalid message(s)',
  );
  assertError(
    t,
    await api.post('hamlet', 'submessage', { message_id: poll, msg_type: 'widget' }),
    "Missing 'content' argument",
    { code: 'REQUEST_VARIABLE_MISSING' },
  );
  assertError(
    t,
    await api.post('hamlet', 'submessage', { message_id: 'x', msg_type: 'widget', content: '{}' }),
    'message_id is not valid JSON',
    { code: 'INVALID_JSON' },
  );
  t.equal((await fetchOne(t, api, 'hamlet', poll)).submessages.length, 6, 'nothing refused kept');

  // The widget's content cannot be edited; its topic can.
  assertError(
    t,
    await api.patch('hamlet', `messages/${poll}`, { content: '/poll Other' }),
    'Widgets cannot be edited.',
  );
  assertSuccess(t, await api.patch('hamlet', `messages/${poll}`, { topic: 'dinner' }));

  // After a restart, the same; deleting the message deletes them.
  await ts.server.close();
  const { api: api2 } = await restartServer(t, ts.dataDir, fx);
  const again = await fetchOne(t, api2, 'othello', poll);
  t.same(again.submessages, one.submessages, 'kept over a restart');
  assertSuccess(t, await submit(api2, 'hamlet', poll, { type: 'vote', key: 'canned,1', vote: 1 }));
  assertSuccess(t, await api2.delete('hamlet', `messages/${poll}`));
  const poll2 = await sendChannelMessage(api2, 'hamlet', 'Verona', 'lunch', '/poll Again?');
  const fresh = await fetchOne(t, api2, 'hamlet', poll2);
  t.equal(fresh.submessages.length, 1);
  t.ok(fresh.submessages[0]!.id > again.submessages.at(-1)!.id, 'ids are never reused');
  assertError(
    t,
    await submit(api2, 'hamlet', poll, { type: 'vote', key: 'canned,1', vote: 1 }),
    'Invalid message(s)',
  );
});

t.test('a to-do list, widget_content, and the bound per message', async (t) => {
  const { api, fx } = await startServer(t);
  const [hamlet, othello] = [fx.users.hamlet!.id, fx.users.othello!.id];
  const todo = await sendDirectMessage(
    api,
    'hamlet',
    [othello],
    '/todo Trip\nTickets: by Friday\n- Hotel\nPack: clothes: warm ones',
  );
  const [m] = await fetchMany(t, api, 'othello', [todo]);
  t.same(JSON.parse(m!.submessages[0]!.content), {
    widget_type: 'todo',
    extra_data: {
      task_list_title: 'Trip',
      tasks: [
        { task: 'Tickets', desc: 'by Friday' },
        { task: 'Hotel', desc: '' },
        { task: 'Pack', desc: 'clothes: warm ones' },
      ],
    },
  });
  const untitled = await sendDirectMessage(api, 'hamlet', [othello], '/todo\nOne\nTwo: 2');
  t.same(JSON.parse((await fetchOne(t, api, 'hamlet', untitled)).submessages[0]!.content), {
    widget_type: 'todo',
    extra_data: {
      task_list_title: '',
      tasks: [
        { task: 'One', desc: '' },
        { task: 'Two', desc: '2' },
      ],
    },
  });
  for (const content of ['/todos list', '/pollster', ' /poll x', 'hello /poll']) {
    const id = await sendDirectMessage(api, 'hamlet', [othello], content);
    t.same((await fetchOne(t, api, 'hamlet', id)).submessages, [], `${content}: no widget`);
  }

  assertSuccess(t, await submit(api, 'othello', todo, { type: 'strike', key: '0,canned' }));
  assertSuccess(
    t,
    await submit(api, 'othello', todo, {
      type: 'new_task',
      key: 3,
      task: 'Passport',
      desc: '',
      completed: false,
    }),
  );
  assertError(
    t,
    await submit(api, 'othello', todo, { type: 'new_task_list_title', title: 'Mine' }),
    "You can't edit the task list title unless you are the author.",
  );
  assertSuccess(t, await submit(api, 'hamlet', todo, { type: 'new_task_list_title', title: 'Go' }));
  assertError(
    t,
    await submit(api, 'othello', todo, { type: 'new_task', key: 4, task: 'x', desc: '' }),
    'completed key is missing from todo data',
  );
  assertError(
    t,
    await submit(api, 'othello', todo, { type: 'vote', key: 'x', vote: 1 }),
    'Unknown type for todo data: vote',
  );
  // cordelia did not receive the direct message.
  assertError(
    t,
    await submit(api, 'cordelia', todo, { type: 'strike', key: '0,canned' }),
    'Invalid message(s)',
  );

  // widget_content on send: a zform, checked as the reference checks it.
  const zform = {
    widget_type: 'zform',
    extra_data: {
      type: 'choices',
      heading: 'Pick one',
      choices: [{ short_name: 'A', long_name: 'Apple', reply: 'apple' }],
    },
  };
  const z = await sendDirectMessage(api, 'hamlet', [othello], 'pick', {
    widget_content: JSON.stringify(zform),
  });
  const zs = (await fetchOne(t, api, 'othello', z)).submessages;
  t.same(JSON.parse(zs[0]!.content), zform);
  t.equal(zs[0]!.sender_id, hamlet);
  const badWidget = (widget: string) =>
    api.post('hamlet', 'messages', {
      type: 'direct',
      to: [othello],
      content: 'x',
      widget_content: widget,
    });
  assertError(t, await badWidget('{{{'), 'Widgets: API programmer sent invalid JSON content');
  assertError(
    t,
    await badWidget(JSON.stringify({ color: 'red' })),
    'Widgets: widget_type is not in widget_content',
  );
  assertError(
    t,
    await badWidget(JSON.stringify({ widget_type: 'poll', extra_data: {} })),
    'Widgets: unknown widget type: poll',
  );
  assertError(
    t,
    await badWidget(
      JSON.stringify({
        widget_type: 'zform',
        extra_data: { type: 'choices', heading: 'h', choices: [{}] },
      }),
    ),
    'Widgets: short_name key is missing from extra_data["choices"][0]',
  );

  // The bound: at most 1000 submessages on a message, its widget included.
  const busy = await sendDirectMessage(api, 'hamlet', [othello], '/poll Busy?\nYes\nNo');
  const vote = { type: 'vote', key: 'canned,0', vote: 1 };
  const statuses: number[] = [];
  for (let i = 1; i < 1000; i += 50) {
    const batch = Array.from({ length: Math.min(50, 1000 - i) }, () =>
      submit(api, 'othello', busy, vote),
    );
    for (const res of await Promise.all(batch)) statuses.push(res.status);
  }
  t.same(new Set(statuses), new Set([200]), '999 votes taken');
  assertError(
    t,
    await submit(api, 'othello', busy, vote),
    'This message has too many submessages (limit: 1000)',
  );
  t.equal((await fetchOne(t, api, 'hamlet', busy)).submessages.length, 1000);
});

t.test('a scheduled /poll is a poll when delivered', async (t) => {
  const clock = new TestClock();
  const { api, fx, server } = await startServer(t, { clock: clock.now });
  const res = await api.post('hamlet', 'scheduled_messages', {
    type: 'direct',
    to: [fx.users.othello!.id],
    content: '/poll Later?\nYes',
    scheduled_delivery_timestamp: clock.seconds + 60,
  });
  const scheduled = assertSuccess(t, res).scheduled_message_id as number;
  clock.advance(61);
  t.equal(await server.context.scheduler.deliverDue(), 1);
  const id = server.store.scheduledMessages.byId(scheduled)!.delivered_message_id!;
  const [m] = await fetchMany(t, api, 'othello', [id]);
  t.same(JSON.parse(m!.submessages[0]!.content), {
    widget_type: 'poll',
    extra_data: { question: 'Later?', options: ['Yes'] },
  });
  t.equal(m!.submessages[0]!.sender_id, fx.users.hamlet!.id);
});
