/**
 * Linkifiers: realm patterns (Python regular expressions) that turn matching text into links
 * built from an RFC 6570 URL template. Validation (for the API), compilation (cached by
 * pattern + template), and `topic_links` (links in a topic name, which also include bare URLs).
 */
import type { RenderLinkifier } from './context.js';
import { LinearRegExp, re2Error } from './linear-regex.js';
import { PatternError, translatePythonRegex } from './regex.js';
import {
  parseUriTemplate,
  TemplateError,
  expandUriTemplate,
  templateVariables,
} from './uri-template.js';
import { WEB_LINK_RE } from './urls.js';

export const BEFORE_GROUP = 'linkifier_before_match';
export const OUTER_GROUP = 'linkifier_actual_match';
export const AFTER_GROUP = 'linkifier_after_match';

export type CompiledLinkifier = {
  id: number;
  /**
   * Global, with match indices: search with lastIndex. Linear in its input (RE2): a pattern is a
   * user's, and a backtracking engine can take polynomial or exponential time on some.
   */
  re: LinearRegExp;
  expand(groups: Record<string, string | undefined>): string;
};

/** A linkifier that the API refuses, with the field the reference files the error under. */
export class LinkifierError extends Error {
  constructor(
    msg: string,
    readonly field: 'pattern' | 'url_template' | '__all__',
  ) {
    super(msg);
  }
}

/**
 * Checks a pattern and URL template as the reference does: the pattern must compile, the
 * template must be valid, and the template's variables must be exactly the pattern's named
 * groups. Throws LinkifierError with the reference's message.
 */
export function validateLinkifier(pattern: string, urlTemplate: string): void {
  if (pattern === '') throw new LinkifierError('This field cannot be blank.', 'pattern');
  if (urlTemplate === '') throw new LinkifierError('This field cannot be blank.', 'url_template');
  let groups: string[];
  try {
    const t = translatePythonRegex(pattern);
    groups = t.groupNames;
    // What RE2 (the engine that runs it) refuses is refused, with RE2's reason, as the reference.
    const refused = re2Error(t.source, t.flags);
    if (refused !== null) throw new PatternError(`Bad regular expression: ${refused}`);
  } catch (err) {
    if (err instanceof PatternError) throw new LinkifierError(err.message, '__all__');
    throw err;
  }
  let vars: string[];
  try {
    vars = templateVariables(urlTemplate);
  } catch (err) {
    if (err instanceof TemplateError) throw new LinkifierError(err.message, 'url_template');
    throw err;
  }
  const missingInPattern = vars.filter((v) => !groups.includes(v)).sort();
  if (missingInPattern.length > 0)
    throw new LinkifierError(
      `Group '${missingInPattern[0]!}' in URL template is not present in linkifier pattern.`,
      '__all__',
    );
  const missingInTemplate = groups.filter((g) => !vars.includes(g)).sort();
  if (missingInTemplate.length > 0)
    throw new LinkifierError(
      `Group '${missingInTemplate[0]!}' in linkifier pattern is not present in URL template.`,
      '__all__',
    );
}

const cache = new Map<string, CompiledLinkifier | null>();

/**
 * The compiled form of a linkifier: the pattern wrapped so it matches only after the start,
 * whitespace or an opening delimiter, and only when no letter or digit follows. null for a
 * linkifier that does not compile (stored before a rule changed): it is skipped.
 */
export function compileLinkifier(l: RenderLinkifier): CompiledLinkifier | null {
  const key = `${l.pattern}\u0000${l.url_template}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit ? { ...hit, id: l.id } : null;
  let compiled: CompiledLinkifier | null;
  try {
    const t = translatePythonRegex(l.pattern);
    const parts = parseUriTemplate(l.url_template);
    const re = new LinearRegExp(
      `(?<${BEFORE_GROUP}>^|\\s|\\x{85}|\\p{Z}|['"(,:<])(?<${OUTER_GROUP}>${t.source})(?<${AFTER_GROUP}>$|[^\\p{L}\\p{N}])`,
      t.flags,
    );
    compiled = { id: l.id, re, expand: (groups) => expandUriTemplate(parts, groups) };
  } catch {
    compiled = null;
  }
  if (cache.size > 5000) cache.clear();
  cache.set(key, compiled);
  return compiled;
}

export type TopicLink = { url: string; text: string };

type TopicMatch = { url: string; text: string; index: number; precedence: number | null };

/** Characters that split a topic into the pieces searched for bare URLs. */
const TOPIC_SPLITTER = /[ !;),'"]/g;

/**
 * The `topic_links` of a topic name: linkifier matches (earlier linkifiers win overlaps) and bare
 * URLs (scheme-less ones get https://), in order of position.
 */
export function topicLinks(topic: string, linkifiers: readonly RenderLinkifier[]): TopicLink[] {
  const matches: TopicMatch[] = [];
  linkifiers.forEach((l, precedence) => {
    const c = compileLinkifier(l);
    if (!c) return;
    const re = c.re;
    let pos = 0;
    while (pos < topic.length) {
      re.lastIndex = pos;
      const m = re.exec(topic);
      if (!m) break;
      const groups = m.groups ?? {};
      const after = groups[AFTER_GROUP] ?? '';
      const next = m.index + m[0].length - after.length;
      matches.push({
        url: c.expand(groups),
        text: groups[OUTER_GROUP] ?? '',
        index: m.index,
        precedence,
      });
      pos = next > pos ? next : pos + 1;
    }
  });
  matches.sort((a, b) => a.precedence! - b.precedence! || a.index - b.index);

  let pos = 0;
  while (pos < topic.length) {
    TOPIC_SPLITTER.lastIndex = pos;
    const split = TOPIC_SPLITTER.exec(topic);
    const end = split ? split.index : topic.length;
    const segment = topic.slice(pos, end);
    WEB_LINK_RE.lastIndex = 0;
    const m = WEB_LINK_RE.exec(segment);
    if (m) {
      const found = m.groups!.url!;
      let url = found;
      if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(found)) url = 'https://' + found;
      matches.push({ url, text: found, index: pos, precedence: null });
    }
    pos = end + 1;
  }

  const overlaps = (a: TopicMatch, b: TopicMatch) =>
    (b.index <= a.index && a.index < b.index + b.text.length) ||
    (a.index <= b.index && b.index < a.index + a.text.length);
  const applied: TopicMatch[] = [];
  for (const m of matches) if (applied.every((o) => !overlaps(o, m))) applied.push(m);
  applied.sort((a, b) => a.index - b.index);
  return applied.map((m) => ({ url: m.url, text: m.text }));
}

export { PatternError, TemplateError };
