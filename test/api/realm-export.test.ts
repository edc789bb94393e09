/**
 * Realm export and import. The API's exports as the reference serves them (POST/GET
 * /export/realm, DELETE /export/realm/{id}, GET /export/realm/consents, `realm_export` events, a
 * download URL), and the round trip: a realm full of data exported on one server (`manage
 * export-realm`) and imported on another (`manage import-realm`) gives every user the same
 * register snapshot and the same message history, apart from ids (and the realm's host).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import Database from '../../src/storage/sqlite.js';
import type { DB } from '../../src/storage/db.js';
import { REALM_TABLES } from '../../src/storage/realm-dump.js';
import {
  ApiClient,
  assertError,
  assertSuccess,
  rawRequest,
  type ApiResponse,
} from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { register, type Ev } from '../helpers/events.js';
import { tinyPng } from '../helpers/images.js';
import { manage } from '../helpers/manage.js';
import { sendChannelMessage, sendDirectMessage } from '../helpers/messages.js';
import { assertMatchesOpenApi } from '../helpers/openapi.js';
import { startChild } from '../helpers/child-server.js';
import { restartServer, startServer, type TestServer } from '../helpers/server.js';
import { multipartBody, request, upload } from '../helpers/uploads.js';

t.setTimeout(600_000);
// The subtests are independent (each its own servers, in this process as test/api/realm-caches
// runs two, and data directories): two run at once, so that one's child processes (the admin
// tool, the other server) start while the other waits.
t.jobs = 2;

/** Waits for the admin's queue to report the export `id` finished (or failed). */
async function waitForExport(
  t: Test,
  ts: TestServer,
  queue: { queue_id: string; last_event_id: number },
  id: number,
): Promise<Ev[]> {
  const seen: Ev[] = [];
  // The caller's queue position moves on with the events read here.
  let last = queue.last_event_id;
  for (let i = 0; i < 60; i++) {
    const res = await ts.api.get('iago', 'events', {
      queue_id: queue.queue_id,
      last_event_id: last,
    });
    const body = assertSuccess(t, res, 'poll');
    for (const e of body.events as Ev[]) {
      last = e.id;
      if (e.type !== 'realm_export') continue;
      seen.push(e);
      const mine = (e.exports as { id: number; pending: boolean }[]).find((x) => x.id === id);
      if (mine && !mine.pending) {
        queue.last_event_id = last;
        return seen;
      }
    }
  }
  throw new Error('the export never finished');
}

/** POST /api/v1/fetch_api_key: a login with an e-mail address and a password. */
function fetchApiKey(url: string, host: string, email: string, password: string) {
  return rawRequest(url, {
    method: 'POST',
    path: '/api/v1/fetch_api_key',
    headers: { host, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: email, password }).toString(),
  });
}

function tarList(file: string): string[] {
  return execFileSync('tar', ['tzf', file], { encoding: 'utf8' }).split('\n').filter(Boolean);
}

function tarRead(file: string, member: string): string {
  return execFileSync('tar', ['xzOf', file, member], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

t.test(
  'the API: asynchronous exports, events, listing, download, deletion, consents',
  async (t) => {
    const ts = await startServer(t);
    const { api, fx } = ts;
    // Private data a public export must leave out.
    await createChannel(api, 'iago', 'hidden', { invite_only: true });
    await sendChannelMessage(api, 'iago', 'hidden', 'private', 'a private channel message');
    await sendDirectMessage(api, 'hamlet', [fx.users.othello!.id], 'a direct message');
    await createChannel(api, 'iago', 'open');
    await sendChannelMessage(api, 'iago', 'open', 'public', 'a public message');

    const icon = multipartBody([
      { filename: 'icon.png', data: tinyPng(), contentType: 'image/png' },
    ]);
    const uploadedIcon = await request(api, 'POST', 'iago', '/api/v1/realm/icon', icon.body, {
      'content-type': icon.contentType,
    });
    t.equal(uploadedIcon.status, 200, 'an uploaded organization icon');
    const iconUrl = (JSON.parse(uploadedIcon.body.toString()) as { icon_url: string }).icon_url;
    const iconName = path.basename(iconUrl);

    assertSuccess(
      t,
      await api.request('PUT', 'hamlet', 'bot_storage', { storage: { note: 'private' } }),
    );
    const q = await register(t, api, 'iago', { event_types: ['realm_export'] });
    const created = await api.post('iago', 'export/realm', {});
    const { id } = assertSuccess(t, created) as { id: number };
    assertMatchesOpenApi(t, '/export/realm', 'post', created.body);
    const events = await waitForExport(t, ts, q, id);
    t.ok(events.length >= 2, 'administrators hear of the export as it goes');
    const first = (
      events[0]!.exports as { id: number; pending: boolean; export_url: unknown }[]
    )[0]!;
    t.match(first, { id, pending: true, export_url: null }, 'first pending');

    const listed = await api.get('iago', 'export/realm');
    assertSuccess(t, listed);
    assertMatchesOpenApi(t, '/export/realm', 'get', listed.body);
    const exp = (listed.body.exports as Record<string, unknown>[])[0]!;
    t.match(exp, {
      id,
      acting_user_id: fx.users.iago!.id,
      export_type: 1,
      pending: false,
      deleted_timestamp: null,
      failed_timestamp: null,
      export_url:
        /^http:\/\/testserver\.local\/user_avatars\/exports\/\d+\/[\w-]+\/confab-export-root-\d+\.tar\.gz$/,
    });
    t.type(exp.export_time, 'number');

    const urlPath = new URL(exp.export_url as string).pathname;
    const download = await request(api, 'GET', null, urlPath);
    t.equal(
      download.status,
      200,
      'the download URL works without credentials (its path is secret)',
    );
    t.equal(download.headers['content-type'], 'application/gzip');
    const archive = path.join(t.testdirName + '-public.tar.gz');
    fs.writeFileSync(archive, download.body);
    t.teardown(() => fs.rmSync(archive, { force: true }));
    const manifest = JSON.parse(tarRead(archive, 'export.json')) as Record<string, unknown>;
    t.match(manifest, { format: 'confab-realm-export', version: 1, mode: 'public' });
    const messages = JSON.parse(tarRead(archive, 'tables/messages.json')) as { content: string }[];
    const contents = messages.map((m) => m.content);
    t.ok(contents.includes('a public message'), 'public messages are exported');
    t.notOk(contents.includes('a private channel message'), 'private channels are not');
    t.notOk(contents.includes('a direct message'), 'direct messages are not');
    t.same(
      JSON.parse(tarRead(archive, 'tables/bot_storage.json')),
      [],
      'nor bot storage (personal data)',
    );
    const users = JSON.parse(tarRead(archive, 'tables/users.json')) as Record<string, unknown>[];
    t.ok(
      users.every((u) => u.api_key === null && u.password_hash === null),
      'no keys or hashes',
    );
    // The icon is public to every member: a public export carries it.
    t.ok(tarList(archive).includes(`realm_icon/${iconName}`), 'the organization icon is in it');
    t.ok(
      execFileSync('tar', ['xzOf', archive, `realm_icon/${iconName}`]).equals(
        (await request(api, 'GET', null, iconUrl)).body,
      ),
      'the served image',
    );

    assertError(
      t,
      await api.get('hamlet', 'export/realm'),
      'Must be an organization administrator',
      {
        code: 'UNAUTHORIZED_PRINCIPAL',
      },
    );
    assertError(
      t,
      await api.post('hamlet', 'export/realm', {}),
      'Must be an organization administrator',
      {
        code: 'UNAUTHORIZED_PRINCIPAL',
      },
    );

    // Standard exports need an owner's consent.
    assertError(
      t,
      await api.post('iago', 'export/realm', { export_type: 2 }),
      /^Make sure at least one Organization Owner is consenting to the export/,
    );
    assertSuccess(t, await api.patch('desdemona', 'settings', { allow_private_data_export: true }));
    const consents = await api.get('iago', 'export/realm/consents');
    assertSuccess(t, consents);
    assertMatchesOpenApi(t, '/export/realm/consents', 'get', consents.body);
    const byUser = new Map(
      (consents.body.export_consents as { user_id: number; consented: boolean }[]).map((c) => [
        c.user_id,
        c.consented,
      ]),
    );
    t.equal(byUser.get(fx.users.desdemona!.id), true);
    t.equal(byUser.get(fx.users.hamlet!.id), false);
    const standard = assertSuccess(t, await api.post('iago', 'export/realm', { export_type: 2 }));
    await waitForExport(t, ts, q, standard.id as number);

    // A finished export's state is final: an export a cluster's realm owner failed because its
    // node seemed gone (src/cluster/export-runs.ts) never succeeds after all; nor the reverse.
    const realm = ts.server.context.realms.get(fx.realmId)!;
    await t.rejects(
      realm.ask('realm_export.update', {
        id: standard.id as number,
        status: 'failed',
        time: Date.now() / 1000,
        realm_url: 'http://testserver.local',
      }),
      { message: 'Export no longer in progress' },
      'a succeeded export is not failed afterwards',
    );
    t.match(
      ((await api.get('iago', 'export/realm')).body.exports as Record<string, unknown>[]).find(
        (e) => e.id === standard.id,
      ),
      { pending: false, failed_timestamp: null, export_url: String },
      'it stays succeeded',
    );

    // Deleting: the archive goes; a second delete, or an unknown id, is refused.
    assertSuccess(t, await api.delete('iago', `export/realm/${id}`));
    t.equal((await request(api, 'GET', null, urlPath)).status, 404, 'the archive is gone');
    assertError(t, await api.delete('iago', `export/realm/${id}`), 'Export already deleted');
    assertError(t, await api.delete('iago', 'export/realm/99999'), 'Invalid data export ID');
    const after = (await api.get('iago', 'export/realm')).body.exports as Record<string, unknown>[];
    t.match(
      after.find((e) => e.id === id),
      { export_url: null, deleted_timestamp: Number },
    );

    // Five exports a week.
    for (let i = 0; i < 3; i++) assertSuccess(t, await api.post('iago', 'export/realm', {}));
    assertError(t, await api.post('iago', 'export/realm', {}), 'Exceeded rate limit.');
  },
);

// ---- the round trip -------------------------------------------------------------------------

/** Old → new id maps per table, from the two databases (an import keeps the rows' order). */
type IdMap = Map<string, Map<number, number>>;

function idMaps(a: DB, aRealm: number, b: DB, bRealm: number): IdMap {
  const maps: IdMap = new Map();
  for (const { table, where, order } of REALM_TABLES) {
    const cols = a.prepare(`PRAGMA table_info(${table})`).all() as {
      name: string;
      pk: number;
    }[];
    if (!cols.some((c) => c.name === 'id' && c.pk === 1)) continue;
    const ids = (s: DB, realm: number) =>
      (
        s.prepare(`SELECT id FROM ${table} WHERE ${where} ORDER BY ${order}`).all(realm) as {
          id: number;
        }[]
      ).map((r) => r.id);
    const from = ids(b, bRealm);
    const to = ids(a, aRealm);
    const m = new Map<number, number>();
    from.forEach((id, i) => m.set(id, to[i]!));
    maps.set(table, m);
  }
  return maps;
}

const TIME_KEY =
  /(^|_)(time|timestamp|date|last_active|last_connected|date_joined|date_created|date_updated|last_edit|last_moved|expiry)/;
const DROP_KEYS = new Set([
  // derived from the realm's host, which differs
  'realm_icon_url',
  'queue_id',
  'last_event_id',
  'server_generation',
  'server_timestamp',
  'event_queue_longpoll_timeout_seconds',
  'api_key',
]);

function typeOfKey(key: string, parent: string): string | null {
  if (key === 'id') {
    if (/users|bots|members|display_recipient/.test(parent)) return 'users';
    if (/messages/.test(parent)) return 'messages';
    if (/subscriptions|streams|subscribed/.test(parent)) return 'streams';
    if (/user_groups/.test(parent)) return 'user_groups';
    if (/custom_profile_fields/.test(parent)) return 'custom_profile_fields';
    if (/linkifiers|filters/.test(parent)) return 'linkifiers';
    if (/drafts/.test(parent)) return 'drafts';
    if (/saved_snippets/.test(parent)) return 'saved_snippets';
    if (/playgrounds/.test(parent)) return 'realm_playgrounds';
    if (/muted_users/.test(parent)) return 'users';
    if (/realm_emoji/.test(parent)) return 'realm_emoji';
    if (/attachments/.test(parent)) return 'attachments';
    if (/channel_folders/.test(parent)) return 'channel_folders';
    if (/scheduled_messages/.test(parent)) return 'scheduled_messages';
    return null;
  }
  if (
    /^(user_id|sender_id|owner_id|bot_owner_id|acting_user_id|creator_id|author_id|other_user_id|muted_user_id|to|members|subscribers|direct_members|user_ids|partner_user_ids|recipient_ids|invited_by_user_id)$/.test(
      key,
    ) ||
    /_user_ids?$/.test(key)
  )
    return 'users';
  if (
    /^(stream_id|stream_ids|prev_stream|stream|channel_id|folder_id_never)$/.test(key) ||
    /_(stream|channel)_id$/.test(key)
  )
    return 'streams';
  if (
    /^(group_id|direct_subgroups|direct_subgroup_ids|subgroups|user_group_id)$/.test(key) ||
    /_groups?$/.test(key) ||
    /^realm_can_/.test(key)
  )
    return 'user_groups';
  if (
    /^(message_id|message_ids|max_message_id|first_message_id|anchor|unread_message_ids|starred_messages|messages)$/.test(
      key,
    )
  )
    return 'messages';
  if (key === 'realm_id') return 'realms';
  if (key === 'recipient_id') return 'recipients';
  if (key === 'user_ids_string') return 'users';
  if (key === 'mentions') return 'messages';
  if (key === 'folder_id') return 'channel_folders';
  if (key === 'scheduled_message_id') return 'scheduled_messages';
  if (key === 'field_id') return 'custom_profile_fields';
  return null;
}

/** Object keys that are ids. */
function keyIdsType(parent: string): string | null {
  if (/^(presences|presence|user_status|profile_data)$/.test(parent))
    return parent === 'profile_data' ? 'custom_profile_fields' : 'users';
  if (parent === 'realm_emoji') return 'realm_emoji';
  return null;
}

/** `b` (from the importing server) in the exporting server's ids, times dropped, hosts unified. */
function normalize(
  value: unknown,
  maps: IdMap | null,
  hosts: [string, string],
  parent = '',
  key = '',
): unknown {
  const mapId = (type: string | null, v: number): number => {
    if (maps === null || type === null) return v;
    if (type === 'recipients') {
      // 2·channel id, or 2·direct conversation id + 1 (src/lib/message-content.ts recipientIdOf)
      return v % 2 === 0
        ? 2 * mapId('streams', v / 2)
        : 2 * mapId('direct_message_groups', (v - 1) / 2) + 1;
    }
    return maps.get(type)?.get(v) ?? v;
  };
  if (typeof value === 'string' && /^(sender_realm_str|realm_string_id)$/.test(key)) return 'REALM';
  if (typeof value === 'string') {
    let s = value.split(hosts[0]).join('HOST').split(hosts[1]).join('HOST');
    if (maps !== null) {
      // Replacement callbacks get (match, groups..., offset, string): only string groups count.
      const m =
        (type: string) =>
        (...g: unknown[]): string =>
          `${g[1] as string}${mapId(type, Number(g[2]))}${typeof g[3] === 'string' ? g[3] : ''}`;
      s = s
        .replace(/(data-user-id=")(\d+)(")/g, m('users'))
        .replace(/(data-stream-id=")(\d+)(")/g, m('streams'))
        .replace(/(data-user-group-id=")(\d+)(")/g, m('user_groups'))
        .replace(/(#narrow\/(?:channel|stream)\/)(\d+)/g, m('streams'))
        .replace(/(\/(?:near|with)\/)(\d+)/g, m('messages'))
        .replace(/(\/user_uploads\/(?:thumbnail\/)?)(\d+)(\/)/g, m('realms'))
        .replace(/(\/user_avatars\/)(\d+)(\/)/g, m('realms'))
        .replace(/(@_?\*\*[^*|]*\|)(\d+)(\*\*)/g, m('users'));
    }
    if (typeOfKey(key, parent) !== null && /^\d+(,\d+)*$/.test(s)) {
      s = s
        .split(',')
        .map((n) => String(mapId(typeOfKey(key, parent), Number(n))))
        .join(',');
    }
    return s;
  }
  if (typeof value === 'number') return mapId(typeOfKey(key, parent), value);
  if (Array.isArray(value))
    return value.map((v) => normalize(v, maps, hosts, key === '' ? parent : key, key));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    const idKeys = keyIdsType(key);
    for (const [k, v] of Object.entries(value)) {
      if (DROP_KEYS.has(k) || TIME_KEY.test(k)) continue;
      const nk = idKeys !== null && /^\d+$/.test(k) ? String(mapId(idKeys, Number(k))) : k;
      // A draft's (or scheduled message's) `to` holds a channel id when its type is "stream".
      const asKey =
        k === 'to' && (value as { type?: unknown }).type === 'stream' ? 'stream_ids' : k;
      out[nk] = normalize(v, maps, hosts, key === '' ? parent : key, asKey);
    }
    return out;
  }
  return value;
}

async function populate(t: Test, ts: TestServer): Promise<void> {
  const { api, fx } = ts;
  const u = fx.users;
  const design = await createChannel(api, 'iago', 'design', {
    principals: [u.iago!.id, u.hamlet!.id, u.othello!.id, u.polonius!.id, u.desdemona!.id],
    description: 'Talk about #**design** with @**Hamlet**',
  });
  await createChannel(api, 'iago', 'secret', {
    invite_only: true,
    principals: [u.iago!.id, u.hamlet!.id, u.desdemona!.id],
  });
  assertSuccess(
    t,
    await api.post('iago', 'user_groups/create', {
      name: 'reviewers',
      description: 'Reviews',
      members: [u.hamlet!.id, u.othello!.id],
    }),
  );
  // Bots with what only bots have (bot_profiles, bot_services, bot_config): the register
  // snapshots compared after the move list them, with their default channel and services.
  assertSuccess(
    t,
    await api.post('iago', 'bots', {
      full_name: 'Deploy Hook',
      short_name: 'deployhook',
      bot_type: 3,
      payload_url: JSON.stringify('https://hooks.example.com/confab'),
      default_sending_stream: 'design',
    }),
  );
  assertSuccess(
    t,
    await api.post('iago', 'bots', {
      full_name: 'Grafana',
      short_name: 'grafana',
      bot_type: 2,
      service_name: 'grafana',
      config_data: JSON.stringify({ region: 'eu' }),
    }),
  );
  const emoji = multipartBody([
    { filename: 'party.png', data: tinyPng(), contentType: 'image/png' },
  ]);
  const em = await request(api, 'POST', 'iago', '/api/v1/realm/emoji/party_parrot', emoji.body, {
    'content-type': emoji.contentType,
  });
  t.equal(em.status, 200, em.body.toString());
  const file = assertSuccess(
    t,
    await upload(api, 'hamlet', [{ filename: 'plan.txt', data: 'the plan' }]),
  );

  const m1 = await sendChannelMessage(
    api,
    'hamlet',
    'design',
    'colours',
    'Blue or green, @**Othello**? :party_parrot:',
  );
  await sendChannelMessage(
    api,
    'othello',
    'design',
    'colours',
    `@*reviewers* see [plan](${file.url as string}) and #**design>colours@${m1}**`,
  );
  await sendChannelMessage(api, 'iago', 'secret', 'budget', 'Numbers in #**secret**');
  await sendChannelMessage(api, 'hamlet', 'design', 'party', 'Celebrate :party_parrot:');
  const dm = await sendDirectMessage(api, 'hamlet', [u.othello!.id], 'Lunch?');
  // A poll with a vote: its submessages go with it.
  const poll = await sendChannelMessage(api, 'hamlet', 'design', 'colours', '/poll Which?\nBlue');
  assertSuccess(
    t,
    await api.post('othello', 'submessage', {
      message_id: poll,
      msg_type: 'widget',
      content: JSON.stringify({ type: 'vote', key: 'canned,0', vote: 1 }),
    }),
  );
  await sendDirectMessage(api, 'othello', [u.hamlet!.id, u.iago!.id], 'Group chat');
  assertSuccess(
    t,
    await api.post('othello', `messages/${m1}/reactions`, { emoji_name: 'thumbs_up' }),
  );
  assertSuccess(
    t,
    await api.post('hamlet', `messages/${dm}/reactions`, {
      emoji_name: 'party_parrot',
      reaction_type: 'realm_emoji',
    }),
  );
  assertSuccess(
    t,
    await api.patch('hamlet', `messages/${m1}`, {
      content: 'Blue or green, @**Othello**? Decide by Friday.',
    }),
  );
  assertSuccess(
    t,
    await api.post('hamlet', 'messages/flags', { messages: [m1], op: 'add', flag: 'starred' }),
  );
  assertSuccess(t, await api.post('othello', 'mark_all_as_read', {}));
  assertSuccess(
    t,
    await api.post('hamlet', 'drafts', {
      drafts: [
        { type: 'stream', to: [design], topic: 't', content: 'draft text', timestamp: 1700000000 },
      ],
    }),
  );
  assertSuccess(t, await api.post('hamlet', 'users/me/alert_words', { alert_words: ['deadline'] }));
  assertSuccess(
    t,
    await api.request('PUT', 'hamlet', 'bot_storage', { storage: { game: '{"turn":2}' } }),
  );
  assertSuccess(t, await api.post('hamlet', `users/me/muted_users/${u.polonius!.id}`, {}));
  assertSuccess(
    t,
    await api.post('iago', 'realm/filters', {
      pattern: '#(?P<id>[0-9]+)',
      url_template: 'https://tracker.example/{id}',
    }),
  );
  const field = assertSuccess(
    t,
    await api.post('iago', 'realm/profile_fields', { name: 'Team', hint: '', field_type: 1 }),
  );
  assertSuccess(
    t,
    await api.patch('hamlet', 'users/me/profile_data', {
      data: [{ id: field.id, value: 'Platform' }],
    }),
  );
  assertSuccess(t, await api.post('hamlet', 'users/me/status', { status_text: 'on holiday' }));
  assertSuccess(
    t,
    await api.post('hamlet', 'saved_snippets', { title: 'sig', content: 'Regards, Hamlet' }),
  );
  // An image whose thumbnail is made before the export (its rendering names the thumbnail).
  const photo = assertSuccess(
    t,
    await upload(api, 'hamlet', [
      { filename: 'photo.png', data: tinyPng(), contentType: 'image/png' },
    ]),
  );
  const shot = await sendChannelMessage(
    api,
    'hamlet',
    'design',
    'photos',
    `[photo.png](${String(photo.url)})`,
  );
  for (const limit = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 100))) {
    const r = await api.get('hamlet', 'messages', { message_ids: [shot] });
    const html = (r.body.messages as { content: string }[])[0]!.content;
    if (html.includes('/user_uploads/thumbnail/')) break;
    if (Date.now() > limit) throw new Error(`no thumbnail: ${html}`);
  }
}

async function snapshot(
  api: ApiClient,
  who: { email: string; api_key: string },
): Promise<{ register: unknown; messages: unknown; history: unknown[] }> {
  const reg = await api.post(who, 'register', {});
  if (reg.status !== 200) throw new Error(`register: ${reg.text}`);
  const msgs = await api.get(who, 'messages', {
    anchor: 'newest',
    num_before: 1000,
    num_after: 0,
    narrow: [],
    apply_markdown: true,
  });
  if (msgs.status !== 200) throw new Error(`messages: ${msgs.text}`);
  const history: unknown[] = [];
  for (const m of msgs.body.messages as { id: number; last_edit_timestamp?: number }[]) {
    if (m.last_edit_timestamp === undefined) continue;
    const h: ApiResponse = await api.get(who, `messages/${m.id}/history`);
    history.push(h.body.message_history);
  }
  return { register: reg.body, messages: msgs.body.messages, history };
}

t.test('at start, what interrupted or deleted exports left on disk goes', async (t) => {
  const ts = await startServer(t);
  const { server, dataDir, fx } = ts;
  const realmId = fx.realmId;
  const exportsDir = path.join(dataDir, 'exports', String(realmId));
  const archive = (secret: string, id: number) => {
    const name = `confab-export-root-${id}.tar.gz`;
    fs.mkdirSync(path.join(exportsDir, secret), { recursive: true });
    fs.writeFileSync(path.join(exportsDir, secret, name), `archive ${id}`);
    return `${realmId}/${secret}/${name}`;
  };
  const exports = server.store.realmExports;
  const iago = fx.users.iago!.id;
  // One that succeeded, one interrupted while it ran, one deleted, and a directory with no export.
  const done = exports.insert(realmId, iago, 1, 1);
  const donePath = archive('kept-kept-kept-kept', done);
  exports.setSucceeded(done, 2, donePath, 9);
  const running = exports.insert(realmId, iago, 1, 1);
  exports.setStarted(running, 2);
  archive('interrupted-interrupted', running);
  const deleted = exports.insert(realmId, iago, 1, 1);
  exports.setSucceeded(deleted, 2, archive('deleted-deleted-deleted', deleted), 9);
  exports.setDeleted(deleted, 3);
  archive('nobody-names-this-one', 999_999);
  await server.close();

  const again = await restartServer(t, dataDir, fx);
  await again.server.context.exports.idle();
  let left: string[] = [];
  for (let i = 0; i < 100; i++) {
    left = fs.readdirSync(exportsDir).sort();
    if (left.length === 1) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.same(left, ['kept-kept-kept-kept'], "only the succeeded export's directory is left");
  t.equal(again.server.store.realmExports.byId(running)?.status, 4, 'the interrupted one failed');
  const res = await request(again.api, 'GET', null, `/user_avatars/exports/${donePath}`);
  t.equal(res.status, 200, 'the succeeded one is still served');
  t.equal(res.body.toString(), `archive ${done}`);
});

t.test('round trip: export, import on another server, the same realm apart from ids', async (t) => {
  const a = await startServer(t);
  await populate(t, a);
  const icon = multipartBody([{ filename: 'icon.png', data: tinyPng(), contentType: 'image/png' }]);
  const uploadedIcon = await request(a.api, 'POST', 'iago', '/api/v1/realm/icon', icon.body, {
    'content-type': icon.contentType,
  });
  t.equal(uploadedIcon.status, 200, 'an uploaded organization icon');
  const iconUrl = (JSON.parse(uploadedIcon.body.toString()) as { icon_url: string }).icon_url;

  // The importing server is another process, whose first boot made a realm of its own: every
  // imported row gets a different id.
  const bDir = `${a.dataDir}-b`;
  t.teardown(() => fs.rmSync(bDir, { recursive: true, force: true }));
  const b = await startChild(bDir, { EXTERNAL_HOST: 'testserver.local' });
  t.teardown(() => b.kill('SIGTERM'));

  const archive = `${a.dataDir}-export.tar.gz`;
  t.teardown(() => fs.rmSync(archive, { force: true }));
  const exported = await manage(a.dataDir, ['export-realm', '--realm', '', '--to', archive]);
  t.equal(exported.status, 0, exported.stderr);
  t.match(exported.json, {
    file: archive,
    mode: 'full',
    credentials: true,
    sha256: /^[0-9a-f]{64}$/,
  });
  t.equal(fs.statSync(archive).mode & 0o777, 0o600, 'the archive is readable by its owner only');
  const entries = tarList(archive);
  t.ok(entries.includes('export.json'));
  t.ok(
    entries.some((e) => e.startsWith('uploads/') && e.endsWith('plan.txt')),
    'the upload is in it',
  );
  t.ok(
    entries.some((e) => e.startsWith('emoji/')),
    'the custom emoji is in it',
  );
  t.ok(entries.includes(`realm_icon/${path.basename(iconUrl)}`), 'the organization icon is in it');

  const usersOfFirstRealm = (db: DB) =>
    (
      db
        .prepare(
          "SELECT count(*) AS n FROM users WHERE realm_id = (SELECT id FROM realms WHERE string_id = '')",
        )
        .get() as { n: number }
    ).n;
  const peek = new Database(path.join(bDir, 'confab.sqlite3'), { readonly: true });
  const firstRealmUsers = usersOfFirstRealm(peek);
  peek.close();
  t.ok(firstRealmUsers >= 2, 'the first boot made an owner and system bots');

  const imported = await manage(bDir, [
    'import-realm',
    '--from',
    archive,
    '--subdomain',
    'imported',
  ]);
  t.equal(imported.status, 0, imported.stderr);
  const newRealm = imported.json.realm_id as number;
  t.match(imported.json, {
    string_id: 'imported',
    url: /^http:\/\/imported\.testserver\.local/,
    credentials: true,
    api_keys_regenerated: [],
    owners: [{ email: 'desdemona@zulip.com', has_password: true }],
  });
  t.notOk(imported.stdout.includes(a.fx.users.desdemona!.api_key), 'no key on stdout');
  t.not(newRealm, a.fx.realmId, 'a new realm id');
  const again = await manage(bDir, ['import-realm', '--from', archive, '--subdomain', 'imported']);
  t.equal(again.status, 1, 'the subdomain is taken now');

  // The importing server's rows, read beside it (read-only).
  const bDb = new Database(path.join(bDir, 'confab.sqlite3'), { readonly: true });
  t.teardown(() => bDb.close());
  const maps = idMaps(a.server.store.db, a.fx.realmId, bDb, newRealm);
  const [firstOld, firstNew] = [...maps.get('users')!][0]!;
  t.not(firstOld, firstNew, 'user ids changed');
  const apiB = new ApiClient(b.url, a.fx, { host: 'imported.testserver.local' });
  const hosts: [string, string] = ['imported.testserver.local', 'testserver.local'];
  const keyOf = (email: string) =>
    bDb
      .prepare('SELECT api_key, password_hash FROM users WHERE realm_id = ? AND delivery_email = ?')
      .get(newRealm, email) as { api_key: string; password_hash: string | null };
  for (const name of ['desdemona', 'iago', 'hamlet', 'othello', 'polonius']) {
    const userA = a.fx.users[name]!;
    const rowB = keyOf(userA.email);
    t.ok(rowB, `${name} was imported`);
    t.equal(rowB.api_key, userA.api_key, `${name} keeps the API key`);
    t.type(rowB.password_hash, 'string', `${name} keeps the password hash`);
    const sa = await snapshot(a.api, userA);
    const sb = await snapshot(apiB, { email: userA.email, api_key: rowB.api_key });
    t.same(
      normalize(sb.register, maps, hosts),
      normalize(sa.register, null, hosts),
      `${name}: the same register snapshot`,
    );
    t.same(
      normalize(sb.messages, maps, hosts, '', 'messages'),
      normalize(sa.messages, null, hosts, '', 'messages'),
      `${name}: the same message history`,
    );
    t.same(
      normalize(sb.history, maps, hosts),
      normalize(sa.history, null, hosts),
      `${name}: the same edit history`,
    );
    if (name === 'desdemona') {
      // The uploaded icon came along: the imported realm's, under its own id, the same image.
      const [ra, rb] = [sa.register, sb.register] as Record<string, unknown>[];
      t.equal(ra!.realm_icon_source, 'U');
      t.equal(rb!.realm_icon_source, 'U', 'the imported realm: the uploaded icon');
      const [ua, ub] = [String(ra!.realm_icon_url), String(rb!.realm_icon_url)];
      t.equal(ua, iconUrl);
      t.equal(ub, ua.replace(`/user_avatars/${a.fx.realmId}/`, `/user_avatars/${newRealm}/`));
      const [ia, ib] = [
        await request(a.api, 'GET', null, ua),
        await request(apiB, 'GET', null, ub),
      ];
      t.equal(ib.status, 200, 'the new server serves it');
      t.ok(ib.body.equals(ia.body), 'the same image');
    }
  }

  // Files came along: the upload and the custom emoji are served by the new server.
  const hamlet = { email: 'hamlet@zulip.com', api_key: keyOf('hamlet@zulip.com').api_key };
  t.same(
    assertSuccess(t, await apiB.get(hamlet, 'bot_storage')).storage,
    { game: '{"turn":2}' },
    'bot storage came along',
  );
  /** The rendering of the newest message of a narrow, as the new server answers it. */
  const newestHtml = async (operator: string, operand: string) =>
    (
      (
        await apiB.get(hamlet, 'messages', {
          anchor: 'newest',
          num_before: 50,
          num_after: 0,
          narrow: [{ operator, operand }],
        })
      ).body.messages as { content: string }[]
    )[0]!.content;
  const link = /href="(\/user_uploads\/[^"]+)"/.exec(await newestHtml('search', 'plan'))![1]!;
  t.match(
    link,
    new RegExp(`^/user_uploads/${newRealm}/`),
    'links point at the new realm’s uploads',
  );
  const got = await request(apiB, 'GET', hamlet, link);
  t.equal(got.status, 200);
  t.equal(got.body.toString(), 'the plan');
  const emojiUrl = /src="(\/user_avatars\/[^"]+)"/.exec(
    await newestHtml('search', 'Celebrate'),
  )?.[1];
  t.match(emojiUrl, new RegExp(`^/user_avatars/${newRealm}/emoji/`), 'custom emoji URLs too');
  t.equal((await request(apiB, 'GET', null, emojiUrl!)).status, 200, 'and the image is there');
  const thumbUrl = /src="(\/user_uploads\/thumbnail\/[^"]+)"/.exec(
    await newestHtml('topic', 'photos'),
  )?.[1];
  t.match(thumbUrl, new RegExp(`^/user_uploads/thumbnail/${newRealm}/`), 'thumbnail URLs too');
  const thumb = await request(apiB, 'GET', hamlet, thumbUrl!);
  t.equal(thumb.status, 200, 'and the thumbnail is made again on the new server');
  t.equal(thumb.headers['content-type'], 'image/webp');
  const search = await apiB.get(hamlet, 'messages', {
    anchor: 'newest',
    num_before: 10,
    num_after: 0,
    narrow: [{ operator: 'search', operand: 'Friday' }],
  });
  t.equal((search.body.messages as unknown[]).length, 1, 'the search index was rebuilt');

  // The moved password logs in on the new server, and answers with the moved API key.
  const login = (host: string, email: string, password: string) =>
    fetchApiKey(b.url, host, email, password);
  const desdemona = a.fx.users.desdemona!;
  const loggedIn = await login('imported.testserver.local', desdemona.email, desdemona.password);
  t.equal(
    assertSuccess(t, loggedIn, 'the moved password logs in').api_key,
    desdemona.api_key,
    'the login gives the moved API key',
  );
  const me = await apiB.get({ email: desdemona.email, api_key: desdemona.api_key }, 'users/me');
  t.equal(assertSuccess(t, me, 'the moved API key works').email, desdemona.email);
  assertError(
    t,
    await login('imported.testserver.local', desdemona.email, 'not-the-password'),
    'Your username or password is incorrect',
    { status: 401, code: 'AUTHENTICATION_FAILED' },
  );

  t.equal(
    usersOfFirstRealm(bDb),
    firstRealmUsers,
    'the other realm of the importing server is untouched',
  );

  // The outgoing-webhook bot keeps its endpoint and token, and its default channel.
  const hookOf = (db: DB, realm: number) =>
    db
      .prepare(
        `SELECT s.base_url, s.token, s.interface, st.name AS channel
         FROM users u JOIN bot_services s ON s.user_id = u.id
         JOIN bot_profiles p ON p.user_id = u.id
         LEFT JOIN streams st ON st.id = p.default_sending_stream_id
         WHERE u.realm_id = ? AND u.full_name = 'Deploy Hook'`,
      )
      .all(realm);
  const hookA = hookOf(a.server.store.db, a.fx.realmId);
  t.match(hookA, [{ base_url: 'https://hooks.example.com/confab', channel: 'design' }]);
  t.same(hookOf(bDb, newRealm), hookA, 'the outgoing webhook moved with its token');
});

t.test('a realm moved again: API keys in use here are replaced and reported', async (t) => {
  // The archive is imported twice on one server: the second copy's keys are all taken by the
  // first, its passwords are not (e-mail addresses belong to a realm: the same in both is fine).
  const a = await startServer(t);
  const archive = `${a.dataDir}-export.tar.gz`;
  t.teardown(() => fs.rmSync(archive, { force: true }));
  const exported = await manage(a.dataDir, ['export-realm', '--realm', '', '--to', archive]);
  t.equal(exported.status, 0, exported.stderr);
  const bDir = `${a.dataDir}-b`;
  t.teardown(() => fs.rmSync(bDir, { recursive: true, force: true }));
  const b = await startChild(bDir, { EXTERNAL_HOST: 'testserver.local' });
  t.teardown(() => b.kill('SIGTERM'));

  const first = await manage(bDir, ['import-realm', '--from', archive, '--subdomain', 'one']);
  t.equal(first.status, 0, first.stderr);
  t.same(first.json.api_keys_regenerated, [], 'the first import keeps every key');
  const second = await manage(bDir, ['import-realm', '--from', archive, '--subdomain', 'two']);
  t.equal(second.status, 0, second.stderr);
  const regenerated = second.json.api_keys_regenerated as { email: string; reason: string }[];
  const archived = JSON.parse(tarRead(archive, 'tables/users.json')) as unknown[];
  t.equal(regenerated.length, archived.length, 'every user of the second copy has a new key');
  t.ok(
    regenerated.every((u) => u.reason === 'in_use'),
    'because it is in use',
  );
  t.ok(
    regenerated.some((u) => u.email === 'hamlet@zulip.com'),
    'each named by address',
  );

  const hamlet = a.fx.users.hamlet!;
  const one = new ApiClient(b.url, a.fx, { host: 'one.testserver.local' });
  const two = new ApiClient(b.url, a.fx, { host: 'two.testserver.local' });
  assertSuccess(t, await one.get(hamlet, 'users/me'), 'the moved key works in the first copy');
  assertError(
    t,
    await two.get(hamlet, 'users/me'),
    'Account is not associated with this subdomain',
    { status: 401, code: 'UNAUTHORIZED' },
  );
  const fetched = await fetchApiKey(b.url, 'two.testserver.local', hamlet.email, hamlet.password);
  const newKey = assertSuccess(t, fetched, 'the moved password logs in to the second copy')
    .api_key as string;
  t.not(newKey, hamlet.api_key, 'and gives the new key');
  assertSuccess(t, await two.get({ email: hamlet.email, api_key: newKey }, 'users/me'));

  const audit = await manage(bDir, ['audit-log', '--realm', 'two', '--type', 'realm_imported']);
  t.equal(audit.status, 0, audit.stderr);
  const entry = (audit.json.entries as { extra: Record<string, unknown> }[])[0]!;
  t.match(entry.extra, { credentials: true }, 'the audit log says the credentials came along');
  t.equal(
    (entry.extra.keys_regenerated_for as unknown[]).length,
    archived.length,
    'and whose keys were replaced',
  );
});

t.test(
  'an organization icon gone from disk: listed missing, the imported realm has the default',
  async (t) => {
    const a = await startServer(t);
    const icon = multipartBody([
      { filename: 'icon.png', data: tinyPng(), contentType: 'image/png' },
    ]);
    const uploaded = await request(a.api, 'POST', 'iago', '/api/v1/realm/icon', icon.body, {
      'content-type': icon.contentType,
    });
    t.equal(uploaded.status, 200);
    const name = path.basename(
      (JSON.parse(uploaded.body.toString()) as { icon_url: string }).icon_url,
    );
    fs.rmSync(path.join(a.dataDir, 'realm-icons', String(a.fx.realmId), name));
    const archive = `${a.dataDir}-export.tar.gz`;
    t.teardown(() => fs.rmSync(archive, { force: true }));
    const exported = await manage(a.dataDir, ['export-realm', '--realm', '', '--to', archive]);
    t.equal(exported.status, 0, exported.stderr);
    t.notOk(
      tarList(archive).some((e) => e.startsWith('realm_icon/')),
      'no icon in the archive',
    );
    t.match(JSON.parse(tarRead(archive, 'export.json')), { missing_files: [`realm_icon/${name}`] });

    const bDir = `${a.dataDir}-b`;
    t.teardown(() => fs.rmSync(bDir, { recursive: true, force: true }));
    const b = await startChild(bDir, { EXTERNAL_HOST: 'testserver.local' });
    t.teardown(() => b.kill('SIGTERM'));
    const imported = await manage(bDir, [
      'import-realm',
      '--from',
      archive,
      '--subdomain',
      'moved',
    ]);
    t.equal(imported.status, 0, imported.stderr);
    const api = new ApiClient(b.url, a.fx, { host: 'moved.testserver.local' });
    const reg = assertSuccess(t, await api.post('hamlet', 'register', {}));
    t.equal(reg.realm_icon_source, 'G', 'the default icon, not one it lacks');
    t.equal(reg.realm_icon_url, '/static/images/default-realm-icon.png');
  },
);

t.test(
  '--without-credentials: an archive without hashes and keys; new keys, no passwords',
  async (t) => {
    const a = await startServer(t);
    assertSuccess(
      t,
      await a.api.post('iago', 'bots', {
        full_name: 'Deploy Hook',
        short_name: 'deployhook',
        bot_type: 3,
        payload_url: JSON.stringify('https://user:secret@hooks.example.com/confab'),
      }),
    );
    const archive = `${a.dataDir}-export.tar.gz`;
    t.teardown(() => fs.rmSync(archive, { force: true }));
    const exported = await manage(a.dataDir, [
      'export-realm',
      '--realm',
      '',
      '--to',
      archive,
      '--without-credentials',
    ]);
    t.equal(exported.status, 0, exported.stderr);
    t.match(exported.json, { credentials: false });
    const users = JSON.parse(tarRead(archive, 'tables/users.json')) as Record<string, unknown>[];
    t.ok(
      users.every((u) => u.api_key === null && u.password_hash === null),
      'no keys or hashes in the archive',
    );
    t.match(JSON.parse(tarRead(archive, 'export.json')), { credentials: false });
    t.same(
      JSON.parse(tarRead(archive, 'tables/bot_services.json')),
      [],
      'no outgoing-webhook endpoint (its URL or token) in the archive',
    );

    // An archive with credentials, imported without them.
    const full = `${a.dataDir}-full.tar.gz`;
    t.teardown(() => fs.rmSync(full, { force: true }));
    t.equal((await manage(a.dataDir, ['export-realm', '--realm', '', '--to', full])).status, 0);
    t.equal(
      (JSON.parse(tarRead(full, 'tables/bot_services.json')) as unknown[]).length,
      1,
      'the endpoint is in an archive with credentials',
    );

    const bDir = `${a.dataDir}-b`;
    t.teardown(() => fs.rmSync(bDir, { recursive: true, force: true }));
    const b = await startChild(bDir, { EXTERNAL_HOST: 'testserver.local' });
    t.teardown(() => b.kill('SIGTERM'));
    const bare = await manage(bDir, ['import-realm', '--from', archive, '--subdomain', 'bare']);
    t.equal(bare.status, 0, bare.stderr);
    const dropped = await manage(bDir, [
      'import-realm',
      '--from',
      full,
      '--subdomain',
      'dropped',
      '--without-credentials',
    ]);
    t.equal(dropped.status, 0, dropped.stderr);
    const desdemona = a.fx.users.desdemona!;
    for (const [sub, run] of [
      ['bare', bare],
      ['dropped', dropped],
    ] as const) {
      t.match(run.json, {
        credentials: false,
        api_keys_regenerated: [],
        owners: [{ email: desdemona.email, has_password: false }],
      });
      const api = new ApiClient(b.url, a.fx, { host: `${sub}.testserver.local` });
      assertError(t, await api.get(desdemona, 'users/me'), 'Invalid API key', {
        status: 401,
        code: 'UNAUTHORIZED',
      });
      // The owner sets a password with the admin tool and logs in.
      const pw = await manage(
        bDir,
        ['reset-password', '--realm', sub, '--user', desdemona.email, '--password-stdin'],
        { stdin: 'pw-imported-1\n' },
      );
      t.equal(pw.status, 0, pw.stderr);
      const loginRes = await fetchApiKey(
        b.url,
        `${sub}.testserver.local`,
        desdemona.email,
        'pw-imported-1',
      );
      const key = assertSuccess(t, loginRes, `${sub}: the imported owner logs in`).api_key;
      t.not(key, desdemona.api_key, `${sub}: with a new API key`);
      const bDb = new Database(path.join(bDir, 'confab.sqlite3'), { readonly: true });
      const endpoints = bDb
        .prepare(
          `SELECT s.* FROM bot_services s JOIN users u ON u.id = s.user_id
           WHERE u.realm_id = ? AND u.full_name = 'Deploy Hook'`,
        )
        .all(run.json.realm_id);
      bDb.close();
      t.same(endpoints, [], `${sub}: the outgoing-webhook bot came without its endpoint`);
    }
  },
);
