/**
 * What a person's profile card (web/app/profile-card.tsx) shows, as the reference's user card
 * popover shows it: the name, the e-mail address the server gives (the real one where this user
 * may see it, else the one the realm shows), the role — or "Bot" and the bot's owner —, whether
 * the account is deactivated, and the person's local time where they set a time zone. Also a
 * user group's card (a group mention's), as the reference's user group popover, and which card a
 * mention in a message opens. Plain data, from the user and group objects and the clock: the view
 * draws it, the tests check it.
 */
import { groupDisplayName } from '../../src/client/group-names.js';
import type { User } from '../../src/client/types.js';
import { inGroupSetting, type GroupsById } from './groups.js';

/**
 * Whether a user is one of the realm's system bots (Notification Bot, Welcome Bot): flagged so
 * in `cross_realm_bots`, and, as the server tells them (src/queries/bots.ts), the bots without an
 * owner: `GET /users` lists them among the realm's users. Nobody manages them, and they are not
 * offered to subscribe, as the reference's people pickers offer only the realm's own users.
 */
export function isSystemBot(u: {
  is_bot: boolean;
  bot_owner_id?: number | null;
  is_system_bot?: boolean;
}): boolean {
  return u.is_system_bot === true || (u.is_bot && u.bot_owner_id === null);
}

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

/**
 * What a mention in a message's rendered content opens, from its class and data attributes (the
 * server's renderer: `user-mention` with `data-user-id`, `silent` or not; `user-group-mention`
 * with `data-user-group-id`): a person's card, a group's card, or nothing for a wildcard
 * (`@all`: `data-user-id="*"`; `@topic`: `topic-mention`, no id), as the reference.
 */
export function mentionTarget(
  className: string,
  data: { userId?: string | undefined; userGroupId?: string | undefined },
): { userId: number } | { groupId: number } | null {
  const classes = className.split(/\s+/);
  const id = (v: string | undefined) => (v !== undefined && /^\d+$/.test(v) ? Number(v) : null);
  if (classes.includes('user-mention')) {
    const userId = id(data.userId);
    return userId === null ? null : { userId };
  }
  if (classes.includes('user-group-mention')) {
    const groupId = id(data.userGroupId);
    return groupId === null ? null : { groupId };
  }
  return null;
}

/**
 * Whether a mention in a message's rendered content names the user, to stand out (the class
 * `user-mention-me`), as the reference's web app decides it (rendered_markdown): a mention of
 * the user when the message's flags say they were mentioned (`mentioned`; a silent mention sets
 * none); `@all` and the like (`data-user-id="*"`) when `stream_wildcard_mentioned`; `@topic`
 * when `topic_wildcard_mentioned`; a group's mention when the user is in the group, through its
 * subgroups too (by the groups as they are now, whatever the flags).
 */
export function mentionsMe(
  className: string,
  data: { userId?: string | undefined; userGroupId?: string | undefined },
  ctx: { selfId: number; flags: readonly string[]; groups: GroupsById },
): boolean {
  const classes = className.split(/\s+/);
  if (classes.includes('user-mention')) {
    if (data.userId === '*') return ctx.flags.includes('stream_wildcard_mentioned');
    return data.userId === String(ctx.selfId) && ctx.flags.includes('mentioned');
  }
  if (classes.includes('topic-mention')) return ctx.flags.includes('topic_wildcard_mentioned');
  if (classes.includes('user-group-mention')) {
    const id = data.userGroupId;
    return (
      id !== undefined && /^\d+$/.test(id) && inGroupSetting(Number(id), ctx.selfId, ctx.groups)
    );
  }
  return false;
}

export type GroupCard = {
  groupId: number;
  /** A system group's display name ("Members"), any other group's own. */
  name: string;
  description: string;
  /** The direct members, by name; `known` false for one the app has not loaded yet. */
  members: { id: number; name: string; isBot: boolean; known: boolean }[];
  /** The direct subgroups, by name. */
  subgroups: { id: number; name: string }[];
  /** Everyone in it, through its subgroups too (each counted once). */
  count: number;
  deactivated: boolean;
};

/**
 * The card of a user group, as the reference's user group popover: its name, description, how
 * many are in it (through subgroups), its subgroups and direct members by name (the server lists
 * active users only), and whether it is deactivated (the app registers with
 * `include_deactivated_groups`, so it knows those); undefined for a group the app does not know.
 */
export function groupCard(
  id: number,
  ctx: { groups: GroupsById; users: ReadonlyMap<number, User>; name: (id: number) => string },
): GroupCard | undefined {
  const g = ctx.groups.get(id);
  if (!g) return undefined;
  const byName = (a: { name: string }, b: { name: string }) =>
    a.name.localeCompare(b.name, undefined, { sensitivity: 'base' });
  const members = g.members
    .map((m) => {
      const u = ctx.users.get(m);
      return { id: m, name: u?.full_name ?? ctx.name(m), isBot: u?.is_bot === true, known: !!u };
    })
    .sort(byName);
  const subgroups = (g.direct_subgroup_ids ?? [])
    .map((s) => ctx.groups.get(s))
    .filter((s) => s !== undefined)
    .map((s) => ({ id: s.id, name: groupDisplayName(s.name) }))
    .sort(byName);
  return {
    groupId: id,
    name: groupDisplayName(g.name),
    description: g.description,
    members,
    subgroups,
    count: everyoneIn(id, ctx.groups).size,
    deactivated: g.deactivated === true,
  };
}

/** The members of a group and of its subgroups, each once (a cycle is not followed twice). */
export function everyoneIn(id: number, groups: GroupsById): Set<number> {
  const out = new Set<number>();
  const seen = new Set<number>();
  const walk = (gid: number) => {
    if (seen.has(gid)) return;
    seen.add(gid);
    const g = groups.get(gid);
    if (!g) return;
    for (const m of g.members) out.add(m);
    for (const s of g.direct_subgroup_ids ?? []) walk(s);
  };
  walk(id);
  return out;
}
