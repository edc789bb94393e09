/**
 * The rows of a realm import (src/admin/realm-import.ts): every row of the archive, table by
 * table, with its new id and its references followed (foreign keys, and the ids inside values
 * through realm-import-ids.ts), ready to insert.
 */
import { generateApiKey } from '../lib/password.js';
import { realmHost } from '../lib/urls.js';
import { cellText, type Row } from '../storage/realm-dump.js';
import type { AdminRuntime } from './commands.js';
import {
  newPathId,
  remapEditHistory,
  remapEmojiCode,
  remapGroupSettingText,
  remapSettings,
  remapUserList,
  textRemapper,
  type IdMaps,
} from './realm-import-ids.js';

export type Tables = Record<string, Row[]>;

/** A user whose API key from the archive could not be kept, and why. */
export type RegeneratedKey = {
  user_id: number;
  email: string;
  reason: 'in_use' | 'invalid';
};

/** How users' password hashes and API keys come over (docs/operations.md "Moving a realm"). */
export type CredentialPolicy = {
  /** Keep the archive's hashes and keys (false: new keys, no passwords). */
  keep: boolean;
  /** Whether a key already belongs to an account of this server. */
  keyInUse: (key: string) => boolean;
  /** Filled with the users whose kept key had to be replaced. */
  regenerated: RegeneratedKey[];
};

const API_KEY = /^[A-Za-z0-9]{32}$/;

/** The imported user's password hash and API key under `policy`. */
function credentialsOf(
  r: Row,
  id: number,
  policy: CredentialPolicy,
  taken: Set<string>,
): { password_hash: string | null; api_key: string } {
  const fresh = () => {
    let key = generateApiKey();
    while (taken.has(key) || policy.keyInUse(key)) key = generateApiKey();
    taken.add(key);
    return key;
  };
  if (!policy.keep) return { password_hash: null, api_key: fresh() };
  const hash = typeof r.password_hash === 'string' ? r.password_hash : null;
  const key = typeof r.api_key === 'string' ? r.api_key : '';
  let reason: RegeneratedKey['reason'] | null = null;
  if (!API_KEY.test(key)) reason = 'invalid';
  else if (taken.has(key) || policy.keyInUse(key)) reason = 'in_use';
  if (reason === null) {
    taken.add(key);
    return { password_hash: hash, api_key: key };
  }
  policy.regenerated.push({ user_id: id, email: String(r.delivery_email), reason });
  return { password_hash: hash, api_key: fresh() };
}

/** Every row of the archive with new ids and references (see the header). */
export function transform(
  rt: AdminRuntime,
  tables: Tables,
  ids: IdMaps,
  newRealm: number,
  subdomain: string,
  name: string | undefined,
  credentials: CredentialPolicy,
  /** Whether the archive carries the uploaded icon the realm's settings name. */
  iconCarried: boolean,
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
    settings: iconCarried
      ? remapSettings(ids, r.settings)
      : withoutUploadedIcon(remapSettings(ids, r.settings)),
  }));
  const takenKeys = new Set<string>();
  each('users', (r) => {
    const id = ids.need('users', r.id);
    const hidden = r.email !== r.delivery_email;
    return {
      ...r,
      id,
      realm_id: realmId(),
      email: hidden ? `user${id}@${fakeDomain}` : r.email,
      ...credentialsOf(r, id, credentials, takenKeys),
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
  each('submessages', (r) => ({
    ...r,
    id: ids.need('submessages', r.id),
    message_id: ids.need('messages', r.message_id),
    sender_id: ids.need('users', r.sender_id),
  }));
  each('attachments', (r) => ({
    ...r,
    id: ids.need('attachments', r.id),
    realm_id: realmId(),
    owner_id: ids.need('users', r.owner_id),
    path_id: newPathId(String(r.path_id), oldRealm, newRealm),
  }));
  // The thumbnails' files stay behind (the archive has the originals): made again when asked.
  each('image_attachments', (r) => ({
    ...r,
    id: ids.need('image_attachments', r.id),
    realm_id: realmId(),
    path_id: newPathId(String(r.path_id), oldRealm, newRealm),
    thumbnail_metadata: '[]',
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
  each('bot_profiles', (r) => ({
    ...r,
    user_id: ids.need('users', r.user_id),
    default_sending_stream_id: ids.opt('streams', r.default_sending_stream_id),
    default_events_register_stream_id: ids.opt('streams', r.default_events_register_stream_id),
  }));
  // Only in archives with credentials (export-filter.ts); an import without them leaves the
  // outgoing-webhook bots without an endpoint, as the docs say.
  each('bot_services', (r) =>
    credentials.keep
      ? { ...r, id: ids.need('bot_services', r.id), user_id: ids.need('users', r.user_id) }
      : null,
  );
  each('bot_config', (r) => ({ ...r, user_id: ids.need('users', r.user_id) }));
  each('bot_storage', (r) => ({ ...r, user_id: ids.need('users', r.user_id) }));
  return out;
}

/**
 * A realm's settings without its uploaded icon, for an archive that does not carry the icon's
 * image (one made before archives did, or whose icon was gone from disk): the imported realm
 * starts with the default icon rather than point at an image it lacks.
 */
function withoutUploadedIcon(settings: string): string {
  const obj = JSON.parse(settings) as Record<string, unknown>;
  if (!('icon_source' in obj) && !('icon_file' in obj)) return settings;
  delete obj.icon_source;
  delete obj.icon_file;
  return JSON.stringify(obj);
}
