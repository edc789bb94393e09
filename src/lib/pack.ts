/**
 * The one msgpackr Packr of the process. Used at two seams only: event queues saved on shutdown
 * and restored on start, and binary WebSocket frames for clients that ask for them. HTTP stays JSON.
 * `useRecords: false` keeps frames plain MessagePack maps that any decoder (not just msgpackr)
 * reads; `moreTypes`/structured clone stay off for the same reason.
 */
import { Packr } from 'msgpackr';

export const packr = new Packr({ useRecords: false, moreTypes: false, variableMapSize: true });

export function pack(value: unknown): Buffer {
  return packr.pack(value);
}

export function unpack<T = unknown>(buf: Buffer | Uint8Array): T {
  return packr.unpack(buf) as T;
}
