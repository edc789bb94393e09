/**
 * What a person's profile card (web/app/profile-card.tsx) shows, as the reference's user card
 * popover shows it: the name, the e-mail address the server gives (the real one where this user
 * may see it, else the one the realm shows), the role — or "Bot" and the bot's owner —, whether
 * the account is deactivated, and the person's local time where they set a time zone. Plain
 * data, from the user object and the clock: the view draws it, the tests check it.
 */
import type { User } from '../../src/client/types.js';

/** The roles' names, by the API's values (the reference's user_role_map). */
const ROLE_NAMES: Record<number, string> = {
  100: 'Owner',
  200: 'Administrator',
  300: 'Moderator',
  400: 'Member',
  600: 'Guest',
};

/** A role's name; from the older flags where a user object has no `role`. */
export function roleName(u: Pick<User, 'role' | 'is_owner' | 'is_admin' | 'is_guest'>): string {
  if (u.role !== undefined && ROLE_NAMES[u.role]) return ROLE_NAMES[u.role]!;
  if (u.is_owner) return 'Owner';
  if (u.is_admin) return 'Administrator';
  if (u.is_guest) return 'Guest';
  return 'Member';
}

/** The address shown: `delivery_email` where the server gives it (visible to this user), else `email`. */
export function shownEmail(u: Pick<User, 'email' | 'delivery_email'>): string {
  return u.delivery_email ? u.delivery_email : u.email;
}

const clockFormats = new Map<string, Intl.DateTimeFormat | null>();

/**
 * The time now in a time zone (`3:04 PM`, or `15:04` with the 24-hour setting); undefined for no
 * time zone, or one this browser does not know.
 */
export function localTime(
  timezone: string | undefined,
  nowMs: number,
  twentyFour: boolean,
): string | undefined {
  if (!timezone) return undefined;
  const key = `${timezone}|${twentyFour}`;
  let fmt = clockFormats.get(key);
  if (fmt === undefined) {
    try {
      fmt = new Intl.DateTimeFormat('en-US', {
        timeZone: timezone,
        hour: 'numeric',
        minute: '2-digit',
        hourCycle: twentyFour ? 'h23' : 'h12',
      });
    } catch {
      fmt = null; // not a time zone this browser knows
    }
    clockFormats.set(key, fmt);
  }
  if (!fmt) return undefined;
  const parts = fmt.formatToParts(new Date(nowMs));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const hour = twentyFour ? get('hour').padStart(2, '0') : get('hour');
  const time = `${hour}:${get('minute')}`;
  return twentyFour ? time : `${time} ${get('dayPeriod').toUpperCase()}`;
}

export type Card = {
  userId: number;
  name: string;
  email: string;
  avatarUrl: string | null | undefined;
  /** "Owner" … "Guest", or "Bot". */
  role: string;
  isBot: boolean;
  /** A bot's owner, where the server names one (and the app knows them). */
  botOwner: { id: number; name: string } | null;
  deactivated: boolean;
  /** The person's time now, where they set a time zone (none for a deactivated account). */
  localTime: string | undefined;
  isMe: boolean;
  /** "Send direct message": not to a deactivated account (the server would refuse). */
  canMessage: boolean;
};

/** The card of a user; undefined for one the app does not know. */
export function profileCard(
  id: number,
  ctx: {
    users: ReadonlyMap<number, User>;
    selfId: number;
    nowMs: number;
    twentyFour: boolean;
  },
): Card | undefined {
  const u = ctx.users.get(id);
  if (!u) return undefined;
  const deactivated = u.is_active === false;
  const ownerId = u.is_bot ? u.bot_owner_id : null;
  const owner = ownerId !== null && ownerId !== undefined ? ctx.users.get(ownerId) : undefined;
  return {
    userId: id,
    name: u.full_name,
    email: shownEmail(u),
    avatarUrl: u.avatar_url,
    role: u.is_bot ? 'Bot' : roleName(u),
    isBot: u.is_bot,
    botOwner: owner ? { id: owner.user_id, name: owner.full_name } : null,
    deactivated,
    localTime: deactivated ? undefined : localTime(u.timezone, ctx.nowMs, ctx.twentyFour),
    isMe: id === ctx.selfId,
    canMessage: !deactivated,
  };
}
