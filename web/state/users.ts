/**
 * The settings' Users panel (web/app/users.tsx), as the reference's Organization settings →
 * Users: the active users, the deactivated ones, and the bots with their owners; a filter; a page
 * at a time. Administrators change roles (only owners make or unmake owners), deactivate others
 * and reactivate. Plain decisions over the app's user objects (ChatState.users, kept live by the
 * `realm_user` events): the view draws them, the tests check them. The server checks every rule
 * again (the last owner, for one); its refusal is what the view shows.
 */
import type { User } from '../../src/client/types.js';
import { Role } from '../../src/lib/roles.js';
import { NAME_ORDER, personMatcher, presenceText, type PresenceStatus } from './presence.js';
import { isSystemBot, roleName } from './profile.js';

export type UsersTab = 'active' | 'deactivated' | 'bots';

// The paging of long lists (the people column's, the channel members'): their own module, so that
// the people column, in the first load, does not bring this one (docs/web.md, "Budgets").
export { PAGE_SIZE, pageOf } from './pages.js';

/** The roles in the reference's order (its role menus), with their names. */
export const ROLE_CHOICES: readonly { role: number; name: string }[] = [
  Role.OWNER,
  Role.ADMINISTRATOR,
  Role.MODERATOR,
  Role.MEMBER,
  Role.GUEST,
].map((role) => ({ role, name: roleName({ role }) }));

/** A user's role: `role`, or from the older flags where a user object has none. */
export function roleOf(u: Pick<User, 'role' | 'is_owner' | 'is_admin' | 'is_guest'>): number {
  if (u.role !== undefined) return u.role;
  if (u.is_owner) return Role.OWNER;
  if (u.is_admin) return Role.ADMINISTRATOR;
  if (u.is_guest) return Role.GUEST;
  return Role.MEMBER;
}

export function isAdministrator(viewer: Pick<User, 'role' | 'is_owner' | 'is_admin'>): boolean {
  return roleOf(viewer) <= Role.ADMINISTRATOR;
}

/**
 * A tab's users matching `filter` (words beginning the name, or the start of an address: the
 * people list's filter), by name: active people; deactivated people; bots (active first), the
 * system bots left out.
 */
export function usersOf(users: Iterable<User>, tab: UsersTab, filter = ''): User[] {
  const inTab = (u: User): boolean =>
    tab === 'bots'
      ? u.is_bot && !isSystemBot(u)
      : !u.is_bot && (tab === 'active') === (u.is_active !== false);
  const matches = personMatcher(filter);
  return [...users]
    .filter((u) => inTab(u) && matches(u))
    .sort(
      (a, b) =>
        (tab === 'bots' ? Number(b.is_active !== false) - Number(a.is_active !== false) : 0) ||
        NAME_ORDER.compare(a.full_name, b.full_name) ||
        a.user_id - b.user_id,
    );
}

/**
 * The roles `viewer` may give `target` (its current one among them), or why they may not change
 * it: only administrators change roles, only owners make or unmake owners, a bot's role is not
 * changed here, nor a deactivated account's.
 */
export function roleChoices(
  viewer: User,
  target: User,
): { choices: typeof ROLE_CHOICES; why: null } | { choices: null; why: string } {
  if (!isAdministrator(viewer))
    return { choices: null, why: 'Only administrators can change roles.' };
  if (target.is_bot) return { choices: null, why: 'A bot’s role is not changed here.' };
  if (target.is_active === false)
    return { choices: null, why: 'Reactivate the account to change its role.' };
  const owner = roleOf(viewer) === Role.OWNER;
  if (!owner && roleOf(target) === Role.OWNER)
    return { choices: null, why: 'Only owners can change an owner’s role.' };
  return {
    choices: owner ? ROLE_CHOICES : ROLE_CHOICES.filter((c) => c.role !== Role.OWNER),
    why: null,
  };
}

/**
 * Whether `viewer` is offered Deactivate for `target`: administrators, for someone else (one's
 * own account is the Account panel's), active; an owner's only by an owner.
 */
export function canDeactivate(viewer: User, target: User): boolean {
  return (
    isAdministrator(viewer) &&
    target.user_id !== viewer.user_id &&
    target.is_active !== false &&
    !isSystemBot(target) &&
    (roleOf(target) !== Role.OWNER || roleOf(viewer) === Role.OWNER)
  );
}

/** Whether `viewer` is offered Reactivate for `target`: administrators, a deactivated account. */
export function canReactivate(viewer: User, target: User): boolean {
  return isAdministrator(viewer) && target.is_active === false && !isSystemBot(target);
}

/** The active bots `owner` owns (deactivated with them, as the reference does). */
export function botsOwnedBy(users: Iterable<User>, owner: number): User[] {
  return [...users].filter((u) => u.is_bot && u.bot_owner_id === owner && u.is_active !== false);
}

/** What the confirmation says will happen when `target` is deactivated. */
export function deactivationText(target: User, bots: readonly User[]): string {
  if (target.is_bot) return botDeactivationText(target.full_name, 'An administrator');
  const parts = [
    `${target.full_name} is logged out everywhere at once and can no longer log in; their messages stay.`,
    'Invitations they sent stop working.',
  ];
  if (bots.length === 1) parts.push(`Their bot ${bots[0]!.full_name} is deactivated too.`);
  else if (bots.length > 1)
    parts.push(
      `Their ${bots.length} bots (${bots.map((b) => b.full_name).join(', ')}) are deactivated too.`,
    );
  parts.push('An administrator can reactivate the account later.');
  return parts.join(' ');
}

/**
 * What deactivating a bot does, asked before it (the reference's "Deactivate <name>?": a
 * deactivated bot sends nothing, reads nothing, does nothing); `who` may bring it back: "An
 * administrator" in the Users panel, "You or an administrator" for the owner in the Bots panel.
 */
export function botDeactivationText(name: string, who: string): string {
  return (
    `${name} can no longer use the API: it cannot send messages, read the organization’s data ` +
    `or act in any other way. Its messages stay. ${who} can reactivate it later.`
  );
}

/**
 * What reactivating `target` does, asked before it (the reference's "Reactivate <name>?"), in the
 * Users panel and, for bots, the Bots panel alike.
 */
export function reactivationText(target: Pick<User, 'full_name' | 'is_bot'>): string {
  return target.is_bot
    ? `${target.full_name} can use the API again.`
    : `${target.full_name} can log in again, and is back in the channels they were subscribed to.`;
}

/** The reference's role filter: "All roles (n)" (value 0), then each role with its count in `list`. */
export function roleFilterOptions(list: readonly User[]): { value: number; label: string }[] {
  const counts = new Map<number, number>();
  for (const u of list) counts.set(roleOf(u), (counts.get(roleOf(u)) ?? 0) + 1);
  return [
    { value: 0, label: `All roles (${list.length.toLocaleString('en-US')})` },
    ...ROLE_CHOICES.map((c) => ({
      value: c.role,
      label: `${c.name} (${(counts.get(c.role) ?? 0).toLocaleString('en-US')})`,
    })),
  ];
}

/** The users of `list` with `role` (0: all of them). */
export function withRole(list: User[], role: number): User[] {
  return role === 0 ? list : list.filter((u) => roleOf(u) === role);
}

/**
 * What to ask before a user lowers their own role (the controls they lose go with it), or null
 * when they do not lower it.
 */
export function stepDownQuestion(
  current: number,
  next: number,
): { title: string; text: string; action: string } | null {
  if (next <= current) return null;
  const name = roleName({ role: next }).toLowerCase();
  return {
    title: `Make yourself ${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name}?`,
    text:
      next > Role.ADMINISTRATOR
        ? 'You lose the administrators’ controls, these included; only an administrator can give them back.'
        : 'You are no longer an owner; only an owner can make you one again.',
    action: 'Change my role',
  };
}

/**
 * The "last active" of a row: as a profile card says it, or, for someone never seen active (as
 * far as the server keeps), when they joined, as the reference's list shows it then.
 */
export function lastActiveText(
  status: PresenceStatus,
  lastActive: number | undefined,
  dateJoined: string | undefined,
  nowMs: number,
): string {
  const joined = dateJoined ? Date.parse(dateJoined) : NaN;
  if (status !== 'offline' || lastActive !== undefined || Number.isNaN(joined))
    return presenceText(status, lastActive, nowMs);
  const sameYear = new Date(joined).getFullYear() === new Date(nowMs).getFullYear();
  const date = new Date(joined).toLocaleDateString('en-US', {
    month: 'short',
    day: 'numeric',
    ...(sameYear ? {} : { year: 'numeric' }),
  });
  return `Never active; joined ${date}`;
}
