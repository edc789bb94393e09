/**
 * Full-text search (`search:` narrows) over SQLite FTS5: the query language, the text that is
 * indexed, and the highlighting of matches (`match_content`, `match_subject`).
 *
 * The index (migration 0005) holds each message's topic and the text of its rendered HTML,
 * tokenized by FTS5's `unicode61` tokenizer with diacritics removed: a word is a run of letters
 * and digits, compared without case or accents. A search operand is a list of words and
 * "quoted phrases"; a message matches when it has every phrase, and for each word a word that
 * starts with it ("rend" finds "rendering"). Highlighting applies the same rule to the words of
 * the rendered HTML's text (never inside tags or entities).
 */
import { JsonableError } from './errors.js';
import { MAX_SEARCH_TERMS } from './limits.js';

/** A word as the tokenizer sees it (letters, digits, private-use characters). */
const WORD = /[\p{L}\p{N}\p{Co}]+/gu;

/** Lower case without accents, as the index compares words. */
export function foldWord(word: string): string {
  return word
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

function wordsOf(text: string): string[] {
  return (text.match(WORD) ?? []).map(foldWord).filter((w) => w !== '');
}

export type SearchQuery = {
  /** The FTS5 MATCH expression (only letters, digits, quotes, `*` and spaces). */
  fts: string;
  /** Folded words that highlight a word of the content starting with them. */
  prefixes: string[];
};

/**
 * The FTS5 query for a search operand, or null when it has no words at all (such a search
 * matches nothing, as an empty full-text query does in the reference). A word or phrase given
 * twice is asked for once; more than MAX_SEARCH_TERMS different ones are refused (400).
 */
export function parseSearch(operand: string): SearchQuery | null {
  const parts = new Set<string>();
  const prefixes: string[] = [];
  for (const m of operand.matchAll(/"[^"]+"|\S+/g)) {
    const term = m[0];
    if (term.length > 1 && term.startsWith('"') && term.endsWith('"')) {
      const words = wordsOf(term.slice(1, -1));
      if (words.length === 0) continue;
      parts.add(`"${words.join(' ')}"`);
      prefixes.push(...words);
    } else {
      for (const w of wordsOf(term)) {
        parts.add(`"${w}"*`);
        prefixes.push(w);
      }
    }
  }
  if (parts.size > MAX_SEARCH_TERMS) {
    throw new JsonableError(
      `Too many words in search: ${parts.size} (at most ${MAX_SEARCH_TERMS} are allowed)`,
    );
  }
  if (parts.size === 0) return null;
  return { fts: [...parts].join(' '), prefixes: [...new Set(prefixes)] };
}

const HIGHLIGHT_START = '<span class="highlight">';
const HIGHLIGHT_STOP = '</span>';

function highlightText(text: string, prefixes: readonly string[]): string {
  return text.replace(WORD, (word) => {
    const folded = foldWord(word);
    return prefixes.some((p) => folded.startsWith(p))
      ? HIGHLIGHT_START + word + HIGHLIGHT_STOP
      : word;
  });
}

/**
 * `html` with every matching word wrapped in `<span class="highlight">`. Tags and character
 * references are copied unchanged; only text between them is searched for words.
 */
export function highlightHtml(html: string, prefixes: readonly string[]): string {
  if (prefixes.length === 0) return html;
  let out = '';
  let i = 0;
  while (i < html.length) {
    const c = html[i];
    if (c === '<') {
      const end = html.indexOf('>', i);
      const stop = end < 0 ? html.length : end + 1;
      out += html.slice(i, stop);
      i = stop;
    } else if (c === '&') {
      const end = html.indexOf(';', i);
      const stop = end < 0 || end - i > 12 ? i + 1 : end + 1;
      out += html.slice(i, stop);
      i = stop;
    } else {
      let j = i;
      while (j < html.length && html[j] !== '<' && html[j] !== '&') j++;
      out += highlightText(html.slice(i, j), prefixes);
      i = j;
    }
  }
  return out;
}

const ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
};

/** The text of rendered HTML (what is indexed): tags removed, character references decoded. */
export function htmlToText(html: string): string {
  return html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (m, e: string) => {
      if (e[0] === '#') {
        const cp =
          e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : ' ';
      }
      return ENTITIES[e.toLowerCase()] ?? m;
    });
}
