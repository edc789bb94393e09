/**
 * Where avatars and realm icons point (docs/web.md "Avatars"). A user without an uploaded avatar,
 * and a realm without an uploaded icon, get an image this server serves, unless the realm opted
 * into external avatars (the realm setting `external_avatars`, off by default; `npm run manage --
 * realm-external-avatars`): then the external avatar host's identicon, as the reference's default
 * (its ENABLE_GRAVATAR). Off, nothing a client shows makes it ask an outside host, which would
 * learn who reads the realm, from where and when. The web app draws initials for the default.
 */
export const EXTERNAL_AVATAR_ORIGIN = 'https://secure.gravatar.com';

/** The default avatar (the reference's path for it); its `version` follows the user's. */
export const DEFAULT_AVATAR_PATH = '/static/images/default-avatar.png';

/** A realm's default icon. */
export const DEFAULT_REALM_ICON_PATH = '/static/images/default-realm-icon.png';

export function defaultAvatarUrl(version: number): string {
  return `${DEFAULT_AVATAR_PATH}?version=${version}`;
}

/** The external host's avatar for an address's MD5 hash (an identicon when it has none). */
export function externalAvatarUrl(emailHash: string, version: number, medium = false): string {
  return `${EXTERNAL_AVATAR_ORIGIN}/avatar/${emailHash}?d=identicon&version=${version}${medium ? '&s=500' : ''}`;
}

/** The larger size of an avatar URL (`avatar_url_medium`). */
export function mediumAvatarUrl(url: string): string {
  if (url.startsWith('/user_avatars/')) return url.replace(/\.png\?/, '-medium.png?');
  if (url.startsWith(EXTERNAL_AVATAR_ORIGIN)) return `${url}&s=500`;
  return url; // the default image has one size
}
