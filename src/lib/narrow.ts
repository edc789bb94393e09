/**
 * The register `narrow`: a filter on the message events a queue receives (it never widens what a
 * user receives; see src/lib/events.ts). Terms are `[operator, operand]` pairs, all of which must
 * hold. Supported, as the reference's events narrow: `channel`/`stream` (channel name,
 * case-insensitive), `topic` (case-insensitive, also matching one word of the topic),
 * `exact-topic`, `sender` (e-mail, case-insensitive) and `is:` `dm`/`private`, `starred`,
 * `unread`, `mentioned`/`alerted`, `resolved`.
 */
import { JsonableError } from './errors.js';

export type NarrowTerm = readonly [operator: string, operand: string];

const CHANNEL_OPERATORS = new Set(['channel', 'stream']);
const SUPPORTED_OPERATORS = new Set(['channel', 'stream', 'topic', 'exact-topic', 'sender', 'is']);
const UNSUPPORTED_IS_OPERANDS = new Set(['followed']);
/** Prefix of a resolved topic's name. */
export const RESOLVED_TOPIC_PREFIX = '✔ ';

/** Refuses terms the events narrow does not support (the reference's messages). */
export function checkNarrowForEvents(narrow: readonly NarrowTerm[]): void {
  for (const [operator, operand] of narrow) {
    if (!SUPPORTED_OPERATORS.has(operator)) {
      throw new JsonableError(`Operator ${operator} not supported.`);
    }
    if (operator === 'is' && UNSUPPORTED_IS_OPERANDS.has(operand)) {
      throw new JsonableError(`Operand ${operand} not supported.`);
    }
  }
}

/** The parts of a message event the narrow looks at. */
export type NarrowableMessage = {
  type: string;
  display_recipient?: unknown;
  subject?: unknown;
  sender_email?: unknown;
};

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function satisfies(
  operator: string,
  operand: string,
  message: NarrowableMessage,
  flags: readonly string[],
): boolean {
  if (CHANNEL_OPERATORS.has(operator)) {
    return (
      message.type === 'stream' &&
      str(message.display_recipient).toLowerCase() === operand.toLowerCase()
    );
  }
  switch (operator) {
    case 'topic': {
      if (message.type !== 'stream') return false;
      const topic = str(message.subject).toLowerCase();
      const wanted = operand.toLowerCase();
      return topic === wanted || topic.split(/\s+/).includes(wanted);
    }
    case 'exact-topic':
      return message.type === 'stream' && str(message.subject) === operand;
    case 'sender':
      return str(message.sender_email).toLowerCase() === operand.toLowerCase();
    case 'is':
      switch (operand) {
        case 'dm':
        case 'private':
          return message.type === 'private';
        case 'starred':
          return flags.includes('starred');
        case 'unread':
          return !flags.includes('read');
        case 'mentioned':
        case 'alerted':
          return flags.includes('mentioned');
        case 'resolved':
          return (
            message.type === 'stream' && str(message.subject).startsWith(RESOLVED_TOPIC_PREFIX)
          );
        default:
          return true; // other `is:` operands do not restrict events, as the reference
      }
    default:
      return true;
  }
}

/** Whether a message (with the recipient's flags) passes every term of the narrow. */
export function narrowMatches(
  narrow: readonly NarrowTerm[],
  message: NarrowableMessage,
  flags: readonly string[],
): boolean {
  for (const [operator, operand] of narrow) {
    if (!satisfies(operator, operand, message, flags)) return false;
  }
  return true;
}
