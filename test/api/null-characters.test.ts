/**
 * NUL characters (U+0000) in what clients send: refused with a 400 by the parameter layer
 * (src/lib/params.ts, "NUL characters"), wherever the text would be stored, whether it came as
 * a raw NUL in a form field, a `\u0000` escape inside a JSON-encoded field or a JSON body, or an
 * object key; and nothing of it stored (no text column of the database holds a NUL afterwards).
 * Fields whose own rule answers a NUL with the reference's words keep them (message content,
 * topics, channel names, full names, emoji, ...).
 */
import t, { type Test } from 'tap';
import { assertError, assertSuccess, type Encoding, type Params } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { startServer, type TestServer } from '../helpers/server.js';

const N = 'a\u0000b';

/** Every text value in the database holding a NUL, as `table.column` (none, after each case). */
function storedNuls(ts: TestServer): string[] {
  const db = ts.server.store.db;
  const found: string[] = [];
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE '%VIRTUAL%'")
    .pluck()
    .all() as string[];
  for (const table of tables) {
    const columns = db.prepare(`PRAGMA table_info("${table}")`).all() as { name: string }[];
    for (const { name } of columns) {
      const hit = db
        .prepare(
          `SELECT 1 FROM "${table}" WHERE typeof("${name}") = 'text' AND instr(CAST("${name}" AS BLOB), x'00') > 0 LIMIT 1`,
        )
        .get();
      if (hit !== undefined) found.push(`${table}.${name}`);
    }
  }
  return found;
}

type Case = {
  label: string;
  who: string;
  method: 'POST' | 'PATCH' | 'DELETE' | 'GET';
  path: string;
  params: Params;
  msg: string;
  encoding?: Encoding;
};

async function refused(t: Test, ts: TestServer, c: Case): Promise<void> {
  await t.test(c.label, async (t) => {
    const res = await ts.api.request(c.method, c.who, c.path, c.params, {
      ...(c.encoding ? { encoding: c.encoding } : {}),
    });
    assertError(t, res, c.msg);
    t.same(storedNuls(ts), [], 'no NUL stored anywhere');
  });
}

t.test('text a client stores: a NUL is refused, and nothing of it is stored', async (t) => {
  const ts = await startServer(t);
  const { api, fx } = ts;
  const hamlet = fx.users.hamlet!.id;
  const ch = await createChannel(api, 'iago', 'nul');
  const group = assertSuccess(
    t,
    await api.post('iago', 'user_groups/create', {
      name: 'g',
      description: 'd',
      members: [hamlet],
    }),
  ).group_id as number;
  const field = assertSuccess(
    t,
    await api.post('iago', 'realm/profile_fields', { name: 'Phone', field_type: 1 }),
  ).id as number;
  const snippet = assertSuccess(
    t,
    await api.post('hamlet', 'saved_snippets', { title: 't', content: 'c' }),
  ).saved_snippet_id as number;
  t.same(storedNuls(ts), [], 'none before');

  const cases: Case[] = [
    // Status text, plain form text with a raw NUL and a JSON body.
    {
      label: 'status text',
      who: 'hamlet',
      method: 'POST',
      path: 'users/me/status',
      params: { status_text: N },
      msg: 'status_text must not contain null bytes',
    },
    {
      label: 'status text, JSON body',
      who: 'hamlet',
      method: 'POST',
      path: 'users/me/status',
      params: { status_text: N },
      encoding: 'json',
      msg: 'status_text must not contain null bytes',
    },
    {
      label: 'saved snippet title',
      who: 'hamlet',
      method: 'POST',
      path: 'saved_snippets',
      params: { title: N, content: 'c' },
      msg: 'title must not contain null bytes',
    },
    {
      label: 'saved snippet content',
      who: 'hamlet',
      method: 'POST',
      path: 'saved_snippets',
      params: { title: 't', content: N },
      msg: 'content must not contain null bytes',
    },
    {
      label: 'saved snippet title, edited',
      who: 'hamlet',
      method: 'PATCH',
      path: `saved_snippets/${snippet}`,
      params: { title: N },
      msg: 'title must not contain null bytes',
    },
    // A `\u0000` escape inside a JSON-encoded list.
    {
      label: 'alert word',
      who: 'hamlet',
      method: 'POST',
      path: 'users/me/alert_words',
      params: { alert_words: ['fine', N] },
      msg: 'alert_words[1] must not contain null bytes',
    },
    {
      label: 'user group name',
      who: 'iago',
      method: 'POST',
      path: 'user_groups/create',
      params: { name: N, description: 'd', members: [hamlet] },
      msg: 'name must not contain null bytes',
    },
    {
      label: 'user group description',
      who: 'iago',
      method: 'POST',
      path: 'user_groups/create',
      params: { name: 'g2', description: N, members: [hamlet] },
      msg: 'description must not contain null bytes',
    },
    {
      label: 'user group name, edited',
      who: 'iago',
      method: 'PATCH',
      path: `user_groups/${group}`,
      params: { name: N },
      msg: 'name must not contain null bytes',
    },
    {
      label: 'user group description, edited',
      who: 'iago',
      method: 'PATCH',
      path: `user_groups/${group}`,
      params: { description: N },
      msg: 'description must not contain null bytes',
    },
    {
      label: 'custom profile field name',
      who: 'iago',
      method: 'POST',
      path: 'realm/profile_fields',
      params: { name: N, field_type: 1 },
      msg: 'name must not contain null bytes',
    },
    {
      label: 'custom profile field hint',
      who: 'iago',
      method: 'POST',
      path: 'realm/profile_fields',
      params: { name: 'Desk', hint: N, field_type: 1 },
      msg: 'hint must not contain null bytes',
    },
    {
      label: "custom profile field's option text",
      who: 'iago',
      method: 'POST',
      path: 'realm/profile_fields',
      params: { name: 'Editor', field_type: 3, field_data: { vim: { text: N, order: '1' } } },
      msg: 'field_data["vim"]["text"] must not contain null bytes',
    },
    {
      label: "custom profile field's option key",
      who: 'iago',
      method: 'POST',
      path: 'realm/profile_fields',
      params: { name: 'Editor', field_type: 3, field_data: { [N]: { text: 'Vim', order: '1' } } },
      msg: 'field_data must not contain null bytes',
    },
    {
      label: 'custom profile field name and hint, edited',
      who: 'iago',
      method: 'PATCH',
      path: `realm/profile_fields/${field}`,
      params: { name: 'Phone', hint: N },
      msg: 'hint must not contain null bytes',
    },
    {
      label: 'custom profile field value',
      who: 'hamlet',
      method: 'PATCH',
      path: 'users/me/profile_data',
      params: { data: [{ id: field, value: N }] },
      msg: 'data[0]["value"] must not contain null bytes',
    },
    {
      label: 'organization name',
      who: 'desdemona',
      method: 'PATCH',
      path: 'realm',
      params: { name: N },
      msg: 'name must not contain null bytes',
    },
    {
      label: 'organization description',
      who: 'desdemona',
      method: 'PATCH',
      path: 'realm',
      params: { description: N },
      msg: 'description must not contain null bytes',
    },
    {
      label: 'channel description',
      who: 'iago',
      method: 'PATCH',
      path: `streams/${ch}`,
      params: { description: N },
      msg: 'description must not contain null bytes',
    },
    {
      label: "a new channel's description",
      who: 'iago',
      method: 'POST',
      path: 'users/me/subscriptions',
      params: { subscriptions: [{ name: 'fresh', description: N }] },
      msg: 'subscriptions[0]["description"] must not contain null bytes',
    },
    {
      label: 'channel folder name',
      who: 'iago',
      method: 'POST',
      path: 'channel_folders/create',
      params: { name: N },
      msg: 'name must not contain null bytes',
    },
    {
      label: "a user topic's topic",
      who: 'hamlet',
      method: 'POST',
      path: 'user_topics',
      params: { stream_id: ch, topic: N, visibility_policy: 1 },
      msg: 'topic must not contain null bytes',
    },
    {
      label: 'code playground name',
      who: 'iago',
      method: 'POST',
      path: 'realm/playgrounds',
      params: { name: N, pygments_language: 'py', url_template: 'https://p.example/{code}' },
      msg: 'name must not contain null bytes',
    },
    {
      label: 'linkifier URL template',
      who: 'iago',
      method: 'POST',
      path: 'realm/filters',
      params: { pattern: '#(?P<id>[0-9]+)', url_template: `https://l.example/${N}/{id}` },
      msg: 'url_template must not contain null bytes',
    },
    {
      label: "an invitation's address",
      who: 'iago',
      method: 'POST',
      path: 'invites',
      params: { invitee_emails: 'a\u0000b@zulip.com', stream_ids: [ch] },
      msg: 'invitee_emails must not contain null bytes',
    },
    {
      label: "a new user's address",
      who: 'iago',
      method: 'POST',
      path: 'users',
      params: { email: 'a\u0000b@zulip.com', password: 'long enough password', full_name: 'New' },
      msg: 'email must not contain null bytes',
    },
    {
      label: "an outgoing webhook's URL",
      who: 'hamlet',
      method: 'POST',
      path: 'bots',
      params: {
        full_name: 'Hook',
        short_name: 'hook',
        bot_type: 3,
        payload_url: `https://h.example/${N}`,
      },
      msg: 'payload_url must not contain null bytes',
    },
  ];
  for (const c of cases) await refused(t, ts, c);

  // The good values are still taken (a `\\u0000` spelled out is six characters, not a NUL).
  assertSuccess(t, await api.post('hamlet', 'users/me/status', { status_text: 'a\\u0000b' }));
  assertSuccess(t, await api.post('hamlet', 'users/me/alert_words', { alert_words: ['a\\u0000'] }));
  t.same(storedNuls(ts), [], 'still none');
});

t.test("fields with their own rule keep the reference's words", async (t) => {
  // These answered so before the parameter layer's check too: it leaves them to their rules.
  const ts = await startServer(t);
  const { api } = ts;
  const ch = await createChannel(api, 'iago', 'nul');
  const msg = await sendChannelMessage(api, 'hamlet', 'nul', 'topic', 'hello');
  const send = { type: 'stream', to: 'nul', topic: 't', content: 'c' };
  const cases: Case[] = [
    {
      label: 'message content',
      who: 'hamlet',
      method: 'POST',
      path: 'messages',
      params: { ...send, content: N },
      msg: 'Message must not contain null bytes',
    },
    {
      label: 'topic',
      who: 'hamlet',
      method: 'POST',
      path: 'messages',
      params: { ...send, topic: N },
      msg: 'Invalid character in topic, at position 2!',
    },
    {
      label: 'topic, as `subject`',
      who: 'hamlet',
      method: 'POST',
      path: 'messages',
      params: { type: 'stream', to: 'nul', subject: N, content: 'c' },
      msg: 'Invalid character in topic, at position 2!',
    },
    {
      label: 'edited content',
      who: 'hamlet',
      method: 'PATCH',
      path: `messages/${msg}`,
      params: { content: N },
      msg: 'Message must not contain null bytes',
    },
    {
      label: 'edited topic',
      who: 'hamlet',
      method: 'PATCH',
      path: `messages/${msg}`,
      params: { topic: N },
      msg: 'Invalid character in topic, at position 2!',
    },
    {
      label: "a draft's topic",
      who: 'hamlet',
      method: 'POST',
      path: 'drafts',
      params: { drafts: [{ type: 'stream', to: [ch], topic: N, content: 'c' }] },
      msg: 'Topic must not contain null bytes',
    },
    {
      label: "a new channel's name",
      who: 'iago',
      method: 'POST',
      path: 'users/me/subscriptions',
      params: { subscriptions: [{ name: N }] },
      msg: 'Invalid character in channel name, at position 2.',
    },
    {
      label: 'a channel renamed',
      who: 'iago',
      method: 'PATCH',
      path: `streams/${ch}`,
      params: { new_name: N },
      msg: 'Invalid character in channel name, at position 2.',
    },
    {
      label: 'full name',
      who: 'hamlet',
      method: 'PATCH',
      path: 'settings',
      params: { full_name: N },
      msg: 'Invalid characters in name!',
    },
    {
      label: 'an emoji reaction',
      who: 'hamlet',
      method: 'POST',
      path: `messages/${msg}/reactions`,
      params: { emoji_name: N },
      msg: "Emoji 'a\u0000b' does not exist",
    },
    {
      label: 'time zone',
      who: 'hamlet',
      method: 'PATCH',
      path: 'settings',
      params: { timezone: N },
      msg: 'timezone is not a recognized time zone',
    },
    {
      label: "a playground's language",
      who: 'iago',
      method: 'POST',
      path: 'realm/playgrounds',
      params: { name: 'p', pygments_language: N, url_template: 'https://p.example/{code}' },
      msg: 'Invalid characters in pygments language',
    },
  ];
  for (const c of cases) await refused(t, ts, c);
});

t.test(
  'a password may hold a NUL: it is only ever hashed, as the reference takes it',
  async (t) => {
    const { api } = await startServer(t);
    const password = 'correct horse\u0000battery staple';
    assertSuccess(
      t,
      await api.post('iago', 'users', {
        email: 'newcomer@zulip.com',
        password,
        full_name: 'Newcomer',
      }),
    );
    const res = await api.post(null, 'fetch_api_key', { username: 'newcomer@zulip.com', password });
    assertSuccess(t, res, 'and logs in with it');
  },
);
