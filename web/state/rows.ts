/**
 * The rows a message window renders: a date divider where the day changes, a recipient bar
 * (channel and topic, or the conversation) where the recipient changes, and each message with
 * or without its sender's name and avatar (shown at the start of a run of one sender's messages
 * in one recipient block, again after a pause, and after a collapsed message; a me-message, whose
 * action runs on from its sender's name, always has it, and the message after it too, as in the
 * reference's message_list_view). Pure: the day of a timestamp is injected
 * (the view uses the browser's time zone).
 */
import type { Message } from '../../src/client/types.js';
import { messageDmIds, sameTopic } from './narrow.js';

export type Row =
  | { kind: 'date'; key: string; timestamp: number }
  | { kind: 'recipient'; key: string; message: Message }
  | { kind: 'message'; key: string; message: Message; showSender: boolean };

/** A new sender group after this long between two messages of one sender. */
export const SENDER_GAP_SECONDS = 10 * 60;

function sameRecipient(a: Message, b: Message, selfId: number): boolean {
  if (a.type !== b.type) return false;
  if (a.type === 'stream') return a.stream_id === b.stream_id && sameTopic(a.subject, b.subject);
  return messageDmIds(a, selfId).join(',') === messageDmIds(b, selfId).join(',');
}

export function buildRows(
  messages: readonly Message[],
  opts: {
    selfId: number;
    dayOf: (timestamp: number) => string;
    /** Drawn collapsed (a muted sender's): the message after it shows its sender again. */
    hidden?: (m: Message) => boolean;
  },
): Row[] {
  const rows: Row[] = [];
  let prev: Message | null = null;
  let prevDay = '';
  for (const m of messages) {
    const day = opts.dayOf(m.timestamp);
    const newDay = day !== prevDay;
    if (newDay && prev !== null)
      rows.push({ kind: 'date', key: `d${m.id}`, timestamp: m.timestamp });
    const newBlock = prev === null || newDay || !sameRecipient(prev, m, opts.selfId);
    if (newBlock) rows.push({ kind: 'recipient', key: `r${m.id}`, message: m });
    const showSender =
      newBlock ||
      prev === null ||
      prev.sender_id !== m.sender_id ||
      m.timestamp - prev.timestamp > SENDER_GAP_SECONDS ||
      m.is_me_message === true ||
      prev.is_me_message === true ||
      opts.hidden?.(prev) === true;
    rows.push({ kind: 'message', key: `m${m.local_id ?? m.id}`, message: m, showSender });
    prev = m;
    prevDay = day;
  }
  return rows;
}
