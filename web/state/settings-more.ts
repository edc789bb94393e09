/**
 * What the settings panels of web/app/settings-more.tsx compute, framework-free: the user's alert
 * words (read from a form, and found in a message's text as the reference's web app finds them),
 * the user's uploads (kept by `attachment` events, filtered, sorted, their sizes and the realm's
 * quota in words), an example of each linkifier (a text it links, and the link), the default
 * channels' rows, those that can be added and what adding several said, the code playgrounds' rows.
 */
import { expandUriTemplate, parseUriTemplate } from '../../src/lib/markdown/uri-template.js';
import { sizeText } from './format.js';

// ---- Alert words -------------------------------------------------------------------------

/**
 * The words typed in the add form: one or several, separated by commas or lines; trimmed, empty
 * ones and repeats (whatever their case) dropped, as the server would.
 */
export function parseAlertWords(input: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of input.split(/[,\n]/)) {
    const w = raw.trim();
    if (w === '' || seen.has(w.toLowerCase())) continue;
    seen.add(w.toLowerCase());
    out.push(w);
  }
  return out;
}

/** The list as shown: alphabetically, whatever the case. */
export function sortedAlertWords(words: readonly string[]): string[] {
  return [...words].sort(
    (a, b) => a.localeCompare(b, undefined, { sensitivity: 'base' }) || a.localeCompare(b),
  );
}

/**
 * Characters that may stand before and after an alert word for it to count as a word (the
 * reference's client: white space, the start or end of the text, and some punctuation).
 */
const BEFORE = /[\s(".,';[*`>]/;
const AFTER = /[\s)"?!:.,';\]*`<]/;

/**
 * Where the user's alert words occur in a text, whole words and whatever the case: sorted,
 * non-overlapping `[start, end)` ranges (at one place, the longest word wins).
 */
export function alertWordRanges(text: string, words: readonly string[]): [number, number][] {
  const lower = text.toLowerCase();
  const found: [number, number][] = [];
  for (const word of words) {
    const w = word.trim().toLowerCase();
    // A word whose lower case has another length would give wrong offsets: none of those.
    if (w === '' || w.length !== word.trim().length) continue;
    for (let at = lower.indexOf(w); at >= 0; at = lower.indexOf(w, at + 1)) {
      const end = at + w.length;
      const before = at === 0 || BEFORE.test(text[at - 1]!);
      const after = end === text.length || AFTER.test(text[end]!);
      if (before && after) found.push([at, end]);
    }
  }
  found.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const out: [number, number][] = [];
  for (const r of found) {
    const last = out[out.length - 1];
    if (last && r[0] < last[1]) continue;
    out.push(r);
  }
  return out;
}

/**
 * Whether a text node under `tags` (the element names and classes from it up to the message's
 * content, innermost first) may be highlighted: not in a link, code, a mention, a math formula
 * or a highlight already there.
 */
export function alertWordsMayMark(tags: readonly { name: string; classes: string }[]): boolean {
  return !tags.some(
    (t) =>
      ['a', 'code', 'pre', 'script', 'style'].includes(t.name.toLowerCase()) ||
      /(^|\s)(user-mention|user-group-mention|topic-mention|alert-word|katex|emoji|highlight)(\s|$)/.test(
        t.classes,
      ),
  );
}

// ---- Uploaded files ----------------------------------------------------------------------

// Kept by the chat state from the first load (uploads.ts); the panel's own parts follow.
export {
  applyAttachmentEvent,
  type Attachment,
  type AttachmentEvent,
  type Uploads,
} from './uploads.js';
import type { Attachment } from './uploads.js';

/** The uploads shown: those whose name has the filter's words (any case), newest first. */
export function attachmentRows(list: readonly Attachment[], filter: string): Attachment[] {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  return list
    .filter((a) => words.every((w) => a.name.toLowerCase().includes(w)))
    .sort((a, b) => b.create_time - a.create_time || b.id - a.id);
}

/**
 * What the organization's uploads take: the whole when there is no quota (null), else the part
 * of the quota (MiB) used.
 */
export function quotaText(used: number, quotaMib: number | null): string {
  if (quotaMib === null || quotaMib <= 0)
    return `The organization’s uploads take ${sizeText(used)}.`;
  const quota = quotaMib * 1024 * 1024;
  const pct = Math.min(100, Math.round((used / quota) * 100));
  return `The organization’s uploads take ${sizeText(used)} of its ${sizeText(quota)} (${pct}%).`;
}

// ---- Linkifiers --------------------------------------------------------------------------

export type Linkifier = { id: number; pattern: string; url_template: string };

/** A pattern's named groups as JavaScript writes them (`(?P<name>` is Python's and RE2's). */
export function jsPattern(pattern: string): RegExp | null {
  try {
    return new RegExp(pattern.replace(/\(\?P</g, '(?<'), 'u');
  } catch {
    return null;
  }
}

/** A sample text for a group's body (a character class or an escape, repeated), or null. */
function sampleOf(body: string): string | null {
  const b = body.replace(/[+*]$|\{\d+(,\d*)?\}$/, '');
  if (/^(\\d|\[0-9\])$/.test(b)) return '123';
  if (/^\[[^\]]*0-9[^\]]*\]$/.test(b)) return /a-z|A-Z|\\w/.test(b) ? 'a1' : '123';
  if (/^(\\w|\[[^\]]*(a-z|A-Z)[^\]]*\])$/.test(b)) return /a-z|\\w/.test(b) ? 'abc' : 'ABC';
  if (/^\[\^[^\]]+\]$/.test(b) || b === '.' || b === '\\S') return 'abc';
  return null;
}

/** The template with the groups' values (RFC 6570 level 1 and 2: `{name}` and `{+name}`). */
export function expandTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\+?)([A-Za-z0-9_]+)\}/g, (_, reserved: string, name: string) => {
    const v = values[name] ?? '';
    return reserved ? encodeURI(v) : encodeURIComponent(v);
  });
}

/**
 * An example of what a linkifier does: a text its pattern matches and the link it makes, for
 * patterns of literal text and named groups of simple classes (`\d+`, `[a-z0-9]+`…); null for
 * others (the list then shows none).
 */
export function linkifierExample(l: Pick<Linkifier, 'pattern' | 'url_template'>): {
  text: string;
  url: string;
} | null {
  let failed = false;
  const text = l.pattern
    .replace(/\(\?P?<[A-Za-z0-9_]+>((?:\\.|\[(?:\\.|[^\]])*\]|[^()])*)\)/g, (_, body: string) => {
      const s = sampleOf(body);
      if (s === null) failed = true;
      return s ?? '';
    })
    .replace(/\\b|\^|\$/g, '')
    .replace(/\\([^A-Za-z0-9])/g, '$1');
  if (failed || /[\\()[\]|?*+{}]/.test(text) || text === '') return null;
  const re = jsPattern(l.pattern);
  const m = re?.exec(text);
  if (!m || m[0] !== text) return null;
  return { text, url: expandTemplate(l.url_template, { ...m.groups }) };
}

/** The ids in a new order: `id` moved by `by` places (-1 up, 1 down), or null at an end. */
export function moved(ids: readonly number[], id: number, by: -1 | 1): number[] | null {
  const at = ids.indexOf(id);
  const to = at + by;
  if (at < 0 || to < 0 || to >= ids.length) return null;
  const out = [...ids];
  out[at] = ids[to]!;
  out[to] = id;
  return out;
}

// ---- Default channels and code playgrounds -----------------------------------------------

export type ChannelLike = {
  stream_id: number;
  name: string;
  invite_only?: boolean;
  is_archived?: boolean;
};

/** The default channels the user can see, by name (ids of channels not known are left out). */
export function defaultChannelRows<C extends ChannelLike>(
  ids: readonly number[],
  channels: ReadonlyMap<number, C>,
): C[] {
  return ids
    .map((id) => channels.get(id))
    .filter((c): c is C => c !== undefined)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The channels the picker offers: not default yet, not archived, not private (the server refuses
 * those, "Private channels cannot be made default.", and the reference's "Add default channels"
 * leaves them out), by name.
 */
export function addableChannels<C extends ChannelLike>(
  ids: readonly number[],
  channels: ReadonlyMap<number, C>,
): C[] {
  const taken = new Set(ids);
  return [...channels.values()]
    .filter((c) => !taken.has(c.stream_id) && c.is_archived !== true && c.invite_only !== true)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** What adding channels did, said once: "#a is now a default channel.", "#a and #b are now…". */
export function defaultChannelsAdded(names: readonly string[]): string {
  const tags = names.map((n) => `#${n}`);
  if (tags.length <= 1) return `${tags[0] ?? 'No channel'} is now a default channel.`;
  return `${tags.slice(0, -1).join(', ')} and ${tags[tags.length - 1]} are now default channels.`;
}

export type Playground = {
  id: number;
  name: string;
  pygments_language: string;
  url_template: string;
};

/**
 * The playgrounds a code block in `language` (its `data-code-language`, the renderer's name for
 * it, as "Python") may open, by name; the language compared without regard to case.
 */
export function playgroundsFor(list: readonly Playground[], language: string): Playground[] {
  const lang = language.toLowerCase();
  return list
    .filter((p) => p.pygments_language.toLowerCase() === lang)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * A playground's URL for a code block's code: its template expanded with the code (RFC 6570, as
 * the reference's web app does: `{code}` percent-encoded, `{+code}` keeping reserved characters),
 * or null where that is not an http(s) URL: an administrator's template never makes a link that
 * runs script or opens a local scheme.
 */
export function playgroundUrl(template: string, code: string): string | null {
  let url: string;
  try {
    url = expandUriTemplate(parseUriTemplate(template), { code });
  } catch {
    return null;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? url : null;
}

/** The playgrounds by language, then name. */
export function playgroundRows(list: readonly Playground[]): Playground[] {
  return [...list].sort(
    (a, b) =>
      a.pygments_language.localeCompare(b.pygments_language) ||
      a.name.localeCompare(b.name) ||
      a.id - b.id,
  );
}
