/**
 * The names system groups are shown by (`role:members` is "Members"), as the reference shows
 * them: in a rendered group mention (the server's renderer) and in the web app's group card.
 */
const SYSTEM_GROUP_DISPLAY_NAMES: Record<string, string> = {
  'role:nobody': 'Nobody',
  'role:owners': 'Owners',
  'role:administrators': 'Administrators',
  'role:moderators': 'Moderators',
  'role:fullmembers': 'Full members',
  'role:members': 'Members',
  'role:everyone': 'Everyone',
  'role:internet': 'Everyone on the internet',
};

/** A group's name as shown: a system group's display name, any other group's own name. */
export function groupDisplayName(name: string): string {
  return SYSTEM_GROUP_DISPLAY_NAMES[name] ?? name;
}
