/**
 * Inline patterns for emoji: `:name:` (Unicode, realm and Zulip emoji), the emoticons the realm
 * may translate, and Unicode emoji typed as characters.
 */
import { emojiCodeForName, emojiCodeOf, emojiNameForCode } from '../emoji/index.js';
import type { Pattern } from './inline-pattern.js';
import { El } from './tree.js';

function emojiEl(code: string, display: string): El {
  const title = display.slice(1, -1).replace(/_/g, ' ');
  const el = new El('span', {
    class: `emoji emoji-${code}`,
    title,
    role: 'img',
    'aria-label': title,
  });
  el.text = display;
  el.atomic = true;
  return el;
}

function imageEmojiEl(src: string, display: string): El {
  const el = new El('img', {
    src,
    class: 'emoji',
    alt: display,
    title: display.slice(1, -1).replace(/_/g, ' '),
  });
  el.atomic = true;
  return el;
}

const EMOTICONS: Record<string, string> = {
  ':)': 'smile',
  '(:': 'smile',
  ':(': 'frown',
  '<3': 'heart',
  ':|': 'neutral',
  ':/': 'confused',
  ';)': 'wink',
  ':D': 'grinning',
  ':o': 'open_mouth',
  ':O': 'open_mouth',
  ':p': 'stuck_out_tongue',
  ':P': 'stuck_out_tongue',
};
const TERMINALS = `\\s,.;?!()\\[\\]"'`;
export const emoticon: Pattern = {
  re: new RegExp(
    `(?<![^${TERMINALS}])(${Object.keys(EMOTICONS)
      .map((e) => e.replace(/[()|/]/g, '\\$&'))
      .join('|')})(?![^${TERMINALS}])`,
    'gu',
  ),
  kind: 'first',
  handle: (m, s) => {
    if (!s.opts.translate_emoticons) return null;
    const name = EMOTICONS[m[1]!]!;
    return emojiEl(emojiCodeForName(name)!, `:${name}:`);
  },
};

export const emoji: Pattern = {
  re: /:[\p{L}\p{N}_\-+]+:/gu,
  kind: 'first',
  handle: (m, s) => {
    const name = m[0].slice(1, -1);
    const custom = s.ctx.realmEmoji.get(name);
    if (custom !== undefined) return imageEmojiEl(custom, m[0]);
    if (name === 'zulip')
      return imageEmojiEl('/static/generated/emoji/images/emoji/unicode/zulip.png', m[0]);
    const code = emojiCodeForName(name);
    return code ? emojiEl(code, m[0]) : { literal: m[0] };
  },
};

const MOD = `(?:\\p{Emoji_Modifier}|\\uFE0F\\u20E3?|[\\u{E0020}-\\u{E007E}]+\\u{E007F})`;
export const unicodeEmoji: Pattern = {
  re: new RegExp(
    `\\p{Regional_Indicator}\\p{Regional_Indicator}|\\p{Emoji}${MOD}?(?:\\u200D(?:\\p{Regional_Indicator}\\p{Regional_Indicator}|\\p{Emoji}${MOD}?))*`,
    'gu',
  ),
  kind: 'search',
  handle: (m) => {
    if (/^\P{Emoji_Presentation}\u20E3?$/u.test(m[0])) return null;
    const code = emojiCodeOf(m[0]);
    const name = emojiNameForCode(code);
    return name ? emojiEl(code, `:${name}:`) : null;
  },
};
