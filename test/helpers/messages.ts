/**
 * Sending messages in tests, through POST /messages (the real path: rendering, permissions,
 * recipients, flags, events).
 */
import type { ApiClient, Params } from './api.js';
import { insertChannelMessage } from './bare-store.js';
import type { TestServer } from './server.js';

export async function sendChannelMessage(
  api: ApiClient,
  who: string,
  channel: string | number,
  topic: string,
  content: string,
  extra: Params = {},
): Promise<number> {
  const res = await api.post(who, 'messages', {
    type: 'channel',
    to: typeof channel === 'number' ? JSON.stringify(channel) : channel,
    topic,
    content,
    ...extra,
  });
  if (res.status !== 200) throw new Error(`sending to ${channel} failed: ${res.text}`);
  return res.body.id as number;
}

export async function sendDirectMessage(
  api: ApiClient,
  who: string,
  to: number[],
  content: string,
  extra: Params = {},
): Promise<number> {
  const res = await api.post(who, 'messages', { type: 'direct', to, content, ...extra });
  if (res.status !== 200) throw new Error(`sending a direct message failed: ${res.text}`);
  return res.body.id as number;
}

export type FetchedMessage = {
  id: number;
  sender_id: number;
  content: string;
  subject: string;
  type: string;
  flags: string[];
  [k: string]: unknown;
};

/** GET /messages with a narrow, newest first up to `num` (ids ascending, as returned). */
export async function fetchNarrow(
  api: ApiClient,
  who: string,
  narrow: unknown[],
  params: Params = {},
): Promise<{ status: number; ids: number[]; body: Record<string, unknown>; text: string }> {
  const res = await api.get(who, 'messages', {
    anchor: 'newest',
    num_before: 1000,
    num_after: 0,
    narrow,
    ...params,
  });
  const messages = (res.body.messages ?? []) as FetchedMessage[];
  return { status: res.status, ids: messages.map((m) => m.id), body: res.body, text: res.text };
}

/** A channel's messages as hamlet reads them, oldest first, as [id, content] (throws if refused). */
export async function channelContents(
  api: ApiClient,
  channel: string,
): Promise<[number, string][]> {
  const r = await api.get('hamlet', 'messages', {
    anchor: 'oldest',
    num_before: 0,
    num_after: 1000,
    narrow: [{ operator: 'channel', operand: channel }],
  });
  if (r.status !== 200) throw new Error(`fetch failed: ${r.status} ${r.text}`);
  return (r.body.messages as { id: number; content: string }[]).map((m) => [m.id, m.content]);
}

/**
 * Bulk seeding through the store (for ranges of thousands of messages, where sending each one
 * over HTTP would only slow the test down): `count` channel messages from `senderId`, each
 * received by `recipients` with `flags`. Returns the ids, ascending.
 */
export function seedChannelMessages(
  ts: TestServer,
  m: {
    senderId: number;
    streamId: number;
    topic: string;
    count: number;
    recipients: number[];
    flags?: number;
    /** The messages' time (seconds; now by default) and text (`seeded message <i>`). */
    dateSent?: number;
    text?: (i: number) => string;
  },
): number[] {
  const store = ts.server.store;
  const ids: number[] = [];
  const now = m.dateSent ?? Math.floor(Date.now() / 1000);
  store.transaction(() => {
    for (let i = 0; i < m.count; i++) {
      const content = m.text ? m.text(i) : `seeded message ${i}`;
      const id = insertChannelMessage(store, {
        realmId: ts.fx.realmId,
        senderId: m.senderId,
        streamId: m.streamId,
        topic: m.topic,
        content,
        dateSent: now,
        recipients: m.recipients,
        flags: () => m.flags ?? 0,
      });
      ids.push(id);
    }
  });
  return ids;
}
