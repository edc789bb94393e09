/**
 * Small shared pieces: avatars (initials unless the user has a picture), counts, channel marks,
 * a form's error, the icon-only close button.
 */
import type { Ref } from 'preact';
import { avatarColor, initials } from './format.js';
import { Icon } from './icons.js';

export function Avatar({
  id,
  name,
  url,
  small,
  large,
}: {
  id: number;
  name: string;
  url?: string | null;
  small?: boolean;
  /** The profile card's. */
  large?: boolean;
}) {
  const cls = small ? 'avatar small' : large ? 'avatar large' : 'avatar';
  // A user's picture is shown (an upload, or the external host's where the realm opted into it);
  // the server's default picture is not: initials say more (docs/web.md, Avatars).
  if (url && !url.includes('/static/images/default-avatar')) {
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

/** A form's last failure, said to screen readers as it appears; nothing without one. */
export function FormError({ error }: { error: string | null }) {
  return error ? (
    <p class="error-text" role="alert">
      {error}
    </p>
  ) : null;
}

/**
 * The icon-only close button of the dialogs, cards, panels and banners: an ×, named for screen
 * readers by `label` ("Close" unless said otherwise: "Close settings"); `tooltip` shows the name
 * on hover too (the banners'); `class` adds to `icon-btn` (a card's corner, the settings' place).
 */
export function CloseButton({
  onClick,
  label = 'Close',
  tooltip = false,
  class: cls,
  buttonRef,
}: {
  onClick: () => void;
  label?: string;
  tooltip?: boolean;
  class?: string;
  buttonRef?: Ref<HTMLButtonElement>;
}) {
  return (
    <button
      ref={buttonRef}
      class={cls ? `icon-btn ${cls}` : 'icon-btn'}
      type="button"
      aria-label={label}
      title={tooltip ? label : undefined}
      onClick={() => onClick()}
    >
      <Icon name="x" />
    </button>
  );
}
