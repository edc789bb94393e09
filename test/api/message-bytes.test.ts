/**
 * GET /messages writes its messages as JSON straight from the rows (src/queries/messages.ts
 * writeMessage, through FetchedMessages and src/lib/json-bytes.ts), beside formatMessage, which
 * builds the objects that JSON.stringify serializes (events, GET /messages/{id}, and the answer
 * wherever the byte path is not taken). The two must give the same bytes, for every kind of
 * message and every format a client can ask for.
 */
import t from 'tap';
import { assertSuccess } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';
import { useExternalAvatars } from '../helpers/realms.js';
import { startServer } from '../helpers/server.js';
import { jsonBytes } from '../../src/lib/json-bytes.js';
import type { NarrowParam } from '../../src/lib/narrow.js';
import {
  FetchedMessages,
  formatFetched,
  LARGER_THAN_MAX_MESSAGE_ID,
  messageQuery,
  resolveNarrow,
} from '../../src/queries/message-fetch.js';
import type { MessageFormat } from '../../src/queries/messages.js';

t.test('messages written from their rows are the bytes of their objects', async (t) => {
  const ts = await startServer(t);
  const { api, fx, server } = ts;
  const id = (n: string) => fx.users[n]!.id;
  const [hamlet, othello, cordelia, iago] = ['hamlet', 'othello', 'cordelia', 'iago'].map(id) as [
    number,
    number,
    number,
    number,
  ];
  await createChannel(api, 'hamlet', 'Verona', { principals: [hamlet, othello, cordelia] });
  await createChannel(api, 'iago', 'Elsinore', { principals: [iago] }); // hamlet not subscribed
  assertSuccess(
    t,
    await api.post('iago', 'realm/filters', {
      pattern: '#(?P<id>[0-9]+)',
      url_template: 'https://tracker.example/{id}',
    }),
  );
  const m1 = await sendChannelMessage(
    api,
    'hamlet',
    'Verona',
    'bug #12 and #13',
    'lunch at **noon**',
  );
  const m2 = await sendChannelMessage(
    api,
    'othello',
    'Verona',
    'naïve “topic” \\ "q"',
    'pizza with @**Hamlet** 😀 é\n\n```\ncode\t"x"\n```',
  );
  await sendChannelMessage(api, 'cordelia', 'Verona', '', 'in the empty topic');
  await sendChannelMessage(api, 'hamlet', 'Verona', 'lunch', '/me waves');
  await sendChannelMessage(api, 'iago', 'Elsinore', 'ghosts', 'lunch in the castle');
  const m6 = await sendDirectMessage(api, 'hamlet', [othello], 'psst, lunch?');
  await sendDirectMessage(api, 'othello', [hamlet, cordelia], 'group <lunch> & "more"');
  await sendDirectMessage(api, 'hamlet', [hamlet], 'note to self');
  // A poll (its widget submessage and a vote) between two messages of the same sender.
  const poll = await sendChannelMessage(api, 'hamlet', 'Verona', 'lunch', '/poll Where?\nHere');
  await sendChannelMessage(api, 'hamlet', 'Verona', 'lunch', 'after the poll');
  assertSuccess(
    t,
    await api.post('othello', 'submessage', {
      message_id: poll,
      msg_type: 'widget',
      content: JSON.stringify({ type: 'vote', key: 'canned,0', vote: 1 }),
    }),
  );
  assertSuccess(t, await api.patch('hamlet', `messages/${m1}`, { content: 'lunch at one' }));
  assertSuccess(t, await api.patch('othello', `messages/${m2}`, { topic: 'moved lunch' }));
  assertSuccess(t, await api.post('hamlet', `messages/${m1}/reactions`, { emoji_name: 'smile' }));
  assertSuccess(t, await api.post('othello', `messages/${m1}/reactions`, { emoji_name: 'zulip' }));
  assertSuccess(t, await api.post('hamlet', `messages/${m6}/reactions`, { emoji_name: 'zulip' }));
  assertSuccess(
    t,
    await api.post('hamlet', 'messages/flags', { messages: [m2], op: 'add', flag: 'starred' }),
  );

  const store = server.store;
  const view = server.context.realms.get(fx.realmId)!.view;
  const user = view.user(hamlet)!;
  const narrows: [string, NarrowParam[]][] = [
    ['everything', []],
    ['a channel', [{ operator: 'channel', operand: 'Verona', negated: false }]],
    [
      'a channel hamlet reads as history',
      [{ operator: 'channel', operand: 'Elsinore', negated: false }],
    ],
    ['a search', [{ operator: 'search', operand: 'lunch', negated: false }]],
    ['direct messages', [{ operator: 'is', operand: 'dm', negated: false }]],
  ];
  const formats: MessageFormat[] = [];
  for (const applyMarkdown of [true, false])
    for (const clientExtAvatar of [true, false])
      for (const allowEmptyTopicName of [true, false])
        for (const dialect of [undefined, 'spec', 'reference'] as const)
          formats.push({
            applyMarkdown,
            clientExtAvatar,
            allowEmptyTopicName,
            ...(dialect ? { dialect } : {}),
          });
  const compare = (label: string) => {
    let compared = 0;
    for (const [name, narrow] of narrows) {
      const resolved = resolveNarrow(view, store, user, narrow);
      const rows = store.messageSearch.messages(messageQuery(view, user, resolved), {
        dir: 'before',
        anchor: LARGER_THAN_MAX_MESSAGE_ID,
        limit: 1000,
      });
      t.ok(rows.length > 0, `${label}, ${name}: ${rows.length} messages`);
      for (const format of formats) {
        const fetched = new FetchedMessages(store, view, rows, format, resolved.search);
        const written = jsonBytes({ messages: fetched });
        const objects = formatFetched(store, view, rows, format, resolved.search);
        const expected = Buffer.from(JSON.stringify({ messages: objects }));
        if (!written || !written.equals(expected)) {
          t.equal(
            written?.toString(),
            expected.toString(),
            `${label}, ${name}, ${JSON.stringify(format)}`,
          );
          return;
        }
        t.equal(
          JSON.stringify({ messages: fetched }),
          expected.toString(),
          'its toJSON: the same text',
        );
        compared++;
      }
    }
    t.equal(compared, narrows.length * formats.length, `${label}: every narrow in every format`);
  };
  compare('default realm');
  await useExternalAvatars(server, fx.realmId);
  assertSuccess(
    t,
    await api.patch('iago', 'realm', { message_edit_history_visibility_policy: 'none' }),
  );
  compare('external avatars, edit history hidden');

  // Over HTTP: the answer as the byte path writes it, and as JSON.stringify writes it (a request
  // with an ignored parameter takes that path), differ only by the ignored parameter's note.
  const params = { anchor: 'newest', num_before: 100, num_after: 0, apply_markdown: false };
  const bytes = await api.get('hamlet', 'messages', params);
  const text = await api.get('hamlet', 'messages', { ...params, no_such_parameter: 1 });
  t.equal(bytes.status, 200);
  t.equal(
    text.text,
    bytes.text.slice(0, -1) + ',"ignored_parameters_unsupported":["no_such_parameter"]}',
  );
});
