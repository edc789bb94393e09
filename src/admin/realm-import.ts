/**
 * `manage import-realm`: a new realm from an export archive (./archive.ts), on this server or
 * another. Every row gets a new id (the ids of the archive may be taken here); every reference
 * between rows follows: foreign-key columns, the JSON settings that hold channel ids and group
 * settings, the user lists of direct conversations and drafts, and the ids inside message text
 * and HTML (mentions, channel and message links, upload and custom emoji URLs).
 *
 * The database part runs in one transaction on the server's connection (a large import holds the
 * server for its duration: import big realms with the server stopped). Files are put in place
 * first and removed again if the transaction fails.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as tar from 'tar';
import { JsonableError } from '../lib/errors.js';
import { generateApiKey } from '../lib/password.js';
import { Role } from '../lib/roles.js';
import { htmlToText } from '../lib/search.js';
import { realmHost, realmUrl } from '../lib/urls.js';
import { checkSubdomain } from '../mutations/realms.js';
import { cellText, REALM_TABLES, maxIds, rowInserter, type Row } from '../storage/realm-dump.js';
import { MIGRATIONS } from '../storage/migrations/index.js';
import { ARCHIVE_FORMAT, type ExportManifest } from './archive.js';
import type { AdminRuntime } from './commands.js';
import { UsageError } from './errors.js';

type Tables = Record<string, Row[]>;

/** Old id → new id, per table. */
class IdMaps {
  private readonly maps = new Map<string, Map<number, number>>();

  assign(table: string, rows: readonly Row[], after: number): void {
    const m = new Map<number, number>();
    let next = after;
    for (const r of rows) m.set(Number(r.id), ++next);
    this.maps.set(table, m);
  }

  /** The new id, or undefined when the archive has no such row (a dangling reference). */
  get(table: string, old: unknown): number | undefined {
    if (old === null || old === undefined) return undefined;
    return this.maps.get(table)?.get(Number(old));
  }

  /** For a column that must name a row of the archive. */
  need(table: string, old: unknown): number {
    const id = this.get(table, old);
    if (id === undefined) throw new UsageError(`the archive's ${table} has no row ${String(old)}`);
    return id;
  }

  /** For a nullable column: dangling references become null. */
  opt(table: string, old: unknown): number | null {
    return this.get(table, old) ?? null;
  }
}

/** Rewrites ids inside message text, HTML and URLs. */
function textRemapper(ids: IdMaps, oldRealm: number, newRealm: number): (s: string) => string {
  const map = (table: string, n: string) => String(ids.get(table, Number(n)) ?? n);
  const users = (list: string) =>
    list
      .split(',')
      .map((n) => map('users', n))
      .join(',');
  return (s) =>
    s
      .replace(/\/user_uploads\/(\d+)\//g, (all, r: string) =>
        Number(r) === oldRealm ? `/user_uploads/${newRealm}/` : all,
      )
      .replace(/\/user_avatars\/(\d+)\/emoji\//g, (all, r: string) =>
        Number(r) === oldRealm ? `/user_avatars/${newRealm}/emoji/` : all,
      )
      .replace(/data-user-id="(\d+)"/g, (_, n: string) => `data-user-id="${map('users', n)}"`)
      .replace(/data-stream-id="(\d+)"/g, (_, n: string) => `data-stream-id="${map('streams', n)}"`)
      .replace(
        /data-user-group-id="(\d+)"/g,
        (_, n: string) => `data-user-group-id="${map('user_groups', n)}"`,
      )
      .replace(
        /(#narrow\/(?:channel|stream)\/)(\d+)(?=[-/"'\s)]|$)/g,
        (_, pre: string, n: string) => pre + map('streams', n),
      )
      .replace(
        /(#narrow\/(?:dm|pm-with)\/)([\d,]+)(?=[-/"'\s)]|$)/g,
        (_, pre: string, list: string) => pre + users(list),
      )
      .replace(
        /(\/(?:near|with)\/)(\d+)(?=[/"'\s)]|$)/g,
        (_, pre: string, n: string) => pre + map('messages', n),
      )
      .replace(
        /(@_?\*\*[^*|\n]*\|)(\d+)(\*\*)/g,
        (_, a: string, n: string, b: string) => a + map('users', n) + b,
      )
      .replace(
        /(#\*\*[^*\n]*@)(\d+)(\*\*)/g,
        (_, a: string, n: string, b: string) => a + map('messages', n) + b,
      );
}

/** A group-setting value: a group id, or an anonymous group of users and groups. */
function remapGroupSetting(ids: IdMaps, v: unknown): unknown {
  if (typeof v === 'number') return ids.get('user_groups', v) ?? v;
  if (v !== null && typeof v === 'object' && 'direct_members' in v && 'direct_subgroups' in v) {
    const g = v as { direct_members: number[]; direct_subgroups: number[] };
    return {
      direct_members: g.direct_members
        .map((u) => ids.get('users', u))
        .filter((u) => u !== undefined),
      direct_subgroups: g.direct_subgroups
        .map((x) => ids.get('user_groups', x))
        .filter((x) => x !== undefined),
    };
  }
  return v;
}

/** A JSON settings column: channel ids (`*_stream_id`, `*_channel_id`) and group settings. */
function remapSettings(ids: IdMaps, json: unknown): string {
  let obj: Record<string, unknown>;
  try {
    obj = JSON.parse(cellText(json) || '{}') as Record<string, unknown>;
  } catch {
    return '{}';
  }
  for (const [k, v] of Object.entries(obj)) {
    if (/_(stream|channel)_id$/.test(k) && typeof v === 'number' && v > 0) {
      obj[k] = ids.get('streams', v) ?? -1;
    } else if (/_group$/.test(k)) {
      obj[k] = remapGroupSetting(ids, v);
    }
  }
  return JSON.stringify(obj);
}

/** A stored group-setting column (JSON text of a group id or an anonymous group). */
function remapGroupSettingText(ids: IdMaps, text: unknown): string {
  try {
    return JSON.stringify(remapGroupSetting(ids, JSON.parse(String(text))));
  } catch {
    return String(text);
  }
}

function remapUserList(ids: IdMaps, list: unknown, sort: boolean): string {
  const out = cellText(list)
    .split(',')
    .filter((s) => s !== '')
    .map((s) => ids.need('users', Number(s)));
  if (sort) out.sort((a, b) => a - b);
  return out.join(',');
}

function remapEditHistory(ids: IdMaps, text: (s: string) => string, json: unknown): unknown {
  if (json === null || json === undefined) return null;
  let entries: Record<string, unknown>[];
  try {
    entries = JSON.parse(cellText(json)) as Record<string, unknown>[];
  } catch {
    return json;
  }
  for (const e of entries) {
    if (e.user_id !== undefined && e.user_id !== null) e.user_id = ids.opt('users', e.user_id);
    for (const k of ['stream', 'prev_stream'])
      if (typeof e[k] === 'number') e[k] = ids.get('streams', e[k]) ?? e[k];
    for (const k of ['prev_content', 'prev_rendered_content'])
      if (typeof e[k] === 'string') e[k] = text(e[k]);
  }
  return JSON.stringify(entries);
}

/** The reaction/status emoji code of a custom emoji is its id. */
function remapEmojiCode(ids: IdMaps, type: unknown, code: unknown): unknown {
  return type === 'realm_emoji' ? String(ids.get('realm_emoji', Number(code)) ?? code) : code;
}

export type ImportSummary = {
  realm_id: number;
  string_id: string;
  url: string;
  imported_from: ExportManifest['realm'];
  counts: Record<string, number>;
  owners: { user_id: number; email: string; api_key: string }[];
};

function readArchive(dir: string): { manifest: ExportManifest; tables: Tables } {
  let manifest: ExportManifest;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(dir, 'export.json'), 'utf8')) as ExportManifest;
  } catch {
    throw new UsageError('not a Confab realm export (no readable export.json)');
  }
  if (manifest.format !== ARCHIVE_FORMAT || manifest.version !== 1)
    throw new UsageError('not a Confab realm export (unknown format)');
  if (manifest.schema_version > MIGRATIONS.length)
    throw new UsageError(
      `the archive comes from a newer Confab (schema ${manifest.schema_version}; this one knows ${MIGRATIONS.length}): upgrade first`,
    );
  const tables: Tables = {};
  for (const t of REALM_TABLES) {
    const file = path.join(dir, 'tables', `${t.table}.json`);
    tables[t.table] = fs.existsSync(file)
      ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Row[])
      : [];
  }
  if (tables.realms!.length !== 1) throw new UsageError('the archive holds no realm');
  return { manifest, tables };
}

/** Every row of the archive with new ids and references (see the header). */
function transform(
  rt: AdminRuntime,
  tables: Tables,
  ids: IdMaps,
  newRealm: number,
  subdomain: string,
  name: string | undefined,
): Tables {
  const oldRealm = Number(tables.realms![0]!.id);
  const text = textRemapper(ids, oldRealm, newRealm);
  const realmId = () => newRealm;
  const fakeDomain = realmHost(rt.config, subdomain).replace(/:\d+$/, '');
  const out: Tables = {};
  const each = (table: string, fn: (r: Row) => Row | null) => {
    out[table] = (tables[table] ?? []).map(fn).filter((r): r is Row => r !== null);
  };
  const str = (v: unknown) => (v === null || v === undefined ? v : text(cellText(v)));

  each('realms', (r) => ({
    ...r,
    id: newRealm,
    string_id: subdomain,
    name: name ?? r.name,
    description: str(r.description),
    deactivated: 0,
    settings: remapSettings(ids, r.settings),
  }));
  each('users', (r) => {
    const id = ids.need('users', r.id);
    const hidden = r.email !== r.delivery_email;
    return {
      ...r,
      id,
      realm_id: realmId(),
      email: hidden ? `user${id}@${fakeDomain}` : r.email,
      password_hash: null,
      api_key: generateApiKey(),
      bot_owner_id: null, // set after every user exists (a bot's owner may come later)
      settings: remapSettings(ids, r.settings),
    };
  });
  each('user_groups', (r) => ({
    ...r,
    id: ids.need('user_groups', r.id),
    realm_id: realmId(),
    creator_id: ids.opt('users', r.creator_id),
    description: str(r.description),
    settings: remapSettings(ids, r.settings),
  }));
  each('user_group_members', (r) => ({
    group_id: ids.need('user_groups', r.group_id),
    user_id: ids.need('users', r.user_id),
  }));
  each('user_group_subgroups', (r) => ({
    group_id: ids.need('user_groups', r.group_id),
    subgroup_id: ids.need('user_groups', r.subgroup_id),
  }));
  each('custom_profile_fields', (r) => ({
    ...r,
    id: ids.need('custom_profile_fields', r.id),
    realm_id: realmId(),
  }));
  const userTypeFields = new Set(
    (tables.custom_profile_fields ?? []).filter((f) => f.type === 6).map((f) => Number(f.id)),
  );
  each('custom_profile_field_values', (r) => {
    let value = r.value;
    if (userTypeFields.has(Number(r.field_id))) {
      try {
        value = JSON.stringify(
          (JSON.parse(String(r.value)) as number[]).map((u) => ids.get('users', u) ?? u),
        );
      } catch {
        // not a list: kept as it is
      }
    }
    return {
      ...r,
      user_id: ids.need('users', r.user_id),
      field_id: ids.need('custom_profile_fields', r.field_id),
      value,
      rendered_value: str(r.rendered_value),
    };
  });
  each('channel_folders', (r) => ({
    ...r,
    id: ids.need('channel_folders', r.id),
    realm_id: realmId(),
    creator_id: ids.opt('users', r.creator_id),
    rendered_description: str(r.rendered_description),
  }));
  each('streams', (r) => {
    const row: Row = {
      ...r,
      id: ids.need('streams', r.id),
      realm_id: realmId(),
      creator_id: ids.opt('users', r.creator_id),
      folder_id: ids.opt('channel_folders', r.folder_id),
      rendered_description: str(r.rendered_description),
    };
    for (const k of Object.keys(r))
      if (/^can_.*_group$/.test(k)) row[k] = remapGroupSettingText(ids, r[k]);
    return row;
  });
  each('subscriptions', (r) => ({
    ...r,
    user_id: ids.need('users', r.user_id),
    stream_id: ids.need('streams', r.stream_id),
  }));
  each('default_streams', (r) => ({
    realm_id: realmId(),
    stream_id: ids.need('streams', r.stream_id),
  }));
  each('user_topics', (r) => ({
    ...r,
    user_id: ids.need('users', r.user_id),
    stream_id: ids.need('streams', r.stream_id),
  }));
  each('direct_message_groups', (r) => ({
    ...r,
    id: ids.need('direct_message_groups', r.id),
    realm_id: realmId(),
    user_ids: remapUserList(ids, r.user_ids, true),
  }));
  each('direct_message_group_members', (r) => ({
    group_id: ids.need('direct_message_groups', r.group_id),
    user_id: ids.need('users', r.user_id),
  }));
  each('realm_emoji', (r) => ({
    ...r,
    id: ids.need('realm_emoji', r.id),
    realm_id: realmId(),
    author_id: ids.opt('users', r.author_id),
  }));
  each('messages', (r) => ({
    ...r,
    id: ids.need('messages', r.id),
    realm_id: realmId(),
    sender_id: ids.need('users', r.sender_id),
    stream_id: r.stream_id === null ? null : ids.need('streams', r.stream_id),
    dm_group_id: r.dm_group_id === null ? null : ids.need('direct_message_groups', r.dm_group_id),
    content: text(String(r.content)),
    rendered_content: text(String(r.rendered_content)),
    edit_history: remapEditHistory(ids, text, r.edit_history),
  }));
  each('user_messages', (r) => ({
    ...r,
    user_id: ids.need('users', r.user_id),
    message_id: ids.need('messages', r.message_id),
  }));
  each('reactions', (r) => ({
    ...r,
    id: ids.need('reactions', r.id),
    message_id: ids.need('messages', r.message_id),
    user_id: ids.need('users', r.user_id),
    emoji_code: remapEmojiCode(ids, r.reaction_type, r.emoji_code),
  }));
  each('attachments', (r) => ({
    ...r,
    id: ids.need('attachments', r.id),
    realm_id: realmId(),
    owner_id: ids.need('users', r.owner_id),
    path_id: newPathId(String(r.path_id), oldRealm, newRealm),
  }));
  each('attachment_messages', (r) => {
    const message = ids.get('messages', r.message_id);
    if (message === undefined) return null;
    return { attachment_id: ids.need('attachments', r.attachment_id), message_id: message };
  });
  each('linkifiers', (r) => ({ ...r, id: ids.need('linkifiers', r.id), realm_id: realmId() }));
  each('drafts', (r) => ({
    ...r,
    id: ids.need('drafts', r.id),
    user_id: ids.need('users', r.user_id),
    stream_id: r.stream_id === null ? null : (ids.get('streams', r.stream_id) ?? null),
    type: r.stream_id !== null && ids.get('streams', r.stream_id) === undefined ? '' : r.type,
    user_ids: remapUserList(ids, r.user_ids, false),
    content: text(String(r.content)),
  }));
  each('alert_words', (r) => ({
    ...r,
    id: ids.need('alert_words', r.id),
    realm_id: realmId(),
    user_id: ids.need('users', r.user_id),
  }));
  each('scheduled_messages', (r) => ({
    ...r,
    id: ids.need('scheduled_messages', r.id),
    realm_id: realmId(),
    sender_id: ids.need('users', r.sender_id),
    stream_id: r.stream_id === null ? null : ids.need('streams', r.stream_id),
    user_ids: remapUserList(ids, r.user_ids, false),
    content: text(String(r.content)),
    rendered_content: text(String(r.rendered_content)),
    reminder_target_message_id: ids.opt('messages', r.reminder_target_message_id),
    delivered_message_id: ids.opt('messages', r.delivered_message_id),
  }));
  each('user_presence', (r) => ({
    ...r,
    user_id: ids.need('users', r.user_id),
    realm_id: realmId(),
  }));
  each('user_status', (r) => ({
    ...r,
    user_id: ids.need('users', r.user_id),
    realm_id: realmId(),
    emoji_code: remapEmojiCode(ids, r.reaction_type, r.emoji_code),
  }));
  each('saved_snippets', (r) => ({
    ...r,
    id: ids.need('saved_snippets', r.id),
    realm_id: realmId(),
    user_id: ids.need('users', r.user_id),
    content: text(String(r.content)),
  }));
  each('realm_playgrounds', (r) => ({
    ...r,
    id: ids.need('realm_playgrounds', r.id),
    realm_id: realmId(),
  }));
  each('realm_user_defaults', (r) => ({
    ...r,
    realm_id: realmId(),
    settings: remapSettings(ids, r.settings),
  }));
  each('muted_users', (r) => ({
    ...r,
    user_id: ids.need('users', r.user_id),
    muted_user_id: ids.need('users', r.muted_user_id),
  }));
  return out;
}

/** An upload's path id with the new realm's id in front (`<realm>/<xx>/<random>/<name>`). */
function newPathId(pathId: string, oldRealm: number, newRealm: number): string {
  const [first, ...rest] = pathId.split('/');
  return Number(first) === oldRealm ? [String(newRealm), ...rest].join('/') : pathId;
}

function placeFile(from: string, to: string, placed: string[]): void {
  if (!fs.existsSync(from)) return;
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.copyFileSync(from, to, fs.constants.COPYFILE_EXCL);
  placed.push(to);
}

export async function importRealmFromFile(
  rt: AdminRuntime,
  file: string,
  opts: { subdomain: string; name?: string },
): Promise<ImportSummary> {
  const { store, config } = rt;
  checkSubdomain(opts.subdomain);
  if (store.realms.byStringId(opts.subdomain))
    throw new JsonableError('Subdomain is already in use. Please choose a different one.');
  if (!fs.existsSync(file)) throw new UsageError(`no such file: ${file}`);
  const work = path.join(config.dataDir, 'tmp', `import-${crypto.randomBytes(8).toString('hex')}`);
  fs.mkdirSync(work, { recursive: true, mode: 0o700 });
  const placed: string[] = [];
  try {
    try {
      await tar.x({ file: path.resolve(file), cwd: work, strict: true });
    } catch (err) {
      throw new UsageError(`cannot read the archive: ${(err as Error).message}`);
    }
    const { manifest, tables } = readArchive(work);
    const oldRealm = Number(tables.realms![0]!.id);

    const ids = new IdMaps();
    const summary = store.transaction(() => {
      const max = maxIds(store.db);
      for (const t of Object.keys(max)) ids.assign(t, tables[t] ?? [], max[t]!);
      const newRealm = ids.need('realms', oldRealm);
      const rows = transform(rt, tables, ids, newRealm, opts.subdomain, opts.name);

      // Files first (inside the transaction's try: a failure removes them again).
      for (const a of tables.attachments ?? []) {
        const oldPath = String(a.path_id);
        placeFile(
          path.join(work, 'uploads', ...oldPath.split('/')),
          path.join(
            config.dataDir,
            'uploads',
            ...newPathId(oldPath, oldRealm, newRealm).split('/'),
          ),
          placed,
        );
      }
      for (const e of tables.realm_emoji ?? []) {
        const name = path.basename(String(e.file_name));
        placeFile(
          path.join(work, 'emoji', name),
          path.join(config.dataDir, 'emoji', String(newRealm), name),
          placed,
        );
      }

      const insert = rowInserter(store.db);
      for (const t of REALM_TABLES) for (const r of rows[t.table] ?? []) insert.insert(t.table, r);
      for (const u of tables.users ?? []) {
        if (u.bot_owner_id !== null && u.bot_owner_id !== undefined) {
          const owner = ids.get('users', u.bot_owner_id);
          if (owner !== undefined) store.users.setBotOwner(ids.need('users', u.id), owner);
        }
      }
      for (const m of rows.messages ?? []) {
        insert.indexMessage(Number(m.id), String(m.topic), htmlToText(String(m.rendered_content)));
      }
      const counts: Record<string, number> = {};
      for (const [t, r] of Object.entries(rows)) counts[t] = r.length;
      const owners = (rows.users ?? [])
        .filter((u) => u.role === Role.OWNER && u.is_bot === 0 && u.is_active === 1)
        .map((u) => ({
          user_id: Number(u.id),
          email: String(u.delivery_email),
          api_key: String(u.api_key),
        }));
      return { newRealm, counts, owners };
    });
    rt.realms.noteRealmCreated(summary.newRealm);
    return {
      realm_id: summary.newRealm,
      string_id: opts.subdomain,
      url: realmUrl(config, opts.subdomain),
      imported_from: manifest.realm,
      counts: summary.counts,
      owners: summary.owners,
    };
  } catch (err) {
    for (const p of placed) fs.rmSync(p, { force: true });
    throw err;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
