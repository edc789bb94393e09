/**
 * GET /messages and GET /messages/{id} against a seeded history: every narrow operator, negation,
 * combinations, search, anchors and ranges, access rules, and the message object.
 * Reference tests: zerver/tests/test_message_fetch.py, test_narrow.py.
 */
import t from 'tap';
import { assertError, assertSuccess } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import {
  fetchNarrow,
  sendChannelMessage,
  sendDirectMessage,
  type FetchedMessage,
} from '../helpers/messages.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startServer } from '../helpers/server.js';
import { useExternalAvatars } from '../helpers/realms.js';

t.test('narrows over a seeded history', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const id = (n: string) => fx.users[n]!.id;
  const [hamlet, othello, cordelia, iago] = ['hamlet', 'othello', 'cordelia', 'iago'].map(id) as [
    number,
    number,
    number,
    number,
  ];
  const verona = await createChannel(api, 'hamlet', 'Verona', {
    principals: [hamlet, othello, cordelia, iago],
  });
  const denmark = await createChannel(api, 'hamlet', 'Denmark', { principals: [hamlet, iago] });
  const secret = await createChannel(api, 'iago', 'secret', {
    invite_only: true,
    history_public_to_subscribers: false,
    principals: [iago, othello],
  });

  // Hamlet follows only the topics he follows by hand below (not those he starts: the default).
  assertSuccess(
    t,
    await api.patch('hamlet', 'settings', { automatically_follow_topics_policy: 4 }),
  );
  const m1 = await sendChannelMessage(api, 'hamlet', 'Verona', 'lunch', "let's have lunch");
  const m2 = await sendChannelMessage(api, 'othello', 'Verona', 'Lunch', 'pizza with @**Hamlet**');
  const m3 = await sendChannelMessage(
    api,
    'cordelia',
    'Verona',
    '✔ done deal',
    'see https://example.com/page',
  );
  const m4 = await sendChannelMessage(api, 'hamlet', 'Denmark', 'castle', 'the castle is cold');
  const m5 = await sendChannelMessage(api, 'iago', 'secret', 'plans', 'secret plans here');
  const m6 = await sendDirectMessage(api, 'hamlet', [othello], 'psst');
  const m7 = await sendDirectMessage(api, 'hamlet', [othello, cordelia], 'group chat');
  const m8 = await sendDirectMessage(api, 'othello', [hamlet], 'reply');
  const m9 = await sendDirectMessage(api, 'hamlet', [hamlet], 'note to self');
  const m10 = await sendChannelMessage(api, 'iago', 'Verona', '', 'in the empty topic');
  const m11 = await sendChannelMessage(
    api,
    'hamlet',
    'Verona',
    'lunch',
    'menu https://example.com/menu.png',
  );
  assertSuccess(t, await api.post('othello', `messages/${m1}/reactions`, { emoji_name: 'smile' }));
  assertSuccess(
    t,
    await api.post('hamlet', 'messages/flags', { messages: [m2], op: 'add', flag: 'starred' }),
  );
  assertSuccess(
    t,
    await api.post('hamlet', 'messages/flags', {
      messages: [m1, m4, m6, m7, m9, m11],
      op: 'add',
      flag: 'read',
    }),
  );
  // hamlet: unread m2 (mention), m3, m8, m10.

  const ids = async (narrow: unknown[], who = 'hamlet', params = {}) => {
    const r = await fetchNarrow(api, who, narrow, params);
    t.equal(r.status, 200, JSON.stringify(narrow), { body: r.text.slice(0, 500) });
    return r.ids;
  };
  const op = (operator: string, operand: unknown, negated = false) =>
    negated ? { operator, operand, negated } : { operator, operand };

  t.test('everything the user received', async (t) => {
    t.same(await ids([]), [m1, m2, m3, m4, m6, m7, m8, m9, m10, m11]);
    t.same(await ids([], 'othello'), [m1, m2, m3, m5, m6, m7, m8, m10, m11]);
  });

  t.test('channel, channels, topic', async (t) => {
    t.same(await ids([op('channel', 'Verona')]), [m1, m2, m3, m10, m11]);
    t.same(await ids([op('stream', 'verona')]), [m1, m2, m3, m10, m11], 'legacy name, any case');
    t.same(await ids([op('channel', verona)]), [m1, m2, m3, m10, m11], 'by id');
    t.same(await ids([['stream', 'Verona']]), [m1, m2, m3, m10, m11], 'pair form');
    t.same(await ids([op('channel', 'Verona', true)]), [m4, m6, m7, m8, m9], 'negated');
    t.same(await ids([op('channel', 'Verona'), op('topic', 'LUNCH')]), [m1, m2, m11]);
    t.same(await ids([op('channel', 'Verona'), op('topic', 'lunch', true)]), [m3, m10]);
    t.same(await ids([op('channel', 'Verona'), op('topic', 'general chat')]), [m10]);
    t.same(await ids([op('channel', 'Verona'), op('topic', '')]), [m10]);
    t.same(
      await ids([op('channels', 'public')], 'cordelia'),
      [m1, m2, m3, m4, m10, m11],
      'all public channels',
    );
    t.same(await ids([op('channel', 'Denmark')], 'cordelia'), [m4], 'history of a public channel');
    // Topic and muting terms keep that history (the web app asks a channel's view with
    // -is:muted); terms on the user's own flags search only what they received.
    const denmarkWith = (operand: string, negated: boolean) =>
      ids([op('channel', 'Denmark'), op('is', operand, negated)], 'cordelia');
    t.same(await denmarkWith('muted', true), [m4], 'history, without muted topics');
    t.same(await denmarkWith('resolved', true), [m4], 'history, unresolved topics');
    t.same(await denmarkWith('followed', true), [m4], 'history, topics not followed');
    t.same(await denmarkWith('muted', false), [], 'no muted topic yet');
    for (const flag of ['starred', 'unread', 'mentioned', 'alerted'])
      t.same(await denmarkWith(flag, true), [], `-is:${flag}: only what cordelia received`);
    const mute = (visibility_policy: number) =>
      api.post('cordelia', 'user_topics', {
        stream_id: denmark,
        topic: 'castle',
        visibility_policy,
      });
    assertSuccess(t, await mute(1));
    t.same(await denmarkWith('muted', true), [], 'a muted topic left out of the history');
    t.same(await denmarkWith('muted', false), [m4], 'and found by is:muted');
    assertSuccess(t, await mute(0));
  });

  t.test('sender, id, near', async (t) => {
    t.same(await ids([op('sender', 'othello@zulip.com')]), [m2, m8]);
    t.same(await ids([op('sender', othello)]), [m2, m8]);
    t.same(await ids([op('sender', othello, true), op('channel', 'Verona')]), [m1, m3, m10, m11]);
    t.same(await ids([op('id', m4)]), [m4]);
    t.same(await ids([op('id', String(m4))]), [m4]);
    t.same(
      await ids([op('near', String(m4)), op('channel', 'Denmark')]),
      [m4],
      'near does not filter',
    );
  });

  t.test('is:', async (t) => {
    t.same(await ids([op('is', 'dm')]), [m6, m7, m8, m9]);
    t.same(await ids([op('is', 'private')]), [m6, m7, m8, m9]);
    t.same(await ids([op('is', 'dm', true)]), [m1, m2, m3, m4, m10, m11]);
    t.same(await ids([op('is', 'starred')]), [m2]);
    t.same(await ids([op('is', 'unread')]), [m2, m3, m8, m10]);
    t.same(await ids([op('is', 'unread', true)]), [m1, m4, m6, m7, m9, m11]);
    t.same(await ids([op('is', 'mentioned')]), [m2]);
    t.same(await ids([op('is', 'alerted')]), []);
    t.same(await ids([op('is', 'resolved')]), [m3]);
    t.same(await ids([op('is', 'resolved', true), op('channel', 'Verona')]), [m1, m2, m10, m11]);
    assertSuccess(
      t,
      await api.post('hamlet', 'user_topics', {
        stream_id: verona,
        topic: 'lunch',
        visibility_policy: 3,
      }),
    );
    t.same(await ids([op('is', 'followed')]), [m1, m2, m11], 'followed topics (case-insensitive)');
    assertSuccess(
      t,
      await api.post('hamlet', 'user_topics', {
        stream_id: denmark,
        topic: 'castle',
        visibility_policy: 1,
      }),
    );
    t.same(await ids([op('is', 'muted')]), [m4]);
    t.same(await ids([op('in', 'home')]), [m1, m2, m3, m6, m7, m8, m9, m10, m11]);
    t.same(await ids([op('in', 'all')]), [m1, m2, m3, m4, m6, m7, m8, m9, m10, m11]);
    assertSuccess(
      t,
      await api.post('hamlet', 'user_topics', {
        stream_id: denmark,
        topic: 'castle',
        visibility_policy: 0,
      }),
    );
  });

  t.test('in:home: muted channels, and their unmuted or followed topics', async (t) => {
    // The combined feed's narrow (the reference's exclude_stream_and_topic_mutes): a muted
    // topic is left out anywhere; a muted channel is left out but for its topics the user
    // unmuted or follows; direct messages always stay. (Verona's lunch is followed since 'is:'.)
    const sub = async (stream_id: number, property: string, value: boolean) =>
      assertSuccess(
        t,
        await api.post('hamlet', 'users/me/subscriptions/properties', {
          subscription_data: [{ stream_id, property, value }],
        }),
      );
    const policy = async (stream_id: number, topic: string, visibility_policy: number) =>
      assertSuccess(
        t,
        await api.post('hamlet', 'user_topics', { stream_id, topic, visibility_policy }),
      );
    const home = () => ids([op('in', 'home')]);
    const dms = [m6, m7, m8, m9];
    await sub(denmark, 'is_muted', true);
    t.same(await home(), [m1, m2, m3, ...dms, m10, m11], 'a muted channel is left out');
    t.same(await ids([op('in', 'home', true)]), [m4], 'negated: only what muting hides');
    t.same(await ids([op('channel', 'Denmark')]), [m4], 'its own view still shows it');
    t.same(await ids([]), [m1, m2, m3, m4, ...dms, m10, m11], 'no narrow: everything');
    await policy(denmark, 'CASTLE', 2);
    t.same(await home(), [m1, m2, m3, m4, ...dms, m10, m11], 'an unmuted topic of it is shown');
    await policy(denmark, 'castle', 3);
    t.same(await home(), [m1, m2, m3, m4, ...dms, m10, m11], 'so is a followed one');
    await policy(denmark, 'castle', 1);
    t.same(await home(), [m1, m2, m3, ...dms, m10, m11], 'a muted topic of it is not');
    await policy(denmark, 'castle', 0);
    t.same(await home(), [m1, m2, m3, ...dms, m10, m11], 'nor one back to the default');
    await sub(denmark, 'is_muted', false);
    t.same(await home(), [m1, m2, m3, m4, ...dms, m10, m11], 'unmuted: shown again');

    // The legacy property (in_home_view false: muted), with Verona's followed lunch.
    await sub(verona, 'in_home_view', false);
    t.same(await home(), [m1, m2, m4, ...dms, m11], "Verona's other topics left out");
    await policy(verona, 'lunch', 1);
    t.same(await home(), [m4, ...dms], 'its followed topic muted: all of Verona left out');
    await sub(verona, 'in_home_view', true);
    t.same(await home(), [m3, m4, ...dms, m10], 'Verona back, but for its muted topic');
    await policy(verona, 'lunch', 3);
    t.same(await home(), [m1, m2, m3, m4, ...dms, m10, m11]);

    // A muted channel left keeps its muting (the row stays): in:home still leaves out what was
    // received in it, and joining again brings it back muted (the web app relies on both).
    await sub(denmark, 'is_muted', true);
    assertSuccess(
      t,
      await api.delete('hamlet', 'users/me/subscriptions', { subscriptions: ['Denmark'] }),
    );
    t.same(await home(), [m1, m2, m3, ...dms, m10, m11], 'left: still left out');
    assertSuccess(
      t,
      await api.post('hamlet', 'users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }] }),
    );
    t.same(await home(), [m1, m2, m3, ...dms, m10, m11], 'joined again: still muted');
    await sub(denmark, 'is_muted', false);
    t.same(await home(), [m1, m2, m3, m4, ...dms, m10, m11]);
  });

  t.test("a channel's view without its muted topics", async (t) => {
    // As the web app asks for one (narrow.apiNarrow): a muted channel's, its muted topics named.
    t.same(
      await ids([op('channel', 'Verona'), op('topic', 'LUNCH', true), op('topic', 'x', true)]),
      [m3, m10],
    );
    // A channel not muted: -is:muted, its topics muted as such (Verona's lunch, followed since
    // 'is:', muted here and followed again after).
    const policy = async (visibility_policy: number) =>
      assertSuccess(
        t,
        await api.post('hamlet', 'user_topics', {
          stream_id: verona,
          topic: 'lunch',
          visibility_policy,
        }),
      );
    t.same(await ids([op('channel', 'Verona'), op('is', 'muted', true)]), [m1, m2, m3, m10, m11]);
    await policy(1);
    t.same(await ids([op('channel', 'Verona'), op('is', 'muted', true)]), [m3, m10]);
    await policy(3);
  });

  t.test('has:', async (t) => {
    t.same(await ids([op('has', 'link')]), [m3, m11]);
    t.same(await ids([op('has', 'image')]), [m11]);
    t.same(await ids([op('has', 'reaction')]), [m1]);
    t.same(await ids([op('has', 'attachment')]), []);
    t.same(await ids([op('has', 'link', true), op('channel', 'Verona')]), [m1, m2, m10]);
  });

  t.test('dm:, dm-including:, group-pm-with:', async (t) => {
    t.same(await ids([op('dm', [othello])]), [m6, m8]);
    t.same(await ids([op('dm', 'othello@zulip.com')]), [m6, m8]);
    t.same(await ids([op('pm-with', 'othello@zulip.com')]), [m6, m8], 'legacy name');
    t.same(await ids([op('dm', [othello, cordelia])]), [m7]);
    t.same(await ids([op('dm', 'cordelia@zulip.com,othello@zulip.com')]), [m7]);
    t.same(await ids([op('dm', [hamlet])]), [m9], 'with oneself');
    t.same(await ids([op('dm', [id('prospero')])]), [], 'no such conversation');
    t.same(await ids([op('dm', [othello], true), op('is', 'dm')]), [m7, m9]);
    t.same(await ids([op('dm-including', othello)]), [m6, m7, m8]);
    t.same(await ids([op('dm-including', 'cordelia@zulip.com')]), [m7]);
    t.same(
      await ids([op('dm-including', hamlet)]),
      [m6, m7, m8, m9],
      'oneself: every direct message',
    );
    t.same(await ids([op('group-pm-with', othello)]), [m7]);
    t.same(
      await ids([op('dm', [hamlet])], 'othello'),
      [m6, m8],
      'for othello, the conversation with hamlet',
    );
  });

  t.test('search', async (t) => {
    const r = await fetchNarrow(api, 'hamlet', [op('search', 'lunch')]);
    t.same(r.ids, [m1, m2, m11], 'content and topic');
    assertMatchesOpenApi(t, '/messages', 'get', r.body);
    const msgs = r.body.messages as FetchedMessage[];
    t.equal(msgs[0]!.match_content, `<p>let's have <span class="highlight">lunch</span></p>`);
    t.equal(msgs[1]!.match_subject, '<span class="highlight">Lunch</span>');
    t.same(await ids([op('search', 'castl')]), [m4], 'word prefixes');
    t.same(await ids([op('search', 'CASTLE cold')]), [m4], 'all words, any case');
    t.same(await ids([op('search', '"castle is cold"')]), [m4], 'phrase');
    t.same(await ids([op('search', '"cold castle"')]), [], 'phrase order');
    t.same(await ids([op('search', 'lunch'), op('sender', othello)]), [m2]);
    t.same(await ids([op('search', 'lunch', true), op('channel', 'Verona')]), [m3, m10], 'negated');
    t.same(await ids([op('search', 'plans')]), [], 'not in what hamlet can read');
    t.same(await ids([op('search', 'plans')], 'othello'), [m5]);
    t.same(await ids([op('search', '!!!')]), [], 'no words: nothing');
    t.same(
      await ids([op('search', 'pizza'), op('search', 'hamlet')]),
      [m2],
      'several search terms',
    );
  });

  t.test('bad narrows', async (t) => {
    const bad = async (narrow: unknown, msg: string, code = 'BAD_NARROW') => {
      const r = await api.get('hamlet', 'messages', { anchor: 'newest', num_before: 5, narrow });
      assertError(t, r, msg, { code });
    };
    await bad([op('foo', 'bar')], 'Invalid narrow operator: unknown operator foo');
    await bad([op('channel', 'nowhere')], 'Invalid narrow operator: unknown channel nowhere');
    await bad([op('channel', 99999)], 'Invalid narrow operator: unknown channel 99999');
    await bad(
      [op('sender', 'nobody@zulip.com')],
      'Invalid narrow operator: unknown user nobody@zulip.com',
    );
    await bad([op('is', 'weird')], "Invalid narrow operator: unknown 'is' operand weird");
    await bad([op('has', 'cats')], "Invalid narrow operator: unknown 'has' operand cats");
    await bad([op('in', 'out')], "Invalid narrow operator: unknown 'in' operand out");
    await bad(
      [op('channels', 'private')],
      'Invalid narrow operator: unknown channels operand private',
    );
    await bad([op('id', 'abc')], 'Invalid narrow operator: Invalid message ID');
    await bad([op('dm', [99999])], 'Invalid narrow operator: unknown user in [99999]');
    await bad([op('dm', 'x@y.z')], 'Invalid narrow operator: unknown user in x@y.z');
    await bad(
      [op('channel', 'Verona'), op('is', 'dm')],
      'Invalid narrow operator: No message can be both a channel message and direct message',
    );
    await bad('{}', 'narrow is not a list', 'BAD_REQUEST');
    await bad('not json', 'narrow is not valid JSON', 'INVALID_JSON');
    await bad([['a', 'b', 'c']], 'Invalid narrow[0]: element is not a string pair', 'BAD_REQUEST');
    await bad([{ operator: 'channel' }], 'Invalid narrow[0]: operand is missing', 'BAD_REQUEST');
    await bad(
      [{ operator: 'topic', operand: 5 }],
      'narrow[0]["operand"] is not a string',
      'BAD_REQUEST',
    );
    await bad(
      [{ operator: 'search', operand: ' ' }],
      'narrow[0]["operand"] cannot be blank',
      'BAD_REQUEST',
    );
    await bad(
      [{ operator: 'dm', operand: [true] }],
      'narrow[0]["operand"] is not a string or an integer list',
      'BAD_REQUEST',
    );
    await bad(
      [{ operator: 'is', operand: 'dm', negated: 'yes' }],
      'narrow[0]["negated"] is not a boolean',
      'BAD_REQUEST',
    );
  });

  t.test('the message object', async (t) => {
    // The external-avatar behaviour (client_extavatar) is for realms that opted into it.
    await useExternalAvatars(ts.server, ts.fx.realmId);
    t.teardown(() => useExternalAvatars(ts.server, ts.fx.realmId, false));
    const r = await fetchNarrow(api, 'hamlet', [op('channel', 'Verona')], {
      client_extavatar: false,
    });
    assertMatchesOpenApi(t, '/messages', 'get', r.body);
    const byId = new Map((r.body.messages as FetchedMessage[]).map((m) => [m.id, m]));
    const first = byId.get(m1)!;
    t.match(first, {
      id: m1,
      sender_id: hamlet,
      sender_email: 'hamlet@zulip.com',
      sender_full_name: 'Hamlet',
      sender_realm_str: '',
      type: 'stream',
      stream_id: verona,
      display_recipient: 'Verona',
      subject: 'lunch',
      content_type: 'text/html',
      is_me_message: false,
      submessages: [],
      topic_links: [],
      flags: ['read'],
      reactions: [
        {
          emoji_name: 'smile',
          emoji_code: '1f642',
          reaction_type: 'unicode_emoji',
          user_id: othello,
        },
      ],
    });
    t.match(first.avatar_url, /^https:\/\/secure\.gravatar\.com\/avatar\//);
    t.equal(byId.get(m2)!.recipient_id, first.recipient_id, 'one recipient id per channel');
    t.same(byId.get(m2)!.flags, ['starred', 'mentioned']);
    t.equal(byId.get(m10)!.subject, 'general chat', 'the empty topic, for clients without support');
    const allowed = await fetchNarrow(api, 'hamlet', [op('id', m10)], {
      allow_empty_topic_name: true,
    });
    t.equal((allowed.body.messages as FetchedMessage[])[0]!.subject, '');
    const ext = await fetchNarrow(api, 'hamlet', [op('id', m1)]);
    t.equal(
      (ext.body.messages as FetchedMessage[])[0]!.avatar_url,
      null,
      'client_extavatar (default)',
    );

    const dms = await fetchNarrow(api, 'hamlet', [op('dm', [othello])]);
    assertMatchesOpenApi(t, '/messages', 'get', dms.body);
    const dm = (dms.body.messages as FetchedMessage[])[0]!;
    t.same(
      dm.display_recipient,
      [
        { id: hamlet, email: 'hamlet@zulip.com', full_name: 'Hamlet', is_mirror_dummy: false },
        { id: othello, email: 'othello@zulip.com', full_name: 'Othello', is_mirror_dummy: false },
      ].sort((a, b) => a.id - b.id),
    );
    t.equal(dm.type, 'private');
    t.notOk('stream_id' in dm);
    t.equal(
      dm.recipient_id,
      (dms.body.messages as FetchedMessage[])[1]!.recipient_id,
      'both directions, one recipient id',
    );
  });

  t.test('anchors and ranges', async (t) => {
    const get = (params: Record<string, unknown>) => api.get('hamlet', 'messages', params);
    const all = [m1, m2, m3, m4, m6, m7, m8, m9, m10, m11];
    const idsOf = (r: { body: Record<string, unknown> }) =>
      (r.body.messages as FetchedMessage[]).map((m) => m.id);

    let r = await get({ anchor: 'newest', num_before: 3, num_after: 0 });
    t.same(idsOf(r), [m9, m10, m11]);
    t.match(r.body, {
      anchor: 10000000000000000,
      found_anchor: false,
      found_oldest: false,
      found_newest: true,
      history_limited: false,
    });
    r = await get({ anchor: 'oldest', num_before: 0, num_after: 3 });
    t.same(idsOf(r), [m1, m2, m3]);
    t.match(r.body, { anchor: 0, found_oldest: true, found_newest: false });
    r = await get({ anchor: m4, num_before: 2, num_after: 2 });
    t.same(idsOf(r), [m2, m3, m4, m6, m7]);
    t.match(r.body, { anchor: m4, found_anchor: true, found_oldest: false, found_newest: false });
    r = await get({ anchor: m4, num_before: 2, num_after: 0, include_anchor: false });
    t.same(idsOf(r), [m2, m3]);
    t.equal(r.body.found_anchor, false);
    r = await get({ anchor: m4, num_before: 0, num_after: 2, include_anchor: false });
    t.same(idsOf(r), [m6, m7]);
    r = await get({ anchor: m5, num_before: 1, num_after: 1 });
    t.same(idsOf(r), [m4, m6], 'an anchor the user cannot see');
    t.equal(r.body.found_anchor, false);
    r = await get({ anchor: m4, num_before: 100, num_after: 100 });
    t.same(idsOf(r), all);
    t.match(r.body, { found_oldest: true, found_newest: true });
    r = await get({ anchor: m4, num_before: 0, num_after: 0 });
    t.same(idsOf(r), [m4], 'just the anchor');
    r = await get({ anchor: 'first_unread', num_before: 1, num_after: 1 });
    t.same(idsOf(r), [m1, m2, m3], 'first unread is m2');
    t.equal(r.body.anchor, m2);
    r = await get({ use_first_unread_anchor: true, num_before: 0, num_after: 0 });
    t.equal(r.body.anchor, m2, 'legacy use_first_unread_anchor');
    r = await get({
      anchor: 'first_unread',
      num_before: 1,
      num_after: 1,
      narrow: [op('channel', 'Denmark')],
    });
    t.same(idsOf(r), [m4], 'no unread in the narrow: the newest');
    t.equal(r.body.anchor, 10000000000000000);
    r = await get({ anchor: '-5', num_before: 0, num_after: 1 });
    t.same(idsOf(r), [m1], 'negative anchors mean the oldest');

    r = await get({ message_ids: [m4, m1, m5, 99999] });
    const b = assertSuccess(t, r);
    assertMatchesOpenApi(t, '/messages', 'get', b);
    t.same(idsOf(r), [m1, m4], 'the ones that exist and the user may read');
    t.notOk('anchor' in b);
    t.match(b, { found_anchor: false, found_oldest: false, found_newest: false });
    t.same(idsOf(await get({ message_ids: [m1, m2, m6], narrow: [op('channel', 'Verona')] })), [
      m1,
      m2,
    ]);

    assertError(t, await get({ num_before: 1 }), "Missing 'anchor' argument.");
    assertError(t, await get({ anchor: 'soonest', num_before: 1 }), 'Invalid anchor');
    assertError(
      t,
      await get({ anchor: 'newest', num_before: 3000, num_after: 3000 }),
      'Too many messages requested (maximum 5000).',
    );
    assertError(
      t,
      await get({ anchor: 'newest', num_before: 5001 }),
      'Too many messages requested (maximum 5000).',
    );
    assertError(
      t,
      await get({ anchor: m4, num_before: 1, num_after: 1, include_anchor: false }),
      'The anchor can only be excluded at an end of the range',
    );
    assertError(
      t,
      await get({ anchor: 'newest', message_ids: [m1] }),
      'Unsupported parameter combination: num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor',
    );
    assertError(t, await get({ anchor: 'newest', num_before: -1 }), 'num_before is too small');
    assertError(
      t,
      await get({ anchor: 'newest', num_before: 'x' }),
      'num_before is not valid JSON',
      { code: 'INVALID_JSON' },
    );
  });
  t.test('access: protected history, guests, GET /messages/{id}', async (t) => {
    // Hamlet joins the protected-history channel after m5: he sees what he receives from now on.
    assertSuccess(
      t,
      await api.post('iago', 'users/me/subscriptions', {
        subscriptions: [{ name: 'secret' }],
        principals: [hamlet],
      }),
    );
    const m12 = await sendChannelMessage(api, 'iago', 'secret', 'plans', 'new plans');
    t.same(await ids([op('channel', secret)]), [m12]);
    t.same(await ids([op('channel', secret)], 'othello'), [m5, m12]);
    assertError(t, await api.get('hamlet', `messages/${m5}`), 'Invalid message(s)');
    assertMatchesOpenApi(
      t,
      '/messages/{message_id}',
      'get',
      (await api.get('hamlet', `messages/${m5}`)).body,
      { status: '400' },
    );
    assertSuccess(t, await api.get('hamlet', `messages/${m12}`));

    // Guests read only channels they are subscribed to.
    t.same(await ids([op('channel', 'Verona')], 'polonius'), []);
    assertError(t, await api.get('polonius', `messages/${m1}`), 'Invalid message(s)');
    t.same(await ids([op('channels', 'public')], 'polonius'), []);

    // A member reads any public channel's message, with historical flags.
    const res = await api.get('cordelia', `messages/${m4}`);
    const body = assertSuccess(t, res);
    assertMatchesOpenApi(t, '/messages/{message_id}', 'get', body);
    t.equal(body.raw_content, 'the castle is cold');
    const m = body.message as FetchedMessage;
    t.same(m.flags, ['read', 'historical']);
    t.equal(m.display_recipient, 'Denmark');
    t.equal(m.content, '<p>the castle is cold</p>');
    const raw = await api.get('cordelia', `messages/${m4}`, { apply_markdown: false });
    t.equal((raw.body.message as FetchedMessage).content, 'the castle is cold');
    t.equal((raw.body.message as FetchedMessage).content_type, 'text/x-markdown');
    assertError(t, await api.get('cordelia', `messages/${m6}`), 'Invalid message(s)', {});
    assertError(t, await api.get('cordelia', 'messages/99999'), 'Invalid message(s)');
  });
});

t.test(
  'a conversation that does not exist yet matches nothing, with every anchor and flag',
  async (t) => {
    const ts = await startServer(t);
    const { api, fx } = ts;
    await createChannel(api, 'hamlet', 'Verona', {
      principals: [fx.users.hamlet!.id, fx.users.othello!.id],
    });
    await sendChannelMessage(api, 'othello', 'Verona', 'lunch', 'unread for hamlet');
    const noDm = { operator: 'dm', operand: fx.users.cordelia!.email };
    for (const extra of [[], ['unread'], ['starred'], ['private'], ['mentioned']]) {
      const narrow = [noDm, ...extra.map((operand) => ({ operator: 'is', operand }))];
      for (const anchor of ['first_unread', 'newest', 'oldest', '0']) {
        const body = assertSuccess(
          t,
          await api.get('hamlet', 'messages', { anchor, num_before: 5, num_after: 5, narrow }),
        );
        t.same(body.messages, [], `${JSON.stringify(narrow)} from ${anchor}`);
        t.match(body, { found_oldest: true, found_newest: true });
      }
      const flagged = assertSuccess(
        t,
        await api.post('hamlet', 'messages/flags/narrow', {
          anchor: 'oldest',
          num_before: 0,
          num_after: 10,
          narrow,
          op: 'add',
          flag: 'read',
        }),
      );
      t.equal(flagged.processed_count, 0);
    }
  },
);
