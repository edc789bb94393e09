/**
 * The app page's Content-Security-Policy (docs/web.md "Content-Security-Policy"). The app's
 * scripts and styles come from this origin only, never inline; the message HTML the server
 * renders is inserted as it is, so the policy is what keeps a message from running anything:
 *
 *   script-src 'self'                  the build's bundles; no inline script, no eval
 *   style-src 'self'                   the build's stylesheets (KaTeX's included)
 *   style-src-attr 'unsafe-inline'     only `style=` attributes: KaTeX's rendered TeX needs them
 *                                      (an attribute cannot load or run anything)
 *   img-src 'self' data: blob:         uploads, thumbnails, avatars, emoji, proxied images (all
 *                                      this origin); pasted images before upload; the external
 *                                      avatar host when the realm opted into external avatars
 *   connect-src 'self' ws(s)://host    the API and the event WebSocket (named explicitly: older
 *                                      browsers do not count a WebSocket to this host as 'self')
 *   frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'
 */
import type { ServerConfig } from '../config.js';
import { EXTERNAL_AVATAR_ORIGIN } from '../lib/avatars.js';

/** A Host header that is a plain host[:port] (anything else is left out of the policy). */
const PLAIN_HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

export function appPagePolicy(config: ServerConfig, host: string, externalAvatars = false): string {
  const ws = config.externalScheme === 'https' ? 'wss' : 'ws';
  const socket = PLAIN_HOST.test(host) ? ` ${ws}://${host.toLowerCase()}` : '';
  // A realm that opted into external avatars shows the external host's images (src/lib/avatars.ts).
  const avatars = externalAvatars ? ` ${EXTERNAL_AVATAR_ORIGIN}` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "style-src-attr 'unsafe-inline'",
    `img-src 'self' data: blob:${avatars}`,
    "font-src 'self'",
    "media-src 'self' blob:",
    `connect-src 'self'${socket}`,
    "worker-src 'self'",
    "manifest-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "object-src 'none'",
  ].join('; ');
}
