/**
 * Bot rules that depend on no realm data. Reference: lib/users.py (check_short_name,
 * check_valid_bot_type, check_valid_interface_type, check_bot_name_available), models/users.py
 * (UserProfile.allowed_bot_types, can_admin_user), models/bots.py (Service).
 */
import { longerThan } from './strings.js';
import { JsonableError } from './errors.js';
import { BotType } from './roles.js';

/** Outgoing webhook payload formats (the reference's Service.GENERIC / SLACK). */
export const BotInterface = { GENERIC: 1, SLACK: 2 } as const;

export const BOT_TYPES: readonly number[] = [
  BotType.DEFAULT,
  BotType.INCOMING_WEBHOOK,
  BotType.OUTGOING_WEBHOOK,
  BotType.EMBEDDED,
];

/**
 * An outgoing webhook URL: http(s), at most this many code points. The reference checks it with
 * Django's URLValidator, which refuses more than 2,048 ("payload_url is not a URL").
 */
export const MAX_BOT_URL_LENGTH = 2048;
/** An outgoing-webhook or embedded bot's service name (the reference's Service.name column). */
export const MAX_SERVICE_NAME_LENGTH = 100;
/** Keys and values of an incoming webhook bot's configuration. */
export const MAX_BOT_CONFIG_ENTRIES = 20;
export const MAX_BOT_CONFIG_LENGTH = 1000;

/** A bot's short name, trimmed; the part before `-bot@` in its address. */
export function checkShortName(raw: string): string {
  const name = raw.trim();
  if (name.length === 0) throw new JsonableError('Bad name or username');
  // The local part of an address: letters, digits and a few marks, as an e-mail form allows.
  if (name.length > 60 || !/^[A-Za-z0-9][A-Za-z0-9._+-]*$/.test(name))
    throw new JsonableError('Bad name or username');
  return name;
}

/** A bot's address: `<short name>-bot@<the realm's bot domain>`. */
export function botEmail(shortName: string, botDomain: string): string {
  return `${shortName}-bot@${botDomain}`.toLowerCase();
}

export function checkValidInterfaceType(iface: number): void {
  if (iface !== BotInterface.GENERIC && iface !== BotInterface.SLACK)
    throw new JsonableError('Invalid interface type');
}

/** An outgoing webhook's URL: absolute http or https (where it may point is checked on use). */
export function checkBotUrl(raw: string, name: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new JsonableError(`${name} is not a URL`);
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    longerThan(raw, MAX_BOT_URL_LENGTH)
  )
    throw new JsonableError(`${name} is not a URL`);
  return url.toString();
}

/** An outgoing-webhook bot to call about a committed message (src/bots/outgoing-webhooks.ts). */
export type ServiceBotTrigger = { bot_id: number; trigger: 'mention' | 'direct_message' };

/**
 * The realm actor's side of the outgoing webhooks: a send writes its calls to the durable queue
 * (outgoing_webhook_calls) in its own transaction, then wakes the caller; null: none are made.
 */
export type ServiceBotDeps = {
  /** Calls waiting at most; a new one past it is dropped with a log line. */
  maxWaiting: number;
  /** Called after a commit that wrote calls. */
  wake: () => void;
};
