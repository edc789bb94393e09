/** Roles and the system groups that mirror them. Values are API. */

export const Role = {
  OWNER: 100,
  ADMINISTRATOR: 200,
  MODERATOR: 300,
  MEMBER: 400,
  GUEST: 600,
} as const;
export type Role = (typeof Role)[keyof typeof Role];

/** Bot types (API values). Default bots get the channel messages they are mentioned in. */
export const BotType = {
  DEFAULT: 1,
  INCOMING_WEBHOOK: 2,
  OUTGOING_WEBHOOK: 3,
  EMBEDDED: 4,
} as const;

export const ALL_ROLES: readonly Role[] = [100, 200, 300, 400, 600];

export function isRole(n: number): n is Role {
  return (ALL_ROLES as readonly number[]).includes(n);
}

/**
 * System groups, from the widest to the narrowest. Each one's direct subgroup is the next narrower
 * one, so `role:members` contains full members, moderators, administrators and owners by subgroup.
 * `role:internet` also covers logged-out spectators; `role:nobody` is always empty.
 */
export const SystemGroup = {
  INTERNET: 'role:internet',
  EVERYONE: 'role:everyone',
  MEMBERS: 'role:members',
  FULL_MEMBERS: 'role:fullmembers',
  MODERATORS: 'role:moderators',
  ADMINISTRATORS: 'role:administrators',
  OWNERS: 'role:owners',
  NOBODY: 'role:nobody',
} as const;
export type SystemGroupName = (typeof SystemGroup)[keyof typeof SystemGroup];

export const SYSTEM_GROUP_DESCRIPTIONS: Readonly<Record<SystemGroupName, string>> = {
  'role:internet': 'Everyone on the internet',
  'role:everyone': 'Everyone including guests',
  'role:members': 'Everyone except guests',
  'role:fullmembers': 'Members of this organization, not including new accounts and guests',
  'role:moderators': 'Moderators of this organization, including administrators',
  'role:administrators': 'Administrators of this organization, including owners',
  'role:owners': 'Owners of this organization',
  'role:nobody': 'Nobody',
};

/** Parent → its one direct subgroup (the chain described above). `role:nobody` stands alone. */
export const SYSTEM_GROUP_CHAIN: readonly SystemGroupName[] = [
  'role:internet',
  'role:everyone',
  'role:members',
  'role:fullmembers',
  'role:moderators',
  'role:administrators',
  'role:owners',
];

/**
 * The system groups a group setting's menu offers, broadest first, as the reference's menus list
 * them (role:internet is for web-public channels only, never offered).
 */
export type OfferedSystemGroup = Exclude<SystemGroupName, 'role:internet'>;
export const SYSTEM_GROUP_CHOICES: readonly OfferedSystemGroup[] = [
  ...SYSTEM_GROUP_CHAIN.filter((g): g is OfferedSystemGroup => g !== 'role:internet'),
  'role:nobody',
];

/**
 * The system groups a user of `role` is a *direct* member of. A member is a direct member of
 * `role:members`, and also of `role:fullmembers` once past the realm's waiting period.
 */
export function directSystemGroupsForRole(role: Role, isFullMember: boolean): SystemGroupName[] {
  switch (role) {
    case Role.OWNER:
      return ['role:owners'];
    case Role.ADMINISTRATOR:
      return ['role:administrators'];
    case Role.MODERATOR:
      return ['role:moderators'];
    case Role.MEMBER:
      return isFullMember ? ['role:members', 'role:fullmembers'] : ['role:members'];
    case Role.GUEST:
      return ['role:everyone'];
  }
}

export const ROLE_NAMES: Readonly<Record<Role, string>> = {
  100: 'owner',
  200: 'administrator',
  300: 'moderator',
  400: 'member',
  600: 'guest',
};
