/**
 * PATCH /messages/{id} (content edits, topic and channel moves, resolving topics) and
 * GET /messages/{id}/history. Reference tests: zerver/tests/test_message_edit.py,
 * test_message_move_topic.py, test_message_move_stream.py.
 */
import { createHash } from 'node:crypto';
import t from 'tap';
import { StaleNoticesError } from '../../src/lib/errors.js';
import { RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS } from '../../src/lib/notices.js';
import { assertError, assertSuccess, type ApiClient } from '../helpers/api.js';
import { createChannel, eventsSince, systemGroupId } from '../helpers/channels.js';
import { TestClock } from '../helpers/clock.js';
import { events, register } from '../helpers/events.js';
import { sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { upload } from '../helpers/uploads.js';

type Msg = Record<string, unknown>;

function backdate(ts: TestServer, ids: readonly number[], seconds: number): void {
  const stmt = ts.server.store.db.prepare(
    'UPDATE messages SET date_sent = date_sent - ? WHERE id = ?',
  );
  for (const id of ids) stmt.run(seconds, id);
}

async function getMessage(api: ApiClient, who: string, id: number): Promise<Msg> {
  const res = await api.get(who, `messages/${id}`);
  if (res.status !== 200) throw new Error(`GET message ${id}: ${res.text}`);
  return res.body.message as Msg;
}

async function narrowIds(api: ApiClient, who: string, narrow: unknown[]): Promise<number[]> {
  const res = await api.get(who, 'messages', {
    anchor: 'newest',
    num_before: 100,
    num_after: 0,
    narrow: JSON.stringify(narrow),
  });
  if (res.status !== 200) throw new Error(`GET messages: ${res.text}`);
  return (res.body.messages as Msg[]).map((m) => m.id as number);
}

async function setRealm(api: ApiClient, params: Record<string, unknown>): Promise<void> {
  const res = await api.patch('desdemona', 'realm', params);
  if (res.status !== 200) throw new Error(`PATCH /realm: ${res.text}`);
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

t.test('content edit: the message, flags, event audience, search', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const [hamlet, othello, cordelia] = ['hamlet', 'othello', 'cordelia'].map(
    (n) => fx.users[n]!.id,
  ) as [number, number, number];
  await createChannel(api, 'hamlet', 'Verona', { principals: [hamlet, othello] });
  const id = await sendChannelMessage(api, 'hamlet', 'Verona', 'plans', 'first draft');
  const q = await register(t, api, 'othello', { event_types: ['update_message'] });
  const from = ts.events.length;

  const res = await api.patch('hamlet', `messages/${id}`, {
    content: 'second version for @**Othello**',
  });
  const body = assertSuccess(t, res);
  assertMatchesOpenApi(t, '/messages/{message_id}', 'patch', body);
  t.same(body.detached_uploads, [], 'no uploads detached');

  const evs = eventsSince(ts, from).filter((e) => e.event.type === 'update_message');
  t.equal(evs.length, 1, 'one update_message event');
  const ev = evs[0]!;
  t.match(ev.event, {
    type: 'update_message',
    user_id: hamlet,
    message_id: id,
    message_ids: [id],
    rendering_only: false,
    stream_id: ev.event.stream_id,
    stream_name: 'Verona',
    orig_content: 'first draft',
    orig_rendered_content: '<p>first draft</p>',
    content: 'second version for @**Othello**',
    is_me_message: false,
  });
  t.notOk('prev_rendered_content_version' in ev.event, 'removed at feature level 284');
  t.match(ev.event.rendered_content, /user-mention/, 'rendered with the mention');
  t.notOk('propagate_mode' in ev.event, 'no propagate_mode for a content edit');
  t.same([...ev.users].sort(), [hamlet, othello].sort(), 'only the subscribers hear about it');
  t.notOk(ev.users.includes(cordelia), 'cordelia is not told');
  const polled = await events(t, api, 'othello', q.queue_id, -1, true);
  t.equal(polled.length, 1, "othello's queue gets it");
  t.same(polled[0]!.flags, ['mentioned'], "with othello's new flags");
  assertMatchesOpenApi(t, '/events', 'get', { result: 'success', msg: '', events: polled });

  const m = await getMessage(api, 'othello', id);
  t.ok(typeof m.last_edit_timestamp === 'number', 'last_edit_timestamp is set');
  t.notOk('last_moved_timestamp' in m, 'not moved');
  t.match(m.flags, ['mentioned'], 'othello is now mentioned');
  const history = m.edit_history as Msg[];
  t.equal(history.length, 1);
  t.match(history[0], { user_id: hamlet, prev_content: 'first draft' });
  t.notOk('prev_rendered_content_version' in history[0]!, 'internal version not shown');

  // The mention removed again: the flag goes away.
  assertSuccess(t, await api.patch('hamlet', `messages/${id}`, { content: 'third version' }));
  t.notOk(((await getMessage(api, 'othello', id)).flags as string[]).includes('mentioned'));

  // Search follows the content.
  t.same(await narrowIds(api, 'hamlet', [{ operator: 'search', operand: 'third' }]), [id]);
  t.same(await narrowIds(api, 'hamlet', [{ operator: 'search', operand: 'draft' }]), []);

  // An edit to nothing leaves "(deleted)".
  assertSuccess(t, await api.patch('hamlet', `messages/${id}`, { content: '   ' }));
  t.equal((await api.get('hamlet', `messages/${id}`)).body.raw_content, '(deleted)');
});

t.test('content edit: refusals', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!.id;
  const othello = fx.users.othello!.id;
  await createChannel(api, 'hamlet', 'Verona', { principals: [hamlet, othello] });
  const id = await sendChannelMessage(api, 'hamlet', 'Verona', 'plans', 'original');
  const dm = await sendDirectMessage(api, 'hamlet', [othello], 'a secret');

  assertError(t, await api.patch('hamlet', `messages/${id}`, {}), 'Nothing to change');
  assertError(
    t,
    await api.patch('othello', `messages/${id}`, { content: 'mine now' }),
    "You don't have permission to edit this message",
  );
  assertError(
    t,
    await api.patch('cordelia', `messages/${dm}`, { content: 'x' }),
    'Invalid message(s)',
  );
  assertError(
    t,
    await api.patch('hamlet', 'messages/999999', { content: 'x' }),
    'Invalid message(s)',
  );
  assertError(
    t,
    await api.patch('hamlet', `messages/${id}`, { content: 'x', propagate_mode: 'change_all' }),
    'Invalid propagate_mode without topic edit',
  );
  assertError(
    t,
    await api.patch('hamlet', `messages/${id}`, { topic: 'x', propagate_mode: 'sideways' }),
    'Invalid propagate_mode',
  );
  assertError(
    t,
    await api.patch('hamlet', `messages/${id}`, { content: 'x', stream_id: 'seven' }),
    'stream_id is not valid JSON',
    { code: 'INVALID_JSON' },
  );
  assertError(
    t,
    await api.patch('hamlet', `messages/${id}`, { content: 'x', stream_id: '"7"' }),
    'stream_id is not an integer',
  );
  assertError(
    t,
    await api.patch('hamlet', `messages/${id}`, { send_notification_to_old_thread: 'yes' }),
    'send_notification_to_old_thread is not valid JSON',
    { code: 'INVALID_JSON' },
  );
  const other = await createChannel(api, 'hamlet', 'Rome');
  assertError(
    t,
    await api.patch('hamlet', `messages/${id}`, { content: 'x', stream_id: other }),
    'Cannot change message content while changing channel',
  );
  assertError(
    t,
    await api.patch('hamlet', `messages/${dm}`, { topic: 'x' }),
    'Direct messages cannot have topics.',
  );
  assertError(
    t,
    await api.patch('hamlet', `messages/${dm}`, { stream_id: other }),
    'Direct messages cannot be moved to channels.',
  );
  assertError(
    t,
    await api.patch('hamlet', `messages/${id}`, {
      content: 'x',
      prev_content_sha256: sha256('not the content'),
    }),
    "'prev_content_sha256' value does not match the expected value.",
    { code: 'EXPECTATION_MISMATCH' },
  );
  assertSuccess(
    t,
    await api.patch('hamlet', `messages/${id}`, {
      content: 'checked',
      prev_content_sha256: sha256('original'),
    }),
    'a matching hash is accepted',
  );
  assertError(
    t,
    await api.patch('hamlet', `messages/${id}`, { topic: '✔' }),
    'General chat cannot be marked as resolved',
  );

  // Direct messages can be edited by their sender; only the participants hear about it.
  const from = ts.events.length;
  assertSuccess(t, await api.patch('hamlet', `messages/${dm}`, { content: 'a new secret' }));
  const ev = eventsSince(ts, from).find((e) => e.event.type === 'update_message')!;
  t.same([...ev.users].sort(), [hamlet, othello].sort());
  t.notOk('stream_id' in ev.event);

  // The realm turns editing off; then the time limit.
  await setRealm(api, { allow_message_editing: false });
  assertError(
    t,
    await api.patch('hamlet', `messages/${id}`, { content: 'y' }),
    'Your organization has turned off message editing',
  );
  await setRealm(api, { allow_message_editing: true, message_content_edit_limit_seconds: 600 });
  backdate(ts, [id], 700);
  assertError(
    t,
    await api.patch('hamlet', `messages/${id}`, { content: 'y' }),
    'The time limit for editing this message has passed',
  );
  await setRealm(api, { message_content_edit_limit_seconds: 'unlimited' });
  assertSuccess(t, await api.patch('hamlet', `messages/${id}`, { content: 'y' }), 'no limit');

  // Wildcard mentions in a large channel need can_mention_many_users_group.
  const big = Object.values(fx.users).map((u) => u.id);
  const crowd = await createChannel(api, 'desdemona', 'Crowd', { principals: big });
  for (let i = 0; i < 16; i++) {
    const res = await api.post('iago', 'users', {
      email: `extra${i}@zulip.com`,
      password: 'a-long-password-1',
      full_name: `Extra ${i}`,
    });
    if (res.status !== 200) throw new Error(`creating a user: ${res.text}`);
    await api.post('desdemona', 'users/me/subscriptions', {
      subscriptions: [{ name: 'Crowd' }],
      principals: [res.body.user_id],
    });
  }
  const cm = await sendChannelMessage(api, 'hamlet', crowd, 'talk', 'hello');
  await setRealm(api, {
    can_mention_many_users_group: JSON.stringify({ new: systemGroupId(ts, 'role:administrators') }),
  });
  assertError(
    t,
    await api.patch('hamlet', `messages/${cm}`, { content: 'hello @**all**' }),
    'You do not have permission to use channel wildcard mentions in this channel.',
    { code: 'STREAM_WILDCARD_MENTION_NOT_ALLOWED' },
  );
});

t.test('topic moves: propagate modes, history, notices, narrows, policies', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!.id;
  const othello = fx.users.othello!.id;
  const ch = await createChannel(api, 'hamlet', 'Verona', { principals: [hamlet, othello] });
  const ids: number[] = [];
  for (const text of ['one', 'two', 'three', 'four'])
    ids.push(await sendChannelMessage(api, 'hamlet', 'Verona', 'old topic', text));
  assertSuccess(
    t,
    await api.post('othello', 'user_topics', {
      stream_id: ch,
      topic: 'old topic',
      visibility_policy: 3,
    }),
  );

  // change_one
  let from = ts.events.length;
  assertSuccess(
    t,
    await api.patch('othello', `messages/${ids[0]}`, {
      topic: 'side topic',
      propagate_mode: 'change_one',
      send_notification_to_old_thread: false,
      send_notification_to_new_thread: false,
    }),
  );
  let ev = eventsSince(ts, from).find((e) => e.event.type === 'update_message')!;
  t.match(ev.event, {
    message_ids: [ids[0]],
    propagate_mode: 'change_one',
    orig_subject: 'old topic',
    subject: 'side topic',
    topic_links: [],
    stream_id: ch,
    user_id: othello,
  });
  t.notOk('new_stream_id' in ev.event);
  t.notOk('orig_content' in ev.event, 'no content fields for a move');
  t.same(
    eventsSince(ts, from).filter((e) => e.event.type === 'message'),
    [],
    'no notices when asked for none',
  );
  const moved = await getMessage(api, 'hamlet', ids[0]!);
  t.equal(moved.subject, 'side topic');
  t.ok(typeof moved.last_moved_timestamp === 'number');
  t.notOk('last_edit_timestamp' in moved, 'a move is not a content edit');
  t.match(moved.edit_history, [{ prev_topic: 'old topic', topic: 'side topic', user_id: othello }]);

  // change_later from the third message, with notices to both threads.
  from = ts.events.length;
  assertSuccess(
    t,
    await api.patch('hamlet', `messages/${ids[2]}`, {
      topic: 'later topic',
      propagate_mode: 'change_later',
      send_notification_to_old_thread: true,
    }),
  );
  ev = eventsSince(ts, from).find((e) => e.event.type === 'update_message')!;
  t.same(ev.event.message_ids, [ids[2], ids[3]]);
  const notices = eventsSince(ts, from)
    .filter((e) => e.event.type === 'message')
    .map((e) => e.event.message as Msg);
  t.equal(notices.length, 2, 'a notice to the new and to the old topic');
  t.equal(notices[0]!.subject, 'later topic');
  t.match(notices[0]!.content, /2 messages were moved here from/);
  t.equal(notices[1]!.subject, 'old topic');
  t.match(notices[1]!.content, /2 messages were moved from this topic to/);
  t.equal(notices[0]!.sender_full_name, 'Notification Bot');

  // Narrows follow the move.
  t.same(
    await narrowIds(api, 'hamlet', [
      { operator: 'channel', operand: ch },
      { operator: 'topic', operand: 'later topic' },
    ]),
    [ids[2], ids[3], notices[0]!.id],
  );
  t.same(
    await narrowIds(api, 'hamlet', [{ operator: 'search', operand: 'later' }]).then((l) =>
      l.filter((i) => i === ids[2]),
    ),
    [ids[2]],
    'search sees the new topic',
  );

  // change_all moves the rest of the old topic, and the "followed" of othello (set by hand) and
  // of hamlet (who started the topic: src/mutations/auto-follow.ts) with it.
  from = ts.events.length;
  assertSuccess(
    t,
    await api.patch('hamlet', `messages/${ids[1]}`, {
      topic: 'new home',
      propagate_mode: 'change_all',
      send_notification_to_new_thread: true,
    }),
  );
  const policyEvents = eventsSince(ts, from).filter((e) => e.event.type === 'user_topic');
  t.match(
    policyEvents.map((e) => [e.users, e.event.topic_name, e.event.visibility_policy]),
    [
      [[hamlet], 'old topic', 0],
      [[hamlet], 'new home', 3],
      [[othello], 'old topic', 0],
      [[othello], 'new home', 3],
    ],
  );
  const topics = ts.server.store.topics.userTopicsOfUser(othello);
  t.match(topics, [{ topic: 'new home', visibility_policy: 3 }]);
  t.match(
    ts.server.store.topics.userTopicsOfUser(hamlet).filter((u) => u.stream_id === ch),
    [{ topic: 'new home', visibility_policy: 3 }],
    'hamlet follows where his whole topic went (not where part of it went)',
  );
  const newNotice = eventsSince(ts, from).find((e) => e.event.type === 'message')!;
  t.match((newNotice.event.message as Msg).content, /This topic was moved here from/);

  // History after a sequence of edits.
  assertSuccess(t, await api.patch('hamlet', `messages/${ids[1]}`, { content: 'two, revised' }));
  const hist = await api.get('hamlet', `messages/${ids[1]}/history`);
  const hbody = assertSuccess(t, hist);
  assertMatchesOpenApi(t, '/messages/{message_id}/history', 'get', hbody);
  const snaps = hbody.message_history as Msg[];
  t.equal(snaps.length, 3);
  t.same(Object.keys(snaps[0]!).sort(), [
    'content',
    'rendered_content',
    'timestamp',
    'topic',
    'user_id',
  ]);
  t.match(snaps[0], { topic: 'old topic', content: 'two', user_id: hamlet });
  t.match(snaps[1], { topic: 'new home', prev_topic: 'old topic', content: 'two' });
  t.notOk('content_html_diff' in snaps[1]!, 'no diff for a move');
  t.match(snaps[2], {
    topic: 'new home',
    content: 'two, revised',
    prev_content: 'two',
    prev_rendered_content: '<p>two</p>',
  });
  t.match(snaps[2]!.content_html_diff, /<span class="highlight_text_inserted">/);

  // Moving to the empty topic; the history shows its display name unless asked not to.
  assertSuccess(t, await api.patch('hamlet', `messages/${ids[1]}`, { topic: '' }));
  const h2 = (await api.get('hamlet', `messages/${ids[1]}/history`)).body.message_history as Msg[];
  t.equal(h2[3]!.topic, 'general chat');
  const h3 = (
    await api.get('hamlet', `messages/${ids[1]}/history`, { allow_empty_topic_name: true })
  ).body.message_history as Msg[];
  t.equal(h3[3]!.topic, '');

  assertError(t, await api.get('hamlet', 'messages/999999/history'), 'Invalid message(s)');
  // Edit history visibility.
  await setRealm(api, { message_edit_history_visibility_policy: 'none' });
  assertError(
    t,
    await api.get('hamlet', `messages/${ids[1]}/history`),
    'Message edit history is disabled in this organization',
  );
  t.notOk('edit_history' in (await getMessage(api, 'hamlet', ids[1]!)), 'hidden from messages');
});

t.test('undoing a resolve within the grace period deletes its notice', async (t) => {
  const clock = new TestClock();
  const ts = await startServer(t, { clock: clock.now });
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!.id;
  const othello = fx.users.othello!.id;
  await createChannel(api, 'hamlet', 'Verona', { principals: [hamlet, othello] });
  const a = await sendChannelMessage(api, 'othello', 'Verona', 'bug', 'it breaks');
  const resolve = (topic: string) =>
    api.patch('hamlet', `messages/${a}`, { topic, propagate_mode: 'change_all' });
  const botMessages = async () =>
    (
      await api.get('hamlet', 'messages', {
        anchor: 'newest',
        num_before: 100,
        num_after: 0,
        apply_markdown: false,
        narrow: JSON.stringify([{ operator: 'sender', operand: fx.notificationBotId }]),
      })
    ).body.messages as Msg[];

  assertSuccess(t, await resolve('✔ bug'));
  const [resolvedNotice] = await botMessages();
  t.match(resolvedNotice!.content, /has marked this topic as resolved\./);

  // Unresolved at the last second of the grace period: the notice goes, none comes.
  clock.advance(RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS);
  let from = ts.events.length;
  assertSuccess(t, await resolve('bug'));
  let since = eventsSince(ts, from);
  t.same(
    since.filter((e) => e.event.type === 'message'),
    [],
    'no "unresolved" notice',
  );
  const deleted = since.find((e) => e.event.type === 'delete_message');
  t.match(deleted?.event, {
    message_ids: [resolvedNotice!.id],
    message_type: 'stream',
    topic: 'bug',
  });
  t.same([...deleted!.users].sort(), [hamlet, othello].sort(), 'told to who could see it');
  t.same(await botMessages(), [], 'the notice is gone');
  t.equal((await getMessage(api, 'hamlet', a)).subject, 'bug', 'and the topic is unresolved');

  // Resolving again, then unresolving after the grace period: both are told.
  assertSuccess(t, await resolve('✔ bug'));
  clock.advance(RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS + 1);
  from = ts.events.length;
  assertSuccess(t, await resolve('bug'));
  since = eventsSince(ts, from);
  t.notOk(
    since.some((e) => e.event.type === 'delete_message'),
    'nothing deleted',
  );
  t.same(
    (await botMessages()).map((m) => (m.content as string).replace(/^.* has marked/, 'marked')),
    ['marked this topic as resolved.', 'marked this topic as unresolved.'],
  );

  // Only a resolve notice that is the topic's newest message is undone.
  clock.advance(RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS + 1);
  assertSuccess(t, await resolve('✔ bug'));
  await sendChannelMessage(api, 'othello', 'Verona', '✔ bug', 'thanks');
  assertSuccess(t, await resolve('bug'));
  t.equal((await botMessages()).length, 4, 'resolved and unresolved, twice');
});

t.test('move notices: the count written into the rendering, and notices gone stale', async (t) => {
  const ts = await startServer(t);
  const { api, fx, server } = ts;
  const hamlet = fx.users.hamlet!.id;
  const verona = await createChannel(api, 'hamlet', 'Verona', { principals: [hamlet] });
  const ids: number[] = [];
  for (let i = 0; i < 4; i++)
    ids.push(await sendChannelMessage(api, 'hamlet', 'Verona', 'a', `m${i}`));

  let from = ts.events.length;
  assertSuccess(
    t,
    await api.patch('hamlet', `messages/${ids[1]}`, {
      topic: 'b',
      propagate_mode: 'change_later',
      send_notification_to_old_thread: true,
    }),
  );
  const notices = eventsSince(ts, from)
    .filter((e) => e.event.type === 'message')
    .map((e) => e.event.message as Msg);
  t.match(notices[0]!.content, /^<p>3 messages were moved here from <a class="stream-topic"/);
  t.match(notices[1]!.content, /^<p>3 messages were moved from this topic to <a /);
  const source = (
    await api.get('hamlet', `messages/${notices[0]!.id as number}`, { apply_markdown: false })
  ).body.message as Msg;
  t.equal(
    source.content,
    `3 messages were moved here from #**Verona>a** by @_**Hamlet|${hamlet}**.`,
  );
  t.same(
    await narrowIds(api, 'hamlet', [{ operator: 'search', operand: '3 messages' }]),
    [notices[0]!.id, notices[1]!.id].sort((x, y) => (x as number) - (y as number)),
    'indexed with the real count',
  );

  // One message: a link to it in its new place.
  from = ts.events.length;
  assertSuccess(t, await api.patch('hamlet', `messages/${ids[0]}`, { topic: 'c' }));
  const one = eventsSince(ts, from).find((e) => e.event.type === 'message')!.event.message as Msg;
  t.match(
    one.content,
    `<p><a href="#narrow/channel/${verona}-Verona/topic/c/near/${ids[0]}">A message</a> was moved here`,
  );

  // Notices prepared for other facts (a rename in between) are refused, and nothing changes.
  const realm = server.context.realms.get(fx.realmId)!;
  const stale = {
    facts_key: 'prepared before the channel was renamed',
    notices: {},
  };
  await t.rejects(
    realm.ask('message.update', {
      acting_user_id: hamlet,
      message_id: ids[0]!,
      topic: 'd',
      propagate_mode: 'change_one',
      send_notification_to_old_thread: false,
      send_notification_to_new_thread: true,
      notices: stale,
    }),
    new StaleNoticesError(),
  );
  t.equal((await getMessage(api, 'hamlet', ids[0]!)).subject, 'c', 'not moved');
});

t.test('resolving topics', async (t) => {
  const clock = new TestClock();
  const ts = await startServer(t, { clock: clock.now });
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!.id;
  await createChannel(api, 'hamlet', 'Verona', { principals: [hamlet, fx.users.othello!.id] });
  const a = await sendChannelMessage(api, 'othello', 'Verona', 'bug', 'it breaks');
  const b = await sendChannelMessage(api, 'hamlet', 'Verona', 'bug', 'fixed');
  let from = ts.events.length;
  assertSuccess(
    t,
    await api.patch('hamlet', `messages/${b}`, { topic: '✔ bug', propagate_mode: 'change_all' }),
  );
  const msgs = eventsSince(ts, from).filter((e) => e.event.type === 'message');
  t.equal(msgs.length, 1, 'only the resolve notice, no moved-here notice');
  const notice = msgs[0]!.event.message as Msg;
  t.equal(notice.subject, '✔ bug');
  t.match(notice.content, /has marked this topic as resolved\./);
  const moved = await getMessage(api, 'hamlet', a);
  t.equal(moved.subject, '✔ bug');
  t.notOk('last_moved_timestamp' in moved, 'resolving is not a move');
  t.same(await narrowIds(api, 'hamlet', [{ operator: 'is', operand: 'resolved' }]), [
    a,
    b,
    notice.id,
  ]);

  // After the grace period, unresolving is told too (within it, see the next test).
  clock.advance(RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS + 1);
  from = ts.events.length;
  assertSuccess(
    t,
    await api.patch('hamlet', `messages/${b}`, { topic: 'bug', propagate_mode: 'change_all' }),
  );
  const un = eventsSince(ts, from).filter((e) => e.event.type === 'message');
  t.match((un[0]!.event.message as Msg).content, /has marked this topic as unresolved\./);

  // Who may resolve is can_resolve_topics_group, apart from who may move topics.
  await setRealm(api, {
    can_resolve_topics_group: JSON.stringify({ new: systemGroupId(ts, 'role:moderators') }),
  });
  assertError(
    t,
    await api.patch('hamlet', `messages/${b}`, { topic: '✔ bug', propagate_mode: 'change_all' }),
    "You don't have permission to resolve topics in this channel.",
  );
  assertSuccess(
    t,
    await api.patch('shiva', `messages/${b}`, { topic: '✔ bug', propagate_mode: 'change_all' }),
    'a moderator may',
  );
  const e = await sendChannelMessage(api, 'hamlet', 'Verona', '', 'no topic');
  assertError(
    t,
    await api.patch('shiva', `messages/${e}`, { topic: '✔ general chat' }),
    'General chat cannot be marked as resolved',
  );
});

t.test('topic move permissions by role and time limits', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const everyone = Object.values(fx.users).map((u) => u.id);
  await createChannel(api, 'desdemona', 'Verona', { principals: everyone });
  const ids: number[] = [];
  for (let i = 0; i < 5; i++)
    ids.push(await sendChannelMessage(api, 'desdemona', 'Verona', 'topic', `m${i}`));

  await setRealm(api, {
    can_move_messages_between_topics_group: JSON.stringify({
      new: systemGroupId(ts, 'role:moderators'),
    }),
  });
  const matrix: [string, boolean][] = [
    ['desdemona', true],
    ['iago', true],
    ['shiva', true],
    ['hamlet', false],
    ['polonius', false],
  ];
  for (const [who, allowed] of matrix) {
    const res = await api.patch(who, `messages/${ids[4]}`, { topic: `by ${who}` });
    if (allowed) assertSuccess(t, res, `${who} may move topics`);
    else assertError(t, res, "You don't have permission to edit this message");
  }

  await setRealm(api, {
    can_move_messages_between_topics_group: JSON.stringify({
      new: systemGroupId(ts, 'role:members'),
    }),
    move_messages_within_stream_limit_seconds: 3600,
  });
  backdate(ts, ids.slice(0, 2), 7200);
  assertError(
    t,
    await api.patch('hamlet', `messages/${ids[0]}`, { topic: 'late' }),
    "The time limit for editing this message's topic has passed.",
  );
  const res = await api.patch('hamlet', `messages/${ids[2]}`, {
    topic: 'late',
    propagate_mode: 'change_all',
  });
  assertError(
    t,
    res,
    'You only have permission to move the 2/4 most recent messages in this topic.',
    {
      code: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
    },
  );
  t.match(res.body, {
    first_message_id_allowed_to_move: ids[2],
    total_messages_in_topic: 4,
    total_messages_allowed_to_move: 2,
  });
  assertSuccess(
    t,
    await api.patch('shiva', `messages/${ids[0]}`, { topic: 'late', propagate_mode: 'change_all' }),
    'moderators are not subject to the time limit',
  );
  t.equal((await getMessage(api, 'hamlet', ids[1]!)).subject, 'late');
});

t.test('channel moves: permissions, access, events, rows', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const [hamlet, othello, cordelia, iago] = ['hamlet', 'othello', 'cordelia', 'iago'].map(
    (n) => fx.users[n]!.id,
  ) as [number, number, number, number];
  const pub = await createChannel(api, 'hamlet', 'Verona', {
    principals: [hamlet, othello, cordelia],
  });
  const priv = await createChannel(api, 'hamlet', 'Secret', {
    principals: [hamlet, iago],
    invite_only: true,
    history_public_to_subscribers: false,
  });
  const closed = await createChannel(api, 'iago', 'Closed', {
    principals: [iago],
    invite_only: true,
  });
  const ids = [
    await sendChannelMessage(api, 'hamlet', 'Verona', 'plans', 'p1'),
    await sendChannelMessage(api, 'othello', 'Verona', 'plans', 'p2'),
  ];
  assertError(
    t,
    await api.patch('hamlet', `messages/${ids[0]}`, { stream_id: closed }),
    'Invalid channel ID',
  );
  assertError(
    t,
    await api.patch('hamlet', `messages/${ids[0]}`, { stream_id: 424242 }),
    'Invalid channel ID',
  );
  await setRealm(api, {
    can_move_messages_between_channels_group: JSON.stringify({
      new: systemGroupId(ts, 'role:administrators'),
    }),
  });
  assertError(
    t,
    await api.patch('hamlet', `messages/${ids[0]}`, { stream_id: priv }),
    "You don't have permission to move this message",
  );
  await setRealm(api, {
    can_move_messages_between_channels_group: JSON.stringify({
      new: systemGroupId(ts, 'role:members'),
    }),
  });

  const from = ts.events.length;
  const res = await api.patch('hamlet', `messages/${ids[0]}`, {
    stream_id: priv,
    propagate_mode: 'change_all',
    send_notification_to_old_thread: true,
  });
  assertSuccess(t, res);
  const evs = eventsSince(ts, from);
  const del = evs.filter((e) => e.event.type === 'delete_message');
  t.equal(del.length, 1);
  t.same([...del[0]!.users].sort(), [othello, cordelia].sort(), 'those losing access');
  t.match(del[0]!.event, {
    message_ids: ids,
    message_type: 'stream',
    stream_id: pub,
    topic: 'plans',
  });
  const upd = evs.find((e) => e.event.type === 'update_message')!;
  t.match(upd.event, { new_stream_id: priv, stream_id: pub, propagate_mode: 'change_all' });
  t.notOk('subject' in upd.event, 'no subject when only the channel changes');
  t.ok(upd.users.includes(hamlet) && upd.users.includes(iago), 'the new channel hears');
  t.notOk(upd.users.includes(othello) || upd.users.includes(cordelia), 'not those losing access');
  const store = ts.server.store;
  t.equal(store.messages.userFlags(othello, ids[1]!), undefined, 'othello has no row now');
  t.ok(store.messages.userFlags(iago, ids[0]!) !== undefined, 'iago got a row (protected history)');
  const notices = evs.filter((e) => e.event.type === 'message');
  t.equal(notices.length, 2);
  t.notOk(notices[0]!.users.includes(othello), 'the private notice only to its subscribers');
  t.ok(notices[1]!.users.includes(othello), 'the old-thread notice to the public channel');
  assertError(t, await api.get('othello', `messages/${ids[1]}`), 'Invalid message(s)');
  const m = await getMessage(api, 'iago', ids[1]!);
  t.equal(m.stream_id, priv);
  t.match(m.edit_history, [{ prev_stream: pub, stream: priv }]);
  const hist = (await api.get('iago', `messages/${ids[1]}/history`)).body.message_history as Msg[];
  t.match(hist[1], { stream: priv, prev_stream: pub });
  t.same(
    await narrowIds(api, 'iago', [{ operator: 'channel', operand: priv }]).then((l) =>
      l.filter((i) => ids.includes(i)),
    ),
    ids,
  );
});

t.test('detached uploads', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  await createChannel(api, 'hamlet', 'Verona', { principals: [fx.users.hamlet!.id] });
  const up = await upload(api, 'hamlet', [
    { filename: 'notes.txt', data: 'hello', contentType: 'text/plain' },
  ]);
  const url = up.body.url as string;
  const id = await sendChannelMessage(api, 'hamlet', 'Verona', 'files', 'nothing yet');
  assertSuccess(t, await api.patch('hamlet', `messages/${id}`, { content: `[notes](${url})` }));
  const res = await api.patch('hamlet', `messages/${id}`, { content: 'link removed' });
  const body = assertSuccess(t, res);
  assertMatchesOpenApi(t, '/messages/{message_id}', 'patch', body);
  const detached = body.detached_uploads as Msg[];
  t.equal(detached.length, 1);
  t.match(detached[0], {
    name: 'notes.txt',
    path_id: url.slice('/user_uploads/'.length),
    size: 5,
    messages: [],
  });
});
