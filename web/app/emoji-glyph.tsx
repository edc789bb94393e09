/** An emoji as a glyph (a custom one as its image): reactions, statuses, the sidebar. */
import type { Reaction } from '../../src/client/types.js';
import type { ChatState } from '../state/chat.js';
import { emojiText } from '../state/emoji-text.js';

export function EmojiGlyph({
  r,
  s,
}: {
  r: Pick<Reaction, 'emoji_code' | 'reaction_type' | 'emoji_name'>;
  s: ChatState;
}) {
  if (r.reaction_type === 'realm_emoji') {
    const e = s.realm.emoji[r.emoji_code];
    if (e) return <img src={e.source_url} alt={`:${r.emoji_name}:`} />;
  }
  const text = r.reaction_type === 'unicode_emoji' ? emojiText(r.emoji_code) : '';
  return (
    <span class="e" aria-hidden="true">
      {text || `:${r.emoji_name}:`}
    </span>
  );
}
