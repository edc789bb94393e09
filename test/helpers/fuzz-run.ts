/**
 * One fuzz run over a part of ENDPOINTS (the four fuzz-endpoints-* test files split the list so
 * they run in parallel): one server, a realm with something of everything in it (channels, a group, a
 * linkifier, a profile field, drafts, invitations, an upload, queues, messages with a reaction, a
 * bot, a scheduled message, a saved snippet, a code playground, a custom emoji, a channel folder)
 * whose ids and keys the requests use alongside the odd values, so they get past "not found" into
 * the handlers; then every selected endpoint in turn, a health check after each, and at the end no
 * request left in flight.
 */
import type { Test } from 'tap';
import { ENDPOINTS } from '../../src/endpoints/index.js';
import { assertSuccess, basicAuth, rawRequest } from './api.js';
import { until } from './events.js';
import {
  closeConnections,
  currentKeys,
  dbFingerprint,
  fuzzEndpoint,
  fuzzScale,
  fuzzSeed,
  setFuzzSession,
  type RealValues,
} from './fuzz.js';
import { multipartWithFile, tinyPng } from './images.js';
import { sendChannelMessage, sendDirectMessage } from './messages.js';
import { apiOperations } from './openapi.js';
import { startServer, type TestServer } from './server.js';
import { BrowserSession } from './session.js';
import { upload } from './uploads.js';

/**
 * Random requests per endpoint (besides the targeted ones): 40 times CONFAB_FUZZ_RUNS, or
 * CONFAB_FUZZ_REQUESTS.
 */
const RANDOM_REQUESTS_PER_ENDPOINT = /^\d+$/.test(process.env.CONFAB_FUZZ_REQUESTS ?? '')
  ? Number(process.env.CONFAB_FUZZ_REQUESTS)
  : 40 * fuzzScale();

export function runFuzz(t: Test, part: (index: number) => boolean): void {
  t.test('every endpoint answers odd requests well', async (t) => {
    const seed = fuzzSeed();
    const only = process.env.CONFAB_FUZZ_ONLY;
    t.comment(
      `fuzz seed ${seed} (set CONFAB_FUZZ_SEED=${seed} to repeat, CONFAB_FUZZ_ONLY="METHOD /path" to narrow)`,
    );
    const ts = await startServer(t, { heartbeatMs: 20, heartbeatJitterMs: 0 });
    t.teardown(closeConnections);
    const real = await seedState(t, ts);
    const sessions = new Map<string, BrowserSession>();
    await keepSessions(ts, sessions);
    t.equal(sessions.size, 2, "an owner's and a member's browser sessions (under /json/)");
    // Each endpoint's operation in the API description, when it has one (its parameters' schemas).
    const shape = (p: string) => p.replace(/\{[^}]+\}|:[a-z_]+|\*[a-z_]+/g, '*');
    const operations = new Map(
      (apiOperations() ?? []).map((op) => [`${op.method} ${shape(`/api/v1${op.path}`)}`, op]),
    );
    const served = new Set<string>();
    const durations: [string, number][] = [];
    let sent = 0;
    let compared = 0;
    for (let i = 0; i < ENDPOINTS.length; i++) {
      const ep = ENDPOINTS[i]!;
      if (!part(i)) continue;
      if (only !== undefined && !`${ep.method} ${ep.path}`.includes(only)) continue;
      await keepSessions(ts, sessions);
      const fingerprint = dbFingerprint(ts);
      const before = await snapshot(ts);
      const began = performance.now();
      const key = `${ep.method} ${shape(ep.path)}`;
      const op = operations.get(key) ?? null;
      if (op) served.add(key);
      sent += (await fuzzEndpoint(t, ts, ep, seed, RANDOM_REQUESTS_PER_ENDPOINT, real, op)).sent;
      if (dbFingerprint(ts) === fingerprint) {
        // Nothing was stored: the in-memory read model must not have moved either.
        compared++;
        const after = await snapshot(ts);
        if (JSON.stringify(after) !== JSON.stringify(before)) {
          t.same(after, before, `${ep.method} ${ep.path}: the register snapshot is unchanged`);
        }
      }
      await restoreFixtures(t, ts);
      durations.push([`${ep.method} ${ep.path}`, performance.now() - began]);
      const health = await ts.api.get(null, 'server_settings');
      const me = await ts.api.get(
        { ...ts.fx.users.hamlet!, ...currentUser(ts, 'hamlet') },
        'users/me',
      );
      if (health.status !== 200 || me.status !== 200) {
        t.fail(
          `after ${ep.method} ${ep.path} the server no longer answers well: ${health.status} ${me.status}`,
        );
        return;
      }
    }
    t.comment(`${compared} endpoints changed nothing stored; their register snapshots compared`);
    t.comment(
      `${served.size} of the API description's ${operations.size} operations fuzzed here ` +
        '(the other fuzz-endpoints files fuzz the rest of those Confab serves)',
    );
    const slowest = durations.sort((a, b) => b[1] - a[1]).slice(0, 5);
    t.comment(`slowest: ${slowest.map(([e, ms]) => `${e} ${Math.round(ms)} ms`).join(', ')}`);
    await until(() => ts.server.inflight === 0, 'every request has left');
    t.equal(ts.server.inflight, 0, `no request left in flight after ${sent} requests`);
    const integrity = ts.server.store.db.prepare('PRAGMA integrity_check').pluck().all();
    t.same(integrity, ['ok'], 'PRAGMA integrity_check: ok');
  });
}

/**
 * Puts the fixture users back as they were (active, same role) after an endpoint's requests, so
 * the next endpoint is fuzzed as every role again; done through the realm actor as an owner.
 */
export async function restoreFixtures(t: Test, ts: TestServer): Promise<void> {
  const { realms } = ts.server.context;
  const store = ts.server.store;
  const realm = realms.get(ts.fx.realmId)!;
  if (realm.view.deactivated) await realm.ask('realm.reactivate', {});
  const owner = realm.view.activeUsers().find((u) => u.role === 100 && !u.is_bot);
  if (!owner) {
    t.fail('no active owner left');
    return;
  }
  for (const u of Object.values(ts.fx.users)) {
    const row = store.users.byId(u.id)!;
    if (!row.is_active) {
      await realm.ask('user.reactivate', { acting_user_id: owner.id, user_id: u.id });
    }
    if (row.role !== u.role) {
      await realm.ask('user.update', { acting_user_id: owner.id, user_id: u.id, role: u.role });
    }
  }
}

/** Creates one of most things through the API and returns their ids and keys, by parameter name. */
/**
 * The browser sessions the `session` identity uses (an owner's and a member's), logged in again
 * when an endpoint ended one (a deactivation, a role change undone by restoreFixtures).
 */
async function keepSessions(ts: TestServer, sessions: Map<string, BrowserSession>): Promise<void> {
  for (const name of ['desdemona', 'hamlet']) {
    const held = sessions.get(name);
    if (held && (await held.get('session')).status === 200) continue;
    const u = ts.fx.users[name]!;
    const { session } = await BrowserSession.login(ts.url, u.email, u.password);
    if (session) sessions.set(name, session);
    else sessions.delete(name);
    setFuzzSession(name, session);
  }
}

async function seedState(t: Test, ts: TestServer): Promise<RealValues> {
  const { api, fx, server } = ts;
  const ok = async (p: ReturnType<typeof api.post>, what: string) =>
    assertSuccess(t, await p, `setup: ${what}`);
  await ok(
    api.post('desdemona', 'users/me/subscriptions', {
      subscriptions: [{ name: 'fuzz public' }, { name: 'fuzz other' }],
      principals: [fx.users.hamlet!.id, fx.users.polonius!.id],
    }),
    'public channels',
  );
  await ok(
    api.post('iago', 'users/me/subscriptions', {
      subscriptions: [{ name: 'fuzz private' }],
      invite_only: true,
    }),
    'a private channel',
  );
  const channels = server.store.channels.byRealm(fx.realmId).map((c) => String(c.id));
  const group = await ok(
    api.post('desdemona', 'user_groups/create', {
      name: 'fuzzers',
      description: 'a group',
      members: [fx.users.hamlet!.id],
    }),
    'a user group',
  );
  const linkifier = await ok(
    api.post('desdemona', 'realm/filters', {
      pattern: '#(?P<id>[0-9]+)',
      url_template: 'https://example.com/{id}',
    }),
    'a linkifier',
  );
  const field = await ok(
    api.post('desdemona', 'realm/profile_fields', { name: 'Phone', field_type: 1 }),
    'a profile field',
  );
  const drafts = await ok(
    api.post('hamlet', 'drafts', {
      drafts: [
        { type: 'stream', to: [Number(channels[0])], topic: 't', content: 'x', timestamp: 1 },
      ],
    }),
    'a draft',
  );
  const multiuse = await ok(api.post('desdemona', 'invites/multiuse', {}), 'a reusable invitation');
  await ok(
    api.post('desdemona', 'invites', {
      invitee_emails: 'newcomer@example.com',
      stream_ids: [Number(channels[0])],
    }),
    'an e-mail invitation',
  );
  const invites = (await ok(api.get('desdemona', 'invites'), 'invitations')).invites as {
    id: number;
    is_multiuse: boolean;
    link_url?: string;
  }[];
  const keys = [
    String(multiuse.invite_link).split('/').filter(Boolean).pop()!,
    ...invites.map(
      (i) =>
        String(i.link_url ?? '')
          .split('/')
          .filter(Boolean)
          .pop() ?? '',
    ),
  ].filter((k) => k !== '');
  const up = await ok(
    upload(api, 'hamlet', [{ filename: 'notes.txt', data: 'hello', contentType: 'text/plain' }]),
    'an upload',
  );
  const url = String(up.url);
  const pathId = url.replace(/^\/user_uploads\//, '');
  const [realmIdStr, ...rest] = pathId.split('/');
  const temporary = await api.get('hamlet', `user_uploads/${pathId}`);
  const tempUrl = temporary.body.url;
  const token = (typeof tempUrl === 'string' ? tempUrl : '').split('/')[3] ?? '';
  const queues: string[] = [];
  for (const who of ['desdemona', 'hamlet', 'polonius']) {
    queues.push(String((await ok(api.post(who, 'register', {}), 'a queue')).queue_id));
  }
  await ok(api.post('hamlet', 'users/me/alert_words', { alert_words: ['fuzz'] }), 'an alert word');
  const attachments = (await ok(api.get('hamlet', 'attachments'), 'attachments')).attachments as {
    id: number;
  }[];
  // Messages and the things hung on them, so the message endpoints get past "not found".
  const hamletId = fx.users.hamlet!.id;
  const poloniusId = fx.users.polonius!.id;
  const messageIds = [
    await sendChannelMessage(api, 'hamlet', 'fuzz public', 'fuzz topic', 'a **message** #1'),
    await sendChannelMessage(api, 'desdemona', 'fuzz public', 'fuzz topic', 'another'),
    await sendChannelMessage(api, 'iago', 'fuzz private', 'secret', 'a private one'),
    await sendDirectMessage(api, 'hamlet', [poloniusId], 'a direct message'),
  ].map(String);
  await ok(
    api.post('hamlet', `messages/${messageIds[0]}/reactions`, { emoji_name: 'smile' }),
    'a reaction',
  );
  const bot = await ok(
    api.post('hamlet', 'bots', { full_name: 'Fuzz Bot', short_name: 'fuzzbot' }),
    'a bot',
  );
  const scheduled = await ok(
    api.post('hamlet', 'scheduled_messages', {
      type: 'stream',
      to: Number(channels[0]),
      topic: 'later',
      content: 'scheduled',
      scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 86_400,
    }),
    'a scheduled message',
  );
  const snippet = await ok(
    api.post('hamlet', 'saved_snippets', { title: 'Hello', content: 'hello there' }),
    'a saved snippet',
  );
  const playground = await ok(
    api.post('desdemona', 'realm/playgrounds', {
      name: 'Python',
      pygments_language: 'python',
      url_template: 'https://python.example/?code={code}',
    }),
    'a code playground',
  );
  const emojiForm = multipartWithFile({ name: 'e.png', type: 'image/png', data: tinyPng() });
  await ok(
    rawRequest(ts.url, {
      method: 'POST',
      path: '/api/v1/realm/emoji/fuzz_emoji',
      headers: {
        authorization: basicAuth(fx.users.hamlet!.email, fx.users.hamlet!.api_key),
        'content-type': emojiForm.contentType,
      },
      body: emojiForm.body,
    }),
    'a custom emoji',
  );
  const emoji = (await ok(api.get('hamlet', 'realm/emoji'), 'custom emoji')).emoji as Record<
    string,
    { source_url: string }
  >;
  const emojiFiles = Object.values(emoji).map((e) => e.source_url.split('/').pop() ?? '');
  const folder = await ok(
    api.post('desdemona', 'channel_folders/create', { name: 'Fuzz folder', description: '' }),
    'a channel folder',
  );
  return {
    stream_id: channels,
    user_id: Object.values(fx.users).map((u) => String(u.id)),
    user_group_id: [String(group.group_id)],
    filter_id: [String(linkifier.id)],
    field_id: [String(field.id)],
    draft_id: (drafts.ids as number[]).map(String),
    invite_id: invites.map((i) => String(i.id)),
    key: keys,
    attachment_id: attachments.map((a) => String(a.id)),
    path_id: [pathId],
    realm_id_str: [realmIdStr ?? ''],
    filename: [rest.join('/')],
    token: [token],
    queue_id: queues,
    stream: ['fuzz public', 'fuzz private'],
    stream_name: ['fuzz public'],
    name: ['fuzz public', 'fuzzers'],
    email: [fx.users.hamlet!.email],
    username: [fx.users.hamlet!.email],
    password: [fx.users.hamlet!.password],
    alert_words: ['["fuzz"]'],
    last_event_id: ['-1', '0'],
    message_id: messageIds,
    message_ids: [`[${messageIds.join(',')}]`, `[${messageIds[0]}]`],
    msg_ids: [`[${messageIds.join(',')}]`],
    anchor: [messageIds[0]!, 'newest'],
    emoji_name: ['smile', 'fuzz_emoji', 'thumbs_up'],
    bot_id: [String(bot.user_id)],
    bot_owner_id: [String(hamletId)],
    muted_user_id: [String(poloniusId), String(fx.users.iago!.id)],
    user_id_or_email: [String(hamletId), fx.users.hamlet!.email],
    user_ids: [`[${hamletId},${poloniusId}]`],
    stream_ids: [`[${channels.join(',')}]`],
    group_ids: [`[${String(group.group_id)}]`],
    scheduled_message_id: [String(scheduled.scheduled_message_id)],
    saved_snippet_id: [String(snippet.saved_snippet_id)],
    playground_id: [String(playground.id)],
    folder_id: [String(folder.channel_folder_id)],
    realm_id: [String(fx.realmId)],
    file_name: emojiFiles,
    to: ['fuzz public', JSON.stringify(Number(channels[0])), `[${poloniusId}]`],
    topic: ['fuzz topic', 'secret'],
  };
}

/** An API key the fuzzing may have changed, read back. */
function currentUser(ts: TestServer, name: string): { api_key: string } {
  return { api_key: currentKeys(ts)[name]! };
}

/**
 * The realm as an owner's and a member's register snapshots show it (everything but the queue's
 * own id), each from a queue deleted right after.
 */
async function snapshot(ts: TestServer): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const name of ['desdemona', 'hamlet']) {
    const who = { ...ts.fx.users[name]!, ...currentUser(ts, name) };
    const res = await ts.api.post(who, 'register', {});
    // The queue's own id and the time of the snapshot differ every time.
    const { queue_id: queueId, server_timestamp: _time, ...state } = res.body;
    if (typeof queueId === 'string') {
      await ts.api.delete(who, 'events', { queue_id: queueId });
    }
    out.push({ status: res.status, ...state });
  }
  return out;
}
