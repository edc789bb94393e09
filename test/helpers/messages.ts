/**
 * Sending messages in tests, through POST /messages (the real path: rendering, permissions,
 * recipients, flags, events).
 */
import type { ApiClient, Params } from './api.js';

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
