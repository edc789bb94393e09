/**
 * Keeping the read model of a realm loaded on this node true when another node's log entry wrote
 * rows under it: which tables were touched decides what the realm's view reloads.
 */
import type { RealmRegistry } from '../../actors/registry.js';
import { CHANGE_AREA_TABLES, type ChangeArea } from '../queries/realm-caches.js';
import type { RowChange } from '../storage/replication.js';

/** Tables whose rows feed no cache of the realm's view (read straight from SQLite). */
const MESSAGE_ONLY = new Set([
  'messages',
  'messages_fts',
  'user_messages',
  'reactions',
  'submessages',
  'attachment_messages',
  'attachments',
  'drafts',
  'user_topics',
  'user_presence',
  'user_status',
  'scheduled_messages',
  'direct_message_groups',
  'direct_message_group_members',
]);

/** Brings the read model of a realm loaded here up to date with rows another node wrote. */
export function refreshReadModel(
  registry: RealmRegistry,
  realmId: number,
  changes: readonly RowChange[],
  touched: Set<string>,
): void {
  if (touched.has('realms')) {
    for (const [table, op, v] of changes)
      if (table === 'realms' && op === 'u') registry.noteRealmCreated(v[0] as number);
  }
  const rt = registry.loaded().find((r) => r.id === realmId);
  if (!rt) return;
  const view = rt.view;
  const has = (...tables: string[]) => tables.some((t) => touched.has(t));
  if (has('users')) {
    // A deleted row ('d': a user created in a batch this node took back) leaves the view too.
    for (const [table, , v] of changes) if (table === 'users') view.reloadUser(v[0] as number);
  }
  if (has('user_groups', 'user_group_members', 'user_group_subgroups')) view.reloadGroups();
  if (has('streams', 'subscriptions', 'default_streams', 'channel_folders'))
    view.channels.reloadAll();
  if (has('custom_profile_fields', 'custom_profile_field_values')) view.invalidateProfiles();
  for (const [area, table] of Object.entries(CHANGE_AREA_TABLES) as [ChangeArea, string][])
    if (touched.has(table)) view.caches.changed(area);
  // Anything else (realm row, emoji, linkifiers, ...) may feed caches keyed by the view's version.
  if ([...touched].some((t) => !MESSAGE_ONLY.has(t))) view.reloadRealm();
}
