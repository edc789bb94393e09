/**
 * What this server tells clients about its API level. Feature level N promises every API change
 * of the reference API family up to N (clients gate features on it); 388 adds `is_archived` on
 * channel update, the newest change the spec relies on.
 */
export const SERVICE_FEATURE_LEVEL = 388;
export const SERVICE_VERSION = '11.0-confab-0.1.0';
/** The reference commit this build tracks; empty when unknown, as the spec allows. */
export const SERVICE_MERGE_BASE = '';
export const CONFAB_VERSION = '0.1.0';

/**
 * The version fields of GET /server_settings, POST /register and `restart` events, under the
 * spec's names and under the names existing clients of the API family read (docs/api.md "Wire
 * names").
 */
export const VERSION_FIELDS = {
  service_feature_level: SERVICE_FEATURE_LEVEL,
  service_version: SERVICE_VERSION,
  service_merge_base: SERVICE_MERGE_BASE,
  zulip_feature_level: SERVICE_FEATURE_LEVEL,
  zulip_version: SERVICE_VERSION,
  zulip_merge_base: SERVICE_MERGE_BASE,
} as const;
