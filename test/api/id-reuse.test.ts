/**
 * Ids are never handed out twice (migration 0014): for every kind of object whose id clients see,
 * the newest one is deleted, the server restarts, and the next one created gets a new id, not the
 * deleted one's. Objects the API only deactivates or archives (users, channels, user groups,
 * channel folders, custom emoji) are deleted in the database directly, with everything that
 * refers to them, as a future hard delete or an operator's cleanup would.
 */
import t from 'tap';
import { assertSuccess, type ApiClient, type Params } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { multipartWithFile, tinyPng } from '../helpers/images.js';
import { sendChannelMessage } from '../helpers/messages.js';
import { restartServer, startServer } from '../helpers/server.js';
import { upload } from '../helpers/uploads.js';
import { basicAuth, rawRequest } from '../helpers/api.js';
import type { DB } from '../../src/storage/db.js';

type Kind = {
  table: string;
  create: (api: ApiClient, n: number) => Promise<number>;
  /** Deletes through the API; absent: deleted in the database (purge). */
  remove?: (api: ApiClient, id: number) => Promise<void>;
};

/** Deletes a row and every row that refers to it (foreign keys), as one cleanup would. */
function purge(db: DB, table: string, id: number): void {
  const tables = db
    .prepare<[], string>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE TABLE%'",
    )
    .pluck()
    .all();
  db.transaction(() => {
    for (const other of tables) {
      const fks = db.pragma(`foreign_key_list("${other}")`) as { table: string; from: string }[];
      for (const fk of fks) {
        if (fk.table === table) db.prepare(`DELETE FROM "${other}" WHERE "${fk.from}" = ?`).run(id);
      }
    }
    db.prepare(`DELETE FROM "${table}" WHERE id = ?`).run(id);
  })();
}

function ok(res: { status: number; text: string; body: Record<string, unknown> }, what: string) {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.body;
}

async function post(api: ApiClient, who: string, path: string, params: Params) {
  return ok(await api.post(who, path, params), `POST ${path}`);
}
async function del(api: ApiClient, who: string, path: string) {
  ok(await api.delete(who, path), `DELETE ${path}`);
}

let channelId = 0;

const KINDS: Kind[] = [
  {
    table: 'messages',
    create: (api, n) => sendChannelMessage(api, 'hamlet', channelId, 'ids', `message ${n}`),
    remove: (api, id) => del(api, 'desdemona', `messages/${id}`),
  },
  {
    table: 'drafts',
    create: async (api, n) =>
      (
        (await post(api, 'hamlet', 'drafts', {
          drafts: [{ type: '', to: [], topic: '', content: `draft ${n}` }],
        })) as { ids: number[] }
      ).ids[0]!,
    remove: (api, id) => del(api, 'hamlet', `drafts/${id}`),
  },
  {
    table: 'scheduled_messages',
    create: async (api, n) =>
      (
        await post(api, 'hamlet', 'scheduled_messages', {
          type: 'stream',
          to: channelId,
          topic: 'later',
          content: `scheduled ${n}`,
          scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 86400,
        })
      ).scheduled_message_id as number,
    remove: (api, id) => del(api, 'hamlet', `scheduled_messages/${id}`),
  },
  {
    table: 'attachments',
    create: async (api, n) => {
      const res = await upload(api, 'hamlet', [{ filename: `f${n}.txt`, data: `file ${n}` }]);
      const url = ok(res, 'upload').url as string;
      const list = ok(await api.get('hamlet', 'attachments'), 'attachments').attachments as {
        id: number;
        path_id: string;
      }[];
      return list.find((a) => url.endsWith(a.path_id))!.id;
    },
    remove: (api, id) => del(api, 'hamlet', `attachments/${id}`),
  },
  {
    table: 'linkifiers',
    create: async (api, n) =>
      (
        await post(api, 'iago', 'realm/filters', {
          pattern: `#t${n}(?P<id>[0-9]+)`,
          url_template: `https://t${n}.example.com/{id}`,
        })
      ).id as number,
    remove: (api, id) => del(api, 'iago', `realm/filters/${id}`),
  },
  {
    table: 'realm_playgrounds',
    create: async (api, n) =>
      (
        await post(api, 'iago', 'realm/playgrounds', {
          name: `playground ${n}`,
          pygments_language: 'Python',
          url_template: `https://p${n}.example.com/{?code}`,
        })
      ).id as number,
    remove: (api, id) => del(api, 'iago', `realm/playgrounds/${id}`),
  },
  {
    table: 'saved_snippets',
    create: async (api, n) =>
      (await post(api, 'hamlet', 'saved_snippets', { title: `s${n}`, content: `snippet ${n}` }))
        .saved_snippet_id as number,
    remove: (api, id) => del(api, 'hamlet', `saved_snippets/${id}`),
  },
  {
    table: 'invitations',
    create: async (api, n) => {
      await post(api, 'iago', 'invites', {
        invitee_emails: `guest${n}@example.com`,
        stream_ids: [],
      });
      const list = ok(await api.get('iago', 'invites'), 'invites').invites as {
        id: number;
        email: string;
      }[];
      return list.find((i) => i.email === `guest${n}@example.com`)!.id;
    },
    remove: (api, id) => del(api, 'iago', `invites/${id}`),
  },
  {
    table: 'custom_profile_fields',
    create: async (api, n) =>
      (await post(api, 'iago', 'realm/profile_fields', { name: `Field ${n}`, field_type: 1 }))
        .id as number,
    remove: (api, id) => del(api, 'iago', `realm/profile_fields/${id}`),
  },
  {
    table: 'realm_emoji',
    create: async (api, n) => {
      const u = api.fx.users.iago!;
      const mp = multipartWithFile({ name: 'e.png', type: 'image/png', data: tinyPng() });
      ok(
        await rawRequest(api.baseUrl, {
          method: 'POST',
          path: `/api/v1/realm/emoji/emoji${n}`,
          headers: { authorization: basicAuth(u.email, u.api_key), 'content-type': mp.contentType },
          body: mp.body,
        }),
        'custom emoji',
      );
      const all = ok(await api.get('iago', 'realm/emoji'), 'realm/emoji').emoji as Record<
        string,
        { id: string; name: string }
      >;
      return Number(Object.values(all).find((e) => e.name === `emoji${n}`)!.id);
    },
  },
  {
    table: 'channel_folders',
    create: async (api, n) =>
      (await post(api, 'iago', 'channel_folders/create', { name: `Folder ${n}`, description: '' }))
        .channel_folder_id as number,
  },
  {
    table: 'user_groups',
    create: async (api, n) =>
      (
        await post(api, 'hamlet', 'user_groups/create', {
          name: `group${n}`,
          description: '',
          members: [api.fx.users.hamlet!.id],
        })
      ).group_id as number,
  },
  {
    table: 'streams',
    create: (api, n) => createChannel(api, 'hamlet', `channel ${n}`),
  },
  {
    table: 'users',
    create: async (api, n) =>
      (
        await post(api, 'iago', 'users', {
          email: `new${n}@zulip.com`,
          password: 'a long enough password',
          full_name: `New ${n}`,
        })
      ).user_id as number,
  },
];

t.test('the newest id of every table is not handed out again, across a restart', async (t) => {
  const first = await startServer(t);
  const { api, fx, server, dataDir } = first;
  channelId = await createChannel(api, 'hamlet', 'ids');
  const db = server.store.db;
  const maxId = (table: string) =>
    db.prepare<[], number>(`SELECT max(id) FROM "${table}"`).pluck().get() ?? 0;

  const deleted = new Map<string, number>();
  for (const kind of KINDS) {
    await kind.create(api, 1);
    const newest = await kind.create(api, 2);
    t.equal(maxId(kind.table), newest, `${kind.table}: ${newest} is the newest row`);
    if (kind.remove) await kind.remove(api, newest);
    else purge(db, kind.table, newest);
    t.ok(maxId(kind.table) < newest, `${kind.table}: the newest row is gone`);
    deleted.set(kind.table, newest);
  }
  await server.close();

  const { api: api2 } = await restartServer(t, dataDir, fx);
  for (const kind of KINDS) {
    const id = await kind.create(api2, 3);
    t.ok(
      id > deleted.get(kind.table)!,
      `${kind.table}: new id ${id} after deleted ${deleted.get(kind.table)}`,
    );
  }
  assertSuccess(t, await api2.get('hamlet', 'users/me'), 'the restarted server serves');
});
