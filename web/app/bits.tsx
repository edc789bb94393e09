/** Small shared pieces: avatars (initials unless the user uploaded one), counts, channel marks. */
import { avatarColor, initials } from './format.js';

export function Avatar({
  id,
  name,
  url,
  small,
}: {
  id: number;
  name: string;
  url?: string | null;
  small?: boolean;
}) {
  const cls = small ? 'avatar small' : 'avatar';
  // Only an uploaded avatar (a URL on this server) is shown: the default ones would be fetched
  // from an outside host, which the page's policy forbids and which would leak who is viewed.
  if (url && (url.startsWith('/') || url.startsWith(location.origin))) {
    return <img class={cls} src={url} alt="" loading="lazy" />;
  }
  return (
    <span class={cls} style={{ background: avatarColor(id) }} aria-hidden="true">
      {initials(name)}
    </span>
  );
}

export function Count({
  n,
  muted,
  mention,
  label,
}: {
  n: number;
  muted?: boolean;
  mention?: boolean;
  label?: string;
}) {
  if (n <= 0) return null;
  const cls = mention ? 'badge mention' : muted ? 'badge muted' : 'badge';
  return (
    <span class={cls} aria-label={label ?? `${n} unread`}>
      {n > 999 ? '999+' : n}
    </span>
  );
}

export function Swatch({ color, privateChannel }: { color: string; privateChannel?: boolean }) {
  return (
    <span class="swatch" style={{ background: color }} aria-hidden="true">
      {privateChannel ? '•' : '#'}
    </span>
  );
}
