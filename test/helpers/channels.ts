/**
 * Test-only helpers for the channel area.
 *
 * - `setRealmSettings` writes realm settings straight into the store and refreshes the read model:
 *   changing realm settings through the API (PATCH /realm) belongs to another area, and these tests
 *   only need a realm configured a certain way.
 *
 * Messages are sent with test/helpers/messages.ts (POST /messages), or seeded in bulk through the
 * store (seedChannelMessages) where sending would be refused or too slow.
 */
import type { TestServer } from './server.js';
import type { ApiClient, Params } from './api.js';
import type { StoredRealmSettings } from '../../src/lib/realm-settings.js';

export function setRealmSettings(ts: TestServer, changes: StoredRealmSettings): void {
  const { realms } = ts.server.context;
  const store = ts.server.store;
  const rt = realms.get(ts.fx.realmId)!;
  const current = JSON.parse(store.realms.byId(ts.fx.realmId)!.settings) as StoredRealmSettings;
  store.realms.updateSettings(ts.fx.realmId, JSON.stringify({ ...current, ...changes }));
  rt.view.reloadRealm();
}

export function systemGroupId(ts: TestServer, name: string): number {
  const rt = ts.server.context.realms.get(ts.fx.realmId)!;
  return rt.view.systemGroupId(name as Parameters<typeof rt.view.systemGroupId>[0]);
}

/** Creates (and subscribes `who` to) a channel through the API; returns its id. */
export async function createChannel(
  api: ApiClient,
  who: string,
  name: string,
  params: Params = {},
): Promise<number> {
  const res = await api.post(who, 'users/me/subscriptions', {
    subscriptions: [{ name }],
    ...params,
  });
  if (res.status !== 200) throw new Error(`creating ${name} failed: ${res.text}`);
  const id = await api.get(who, 'get_stream_id', { stream: name });
  if (id.status !== 200) {
    // The creator may not be subscribed (principals without them): find it as an administrator.
    const all = await api.get('desdemona', 'streams', { include_all: true });
    const found = (all.body.streams as { name: string; stream_id: number }[]).find(
      (s) => s.name === name,
    );
    if (!found) throw new Error(`created channel ${name} not found`);
    return found.stream_id;
  }
  return id.body.stream_id as number;
}

/** The events tapped since `from`, with their audiences. */
export function eventsSince(ts: TestServer, from: number) {
  return ts.events
    .slice(from)
    .map((e) => ({ event: e.event, users: [...e.users].sort((a, b) => a - b) }));
}
