/**
 * Serialized requests of what chat users do, shared by the benches' client processes
 * (load-client.ts, capacity-client.ts): raw HTTP/1.1 for HttpConn, form bodies, Basic auth.
 */
import { httpRequest } from './http-conn.js';

type U = { email: string; api_key: string };

export const form = (o: Record<string, string | number>): string =>
  Object.entries(o)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&');

export const channelMessage = (u: U, channel: number, topic: string, content: string): string =>
  httpRequest('POST', '/api/v1/messages', u, form({ type: 'stream', to: channel, topic, content }));

export const directMessage = (u: U, to: number, content: string): string =>
  httpRequest('POST', '/api/v1/messages', u, form({ type: 'direct', to: `[${to}]`, content }));

/** The newest 50 messages of a channel; `extra` is appended to the query string. */
export function fetchNewest(u: U, channel: number, extra = ''): string {
  const narrow = JSON.stringify([{ operator: 'channel', operand: channel }]);
  return httpRequest(
    'GET',
    `/api/v1/messages?anchor=newest&num_before=50&num_after=0${extra}&narrow=${encodeURIComponent(narrow)}`,
    u,
  );
}

export const markRead = (u: U, ids: readonly number[]): string =>
  httpRequest(
    'POST',
    '/api/v1/messages/flags',
    u,
    form({ messages: JSON.stringify(ids), op: 'add', flag: 'read' }),
  );

export const reaction = (u: U, message: number, emoji: string, remove: boolean): string =>
  httpRequest(
    remove ? 'DELETE' : 'POST',
    `/api/v1/messages/${message}/reactions`,
    u,
    form({ emoji_name: emoji }),
  );

export const typingStart = (u: U, channel: number, topic: string): string =>
  httpRequest(
    'POST',
    '/api/v1/typing',
    u,
    form({ type: 'channel', stream_id: channel, topic, op: 'start' }),
  );
