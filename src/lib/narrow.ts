/**
 * The register `narrow`: a filter on the message events a queue receives (it never widens what a
 * user receives; see src/lib/events.ts). Terms are `[operator, operand]` pairs, all of which must
 * hold. Supported, as the reference's events narrow: `channel`/`stream` (channel name,
 * case-insensitive), `topic` (case-insensitive, also matching one word of the topic),
 * `exact-topic`, `sender` (e-mail, case-insensitive) and `is:` `dm`/`private`, `starred`,
 * `unread`, `mentioned`/`alerted`, `resolved`.
 */
import { JsonableError } from './errors.js';
import { MAX_NARROW_TERMS } from './limits.js';

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

// ---- GET /messages and flags by narrow ------------------------------------------------------

/** A narrow term as GET /messages takes it (both the object and the legacy pair form). */
export type NarrowOperand = string | number | number[];
export type NarrowParam = { operator: string; operand: NarrowOperand; negated: boolean };

/** Operators naming one channel (`stream` is the legacy name) and the sets of channels. */
export const CHANNEL_NARROW_OPERATORS: ReadonlySet<string> = CHANNEL_OPERATORS;
export const CHANNELS_NARROW_OPERATORS: ReadonlySet<string> = new Set(['channels', 'streams']);

const OPERATORS_SUPPORTING_ID = new Set([
  'channel',
  'stream',
  'id',
  'sender',
  'group-pm-with',
  'dm-including',
]);
const OPERATORS_SUPPORTING_IDS = new Set(['pm-with', 'dm']);
const OPERATORS_NON_EMPTY_OPERAND = new Set(['search']);

function isIntValue(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

/** Checks one operand's type for its operator (the reference's validators and messages). */
function checkOperand(operator: string, operand: unknown, varName: string): NarrowOperand {
  if (OPERATORS_SUPPORTING_ID.has(operator)) {
    if (typeof operand === 'string' || isIntValue(operand)) return operand;
    throw new JsonableError(`${varName} is not a string or an integer`);
  }
  if (OPERATORS_SUPPORTING_IDS.has(operator)) {
    if (typeof operand === 'string') return operand;
    if (Array.isArray(operand) && operand.every(isIntValue)) return operand;
    throw new JsonableError(`${varName} is not a string or an integer list`);
  }
  if (typeof operand !== 'string') throw new JsonableError(`${varName} is not a string`);
  if (OPERATORS_NON_EMPTY_OPERAND.has(operator) && operand.trim() === '') {
    throw new JsonableError(`${varName} cannot be blank`);
  }
  return operand;
}

/**
 * Decodes the `narrow` of GET /messages and POST /messages/flags/narrow: a list whose elements
 * are `{operator, operand, negated?}` objects or `[operator, operand]` string pairs. Only shapes
 * are checked here; operators and operands are resolved against the realm by the query layer
 * (src/queries/message-fetch.ts), which answers BAD_NARROW for what it does not know.
 */
export function parseNarrowParam(data: unknown, varName = 'narrow'): NarrowParam[] {
  if (!Array.isArray(data)) throw new JsonableError(`${varName} is not a list`);
  if (data.length > MAX_NARROW_TERMS) {
    throw new JsonableError(
      `Too many terms in ${varName}: ${data.length} (at most ${MAX_NARROW_TERMS} are allowed)`,
    );
  }
  return data.map((elem: unknown, i): NarrowParam => {
    const at = `${varName}[${i}]`;
    if (Array.isArray(elem)) {
      if (elem.length !== 2 || elem.some((x) => typeof x !== 'string')) {
        throw new JsonableError(`Invalid ${at}: element is not a string pair`);
      }
      const [operator, operand] = elem as [string, string];
      return { operator, operand: checkOperand(operator, operand, `${at}[1]`), negated: false };
    }
    if (typeof elem !== 'object' || elem === null) {
      throw new JsonableError(`Invalid ${at}: dict or list required`);
    }
    const o = elem as Record<string, unknown>;
    if (o.operand === undefined || o.operand === null) {
      throw new JsonableError(`Invalid ${at}: operand is missing`);
    }
    if (o.operator === undefined || o.operator === null) {
      throw new JsonableError(`Invalid ${at}: operator is missing`);
    }
    if (typeof o.operator !== 'string') {
      throw new JsonableError(`${at}["operator"] is not a string`);
    }
    const operand = checkOperand(o.operator, o.operand, `${at}["operand"]`);
    if (o.negated !== undefined && o.negated !== null && typeof o.negated !== 'boolean') {
      throw new JsonableError(`${at}["negated"] is not a boolean`);
    }
    return { operator: o.operator, operand, negated: o.negated === true };
  });
}
