/**
 * A person's status as shown beside their name and on their card (part of the first screen: the
 * people list); the dialog to set one's own is status.tsx, loaded when first opened.
 */
import type { ChatState } from '../state/chat.js';
import type { StatusEmoji as Emoji } from '../state/user-status.js';
import { EmojiGlyph } from './emoji-glyph.js';
import { track } from './track.js';

/** An emoji of a status as a glyph (a custom one as its image). */
export function Glyph({ s, emoji }: { s: ChatState; emoji: Emoji }) {
  return (
    <EmojiGlyph
      s={s}
      r={{ emoji_name: emoji.name, emoji_code: emoji.code, reaction_type: emoji.type }}
    />
  );
}

/**
 * A person's status emoji after their name, kept live by itself (a message row draws again only
 * when its message changes): the text is its tooltip and, with `words`, said to screen readers
 * (", Busy") where the name's element does not say it otherwise.
 */
export function StatusEmoji({
  s,
  id,
  words = false,
}: {
  s: ChatState;
  id: number;
  words?: boolean;
}) {
  track(s.rev.status);
  const st = s.statuses.get(id);
  if (!st.emoji && !(words && st.text)) return null;
  const said = st.text || (st.emoji ? `:${st.emoji.name}:` : '');
  return (
    <>
      {st.emoji && (
        <span class="status-emoji" title={said} data-emoji={st.emoji.name} aria-hidden="true">
          <Glyph s={s} emoji={st.emoji} />
        </span>
      )}
      {words && <span class="sr-only">, {said}</span>}
    </>
  );
}

/** A status as the card shows it: the emoji and the text. */
export function StatusLine({ s, id }: { s: ChatState; id: number }) {
  track(s.rev.status);
  const st = s.statuses.get(id);
  if (!st.emoji && !st.text) return null;
  return (
    <p class="card-status">
      {st.emoji && (
        <span class="status-emoji" data-emoji={st.emoji.name} title={`:${st.emoji.name}:`}>
          <Glyph s={s} emoji={st.emoji} />
        </span>
      )}
      {st.text && <span class="card-status-text">{st.text}</span>}
    </p>
  );
}
